package progress

import (
	"context"
	"strings"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/store"
)

// final delivers the answer (or failure sentence) that ends the run,
// after the subagents' replies have shown their outcome.
func (d *Delivery) final(ctx context.Context, text string, failed bool) {
	answer := !failed
	if d.opts.OnFinal != nil {
		d.opts.OnFinal()
	}
	d.stopTyping()
	d.finishTasks()
	if !d.stream {
		d.finishChecklist()
	}
	defer d.sendFiles(ctx)
	if d.stream {
		o := d.out(bus.OutMessage, text)
		if d.streamed && !failed {
			o.Kind = bus.OutDelta // the text is already on screen; just end it
			o.Text = ""
		}
		o.Final, o.Failed = true, failed
		d.streamed = false
		d.sendFinal(ctx, o, answer)
		return
	}
	id := d.main.halt()
	d.mu.Lock()
	if failed && id != "" {
		// What the progress message showed stays above the failure.
		shown := d.status
		if t := strings.TrimSpace(d.text.String()); t != "" {
			shown = strings.TrimSpace(shown + "\n\n" + t)
		}
		if shown != "" {
			text = shown + "\n\n" + text
		}
	}
	text = prefaced(d.preface, text)
	d.mu.Unlock()
	o := d.out(bus.OutMessage, text)
	if id != "" {
		o.Kind, o.EditID = bus.OutEdit, id
	}
	o.Final, o.Failed = true, failed
	if answer {
		o.Buttons = d.buttons(text)
	}
	d.sendFinal(ctx, o, answer)
}

// Preface puts line above everything the run shows, in the progress
// message and the answer (not in the conversation's history): what a
// voice note was heard to say. Channels that stream the answer as it
// comes don't show it.
func (d *Delivery) Preface(line string) {
	if d.main == nil {
		return
	}
	d.update(func() { d.preface = line })
}

// prefaced puts the preface, when there is one, above text.
func prefaced(preface, text string) string {
	if preface == "" {
		return text
	}
	return preface + "\n\n" + text
}

// sendFinal sends the message that ends the run. The answer's outbox
// record was written with the answer itself (see answerTx); it is cleared
// once the run has ended, when that commit has surely landed.
func (d *Delivery) sendFinal(ctx context.Context, o *bus.Outbound, answer bool) {
	held := answer && d.answerHeld
	ids, sent, err := d.ob.Deliver(ctx, d.key, o, outbox.SendOpts{Held: held})
	if held && err == nil {
		d.mu.Lock()
		d.answerOut, d.answerIDs = sent, ids
		d.mu.Unlock()
	}
}

// answerTx records the answer in the outbox inside the transaction that
// stores it (agent.Input.OnAnswer), so a crash at any point leaves either
// no answer or an answer that will be delivered. The record targets the
// progress message when it exists.
func (d *Delivery) answerTx(tx *store.Tx, answer string) error {
	d.mu.Lock()
	o := d.out(bus.OutMessage, prefaced(d.preface, answer))
	if d.main != nil && d.main.msgID != "" {
		o.Kind, o.EditID = bus.OutEdit, d.main.msgID
	}
	d.mu.Unlock()
	o.Final = true
	if err := d.choiceTx(tx, o); err != nil {
		return err
	}
	rec := outbox.NewRecord(d.key, "", o, d.now())
	seq, err := d.ob.HoldTx(tx, rec)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.answerSeq != 0 && d.answerSeq != seq {
		d.ob.Release(d.answerSeq) // an earlier attempt of this transaction
	}
	d.answerSeq, d.answerRec = seq, rec
	d.mu.Unlock()
	return nil
}

// AnswerTx is the function that records the answer in the outbox inside
// the transaction that stores it (for agent.Input.OnAnswer); nil when the
// answer is not recorded (the channel streams it). Call Settle once the
// run has ended.
func (d *Delivery) AnswerTx() func(*store.Tx, string) error {
	if !d.answerHeld {
		return nil
	}
	return d.answerTx
}

// previewTx runs in the transaction that maps the progress message's id:
// the id is known to answerTx from then on, and an answer recorded before
// it is turned into an edit of that message. (Write transactions run one
// at a time, so one of the two always sees the other.) After a crash the
// answer then replaces the progress message instead of joining it.
func (d *Delivery) previewTx(tx *store.Tx, ids []string) error {
	d.mu.Lock()
	d.main.msgID = ids[0]
	seq := d.answerSeq
	o := d.answerRec
	d.mu.Unlock()
	if seq == 0 || o == nil {
		return nil
	}
	o.Kind, o.EditID = bus.OutEdit, ids[0]
	return outbox.ReplaceTx(tx, seq, o)
}

// Settle clears the answer's outbox record once the run has ended:
// the answer was delivered, or there was none. Otherwise the record stays
// for the replay.
func (d *Delivery) Settle() {
	d.mu.Lock()
	seq, out, ids := d.answerSeq, d.answerOut, d.answerIDs
	d.mu.Unlock()
	if seq == 0 {
		return
	}
	if out == nil {
		d.ob.Release(seq)
		return
	}
	d.ob.Confirm(seq, out, d.key, ids, nil)
}
