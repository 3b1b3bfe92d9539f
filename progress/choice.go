package progress

import (
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// clarify keeps a question's options, to offer them as buttons under the
// answer that asks it. Only where the answer is recorded with the run's
// last commit (not on the terminal, which shows the numbered list).
func (d *Delivery) clarify(ev event.Clarification) {
	if len(ev.Options) == 0 || !d.answerHeld {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.choice = &choice.Record{
		ID: choice.NewID(), Kind: choice.Clarify, ChatKey: d.key, UserID: d.in.UserID,
		Group: d.in.Group, Text: "❓ " + ev.Question, Options: ev.Options, Replies: ev.Replies, Created: d.now(),
	}
	d.choiceSaved, d.choiceKeep = false, ev.Keep
}

// choiceTx stores the clarification's choice in the transaction that
// stores the answer asking it, and puts its buttons on o: the question and
// its pending state are durable exactly when the answer is.
func (d *Delivery) choiceTx(tx *store.Tx, o *bus.Outbound) error {
	d.mu.Lock()
	rec := d.choice
	if rec != nil && d.choiceKeep {
		rec.Text = o.Text
	}
	d.mu.Unlock()
	if rec == nil {
		// The run asked nothing (yet): earlier questions are past.
		return choice.SetOpenTx(tx, d.key, "")
	}
	if err := choice.PutTx(tx, rec); err != nil {
		return err
	}
	if err := choice.SetOpenTx(tx, d.key, rec.ID); err != nil {
		return err
	}
	o.Buttons = rec.Buttons()
	d.mu.Lock()
	d.choiceSaved = true
	d.mu.Unlock()
	return nil
}

// buttons are those of the choice for the final answer, if any. The
// event may follow the commit of the answer (events reach the delivery
// after they are journaled); the choice is then stored now, and only the
// replay of an answer lost in a crash would show the numbered list alone.
func (d *Delivery) buttons(text string) [][]bus.Button {
	d.mu.Lock()
	rec, saved := d.choice, d.choiceSaved
	if rec != nil && d.choiceKeep && !saved {
		rec.Text = text
	}
	d.mu.Unlock()
	if rec == nil {
		return nil
	}
	if !saved {
		if d.opts.Store == nil {
			return nil
		}
		err := d.opts.Store.Update(func(tx *store.Tx) error {
			if err := choice.PutTx(tx, rec); err != nil {
				return err
			}
			return choice.SetOpenTx(tx, d.key, rec.ID)
		})
		if err != nil {
			d.log.ErrorContext(d.ctx, "storing a question's options; showing them without buttons", "err", err)
			return nil
		}
	}
	return rec.Buttons()
}
