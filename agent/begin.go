package agent

import (
	"errors"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent/repair"
	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/store"
)

// begin loads the thread and its history (repairing it where a crash left
// tool calls unanswered) and starts recording the user's message and the
// run. That write commits while the first model request is under way; every
// later write waits for it (see r.pending).
func (r *run) begin() error {
	a, in := r.a, r.in
	now := a.opts.Now()
	msgs, err := r.load(now)
	if err != nil {
		return err
	}
	r.summary = r.thread.Summary
	if r.overBudget() {
		if in.OnBegin != nil { // the message is handled: by saying no
			r.write(in.OnBegin)
			if err := r.wait(); err != nil {
				return err
			}
		}
		return errBudget
	}
	name := in.Model // then the thread's /models choice, the persona's, the default
	if name == "" {
		name = r.thread.Model
	}
	if name == "" && in.Persona != nil {
		name = in.Persona.Model
	}
	r.model, _ = a.Model(name)
	r.ar.model = r.model.Name

	msgs, fix := r.repair(msgs)
	user := &store.Message{Role: "user", Content: in.Text, RunID: in.RunID, Time: now}
	r.userIdx = len(msgs)
	r.history = append(msgs, user)
	if a.opts.TurnContext != nil {
		r.turnCtx = strings.TrimSpace(a.opts.TurnContext(r.ctx, in))
	}
	r.thread.Updated = now
	r.rec = &store.Run{
		ID: in.RunID, ThreadID: in.ThreadID, ChatKey: in.ChatKey, Model: r.model.Name,
		Status: store.RunRunning, Started: now, MessageID: in.MessageID, UserID: in.UserID,
	}
	r.record(fix, user)
	return nil
}

// load reads the thread (a new one when it has none), the conversation's
// tokens today when there is a budget, and the history (from the cache when
// it holds it). A new thread is created at now.
func (r *run) load(now time.Time) ([]*store.Message, error) {
	a, in := r.a, r.in
	var msgs []*store.Message
	if a.opts.Ephemeral {
		r.thread = &store.Thread{ID: in.ThreadID, ChatKey: in.ChatKey, Created: now}
	}
	err := a.opts.Store.View(func(tx *store.Tx) error {
		if a.opts.Ephemeral {
			return nil
		}
		t, err := tx.Thread(in.ThreadID)
		if errors.Is(err, store.ErrNotFound) {
			t = &store.Thread{ID: in.ThreadID, ChatKey: in.ChatKey, Created: now}
		} else if err != nil {
			return err
		}
		r.thread = t
		if a.opts.DailyTokenBudget > 0 {
			if r.daily, err = tokens.ReadDaily(tx, in.ChatKey); err != nil {
				return err
			}
		}
		if cached, ok := a.history.Get(in.ThreadID); ok {
			msgs = cached
			return nil
		}
		msgs, err = tx.Messages(in.ThreadID, t.SummarySeq)
		return err
	})
	return msgs, err
}

// historyFix is a repair of the stored history: the messages from seq on
// are replaced by tail. The zero value repairs nothing.
type historyFix struct {
	needed bool
	seq    uint64
	tail   []*store.Message
}

// repair returns msgs with what a crash left unanswered repaired (see
// repair.History), and the fix to store.
func (r *run) repair(msgs []*store.Message) ([]*store.Message, historyFix) {
	from, tail := repair.History(msgs)
	if from >= len(msgs) && len(tail) == 0 {
		return msgs, historyFix{}
	}
	fix := historyFix{needed: true, seq: 1, tail: tail}
	if from < len(msgs) {
		fix.seq = msgs[from].Seq
	} else if len(msgs) > 0 {
		fix.seq = msgs[len(msgs)-1].Seq + 1
	}
	r.a.log.InfoContext(r.ctx, "repairing thread history", "thread", r.in.ThreadID, "from_seq", fix.seq, "messages", len(tail))
	return append(msgs[:from:from], tail...), fix
}

// record starts the begin commit: the history's fix, the user's message,
// the input's OnBegin, the thread and the run record.
func (r *run) record(fix historyFix, user *store.Message) {
	in := r.in
	thread, rec := *r.thread, *r.rec
	r.write(func(tx *store.Tx) error {
		if fix.needed {
			if err := tx.ReplaceMessagesFrom(in.ThreadID, fix.seq, fix.tail...); err != nil {
				return err
			}
		}
		if err := tx.AppendMessages(in.ThreadID, user); err != nil {
			return err
		}
		if in.OnBegin != nil {
			if err := in.OnBegin(tx); err != nil {
				return err
			}
		}
		cur, err := tx.Thread(in.ThreadID) // others may have changed it (title, model)
		if errors.Is(err, store.ErrNotFound) {
			cur = &thread
		} else if err != nil {
			return err
		}
		cur.Updated = thread.Updated
		if err := tx.PutThread(cur); err != nil {
			return err
		}
		rec.FirstSeq = user.Seq
		return tx.PutRun(&rec)
	})
}
