package bus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// The outbox: every send that matters after a crash (an answer, a command's
// reply, a file, a subagent's outcome, a notice) is recorded in the store
// before it is attempted and cleared when the platform confirms it. What is
// left (the process died mid-send, or the platform kept failing) is sent
// again by ReplayOutbox at start, and while running by a retry loop with a
// growing pause (5 s, 10 s, 20 s, … up to 10 minutes). Streamed previews
// and typing are not recorded: after a restart they no longer matter, and
// the final version replaces them.
//
// Delivery is at least once: a crash between the platform's confirmation
// and the clearing commit sends that message again after the restart. An
// edit (the usual form of an answer) is idempotent, so only a new message
// can show twice.
const (
	// outboxMaxAge is how long an unconfirmed send stays worth sending.
	outboxMaxAge = 24 * time.Hour
	// outboxMaxAttempts is how many replays a send gets before it is
	// dropped (and logged): with the pauses below, a platform may be
	// unreachable for about two and a half hours.
	outboxMaxAttempts = 20
	// outboxRetryEvery is how often the retry loop looks for sends due.
	outboxRetryEvery = 5 * time.Second
	// outboxMaxPause caps the pause between two attempts of a send.
	outboxMaxPause = 10 * time.Minute
)

// outRecord is an Outbound as the outbox keeps it.
type outRecord struct {
	ChatKey  string    `json:"chat"`
	ThreadID string    `json:"thread,omitempty"` // OutFile: whose outputs hold File
	Kind     OutKind   `json:"kind"`
	Channel  string    `json:"channel"`
	ChatID   string    `json:"chat_id"`
	Topic    string    `json:"topic,omitempty"`
	ReplyTo  string    `json:"reply_to,omitempty"`
	EditID   string    `json:"edit_id,omitempty"`
	Text     string    `json:"text,omitempty"`
	Failed   bool      `json:"failed,omitempty"`
	Task     string    `json:"task,omitempty"`
	File     string    `json:"file,omitempty"` // OutFile: the virtual path
	Created  time.Time `json:"created"`
	Attempts int       `json:"attempts,omitempty"`
	Tried    time.Time `json:"tried,omitzero"` // the last failed replay
}

// due reports whether the retry loop should try rec again: 5 s after it
// was recorded (the first send failed, or its process died), then after
// pauses doubling with each failed replay.
func (r *outRecord) due(now time.Time) bool {
	base := r.Created
	if !r.Tried.IsZero() {
		base = r.Tried
	}
	pause := outboxRetryEvery << min(r.Attempts, 10)
	return now.Sub(base) >= min(pause, outboxMaxPause)
}

func newRecord(chatKey, threadID string, out *Outbound, now time.Time) *outRecord {
	r := &outRecord{ChatKey: chatKey, ThreadID: threadID, Kind: out.Kind, Channel: out.Channel,
		ChatID: out.ChatID, Topic: out.Topic, ReplyTo: out.ReplyTo, EditID: out.EditID,
		Text: out.Text, Failed: out.Failed, Task: out.Task, Created: now}
	if out.File != nil {
		r.File = out.File.Path
	}
	return r
}

func (r *outRecord) outbound() *Outbound {
	return &Outbound{Kind: r.Kind, Channel: r.Channel, ChatID: r.ChatID, Topic: r.Topic,
		ReplyTo: r.ReplyTo, EditID: r.EditID, Text: r.Text, Final: true, Failed: r.Failed, Task: r.Task}
}

// durable reports whether out is recorded in the outbox before it is sent.
func durable(out *Outbound) bool {
	switch out.Kind {
	case OutMessage, OutEdit:
		return out.Final
	case OutFile:
		return true
	}
	return false
}

// hold records out in the outbox and marks it in flight; 0 when it is not
// durable or could not be recorded (it is sent anyway).
func (b *Bus) hold(chatKey, threadID string, out *Outbound) uint64 {
	if !durable(out) {
		return 0
	}
	data, err := json.Marshal(newRecord(chatKey, threadID, out, b.opts.Now()))
	if err != nil {
		return 0
	}
	var seq uint64
	err = b.opts.Store.Batch(func(tx *store.Tx) error {
		var err error
		seq, err = b.holdTx(tx, data)
		return err
	})
	if err != nil {
		b.log.Error("recording a send in the outbox", "chat", chatKey, "err", err)
		return 0
	}
	return seq
}

// holdTx records an encoded send inside tx and marks it in flight, so the
// replay leaves it to its sender.
func (b *Bus) holdTx(tx *store.Tx, data []byte) (uint64, error) {
	seq, err := tx.PutOutbox(data)
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	b.inflight[seq] = true
	b.mu.Unlock()
	return seq, nil
}

// release ends a send's flight; the record stays for the replay unless
// confirm clears it.
func (b *Bus) release(seq uint64) {
	if seq == 0 {
		return
	}
	b.mu.Lock()
	delete(b.inflight, seq)
	b.mu.Unlock()
}

// confirm clears the outbox record seq (0: none) and maps the ids the
// platform gave to the conversation, so replies to them continue it, in
// one transaction, which also runs onTx (if set) with the ids.
func (b *Bus) confirm(seq uint64, out *Outbound, chatKey string, ids []string, onTx func(*store.Tx, []string) error) {
	defer b.release(seq)
	if out.Kind == OutEdit && len(ids) == 1 && ids[0] == out.EditID {
		ids = nil // already mapped when it was first sent
	}
	if out.Kind == OutDelta || out.Kind == OutActivity {
		ids = nil
	}
	if seq == 0 && len(ids) == 0 {
		return
	}
	err := b.opts.Store.Batch(func(tx *store.Tx) error {
		if onTx != nil && len(ids) > 0 {
			if err := onTx(tx, ids); err != nil {
				return err
			}
		}
		if seq != 0 {
			if err := tx.DeleteOutbox(seq); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if err := tx.PutBotMessage(out.Channel, out.ChatID, id, chatKey); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.log.Error("recording a confirmed send", "channel", out.Channel, "err", err)
	}
}

// drop clears an outbox record that will never be sent.
func (b *Bus) drop(seq uint64) {
	defer b.release(seq)
	if err := b.opts.Store.Batch(func(tx *store.Tx) error { return tx.DeleteOutbox(seq) }); err != nil {
		b.log.Error("clearing the outbox", "err", err)
	}
}

// ReplayOutbox sends again what was recorded and never confirmed: by a
// previous process (call it once the channels' senders are registered) or
// by this one when the platform failed. Sends still in flight here are
// left alone; stale ones (older than a day, or failed too often) are
// dropped and logged. It returns how many were delivered.
func (b *Bus) ReplayOutbox(ctx context.Context) int { return b.replayOutbox(ctx, false) }

// replayOutbox is ReplayOutbox; onlyDue leaves the sends whose pause
// (outRecord.due) has not passed.
func (b *Bus) replayOutbox(ctx context.Context, onlyDue bool) int {
	type pending struct {
		seq uint64
		rec *outRecord
	}
	var list []pending
	now := b.opts.Now()
	b.opts.Store.View(func(tx *store.Tx) error {
		return tx.Outbox(func(seq uint64, data []byte) error {
			b.mu.Lock()
			busy := b.inflight[seq]
			b.mu.Unlock()
			if busy {
				return nil
			}
			rec := new(outRecord)
			if err := json.Unmarshal(data, rec); err != nil {
				b.log.Error("dropping an unreadable outbox record", "seq", seq, "err", err)
				rec = nil
			} else if onlyDue && !rec.due(now) {
				return nil
			}
			list = append(list, pending{seq, rec})
			return nil
		})
	})
	delivered := 0
	for _, p := range list {
		if ctx.Err() != nil {
			break
		}
		switch ok, keep := b.replay(ctx, p.seq, p.rec); {
		case ok:
			delivered++
		case !keep:
			b.drop(p.seq)
		}
	}
	if delivered > 0 {
		b.log.Info("delivered sends left unconfirmed", "count", delivered)
	}
	return delivered
}

// replay tries one recorded send. It reports whether it was delivered, and
// otherwise whether to keep it for a later replay.
func (b *Bus) replay(ctx context.Context, seq uint64, rec *outRecord) (ok, keep bool) {
	if rec == nil {
		return false, false
	}
	now := b.opts.Now()
	if now.Sub(rec.Created) > outboxMaxAge || rec.Attempts >= outboxMaxAttempts {
		b.log.Error("giving up on a send the platform never confirmed", "channel", rec.Channel, "chat", rec.ChatKey, "attempts", rec.Attempts, "created", rec.Created)
		return false, false
	}
	if _, found := b.sender(rec.Channel); !found {
		return false, true // its channel is not running in this process
	}
	b.mu.Lock()
	if b.inflight[seq] {
		b.mu.Unlock()
		return false, true
	}
	b.inflight[seq] = true
	b.mu.Unlock()
	out := rec.outbound()
	if rec.Kind == OutFile {
		if b.opts.Reopen == nil {
			b.release(seq)
			return false, false
		}
		f, err := b.opts.Reopen(rec.ThreadID, rec.File)
		if err != nil {
			b.log.Warn("a file to deliver again is gone", "chat", rec.ChatKey, "file", rec.File, "err", err)
			b.release(seq)
			return false, false
		}
		out.File = &f
	}
	// Held: this record is the send's; deliver turns a failed edit (the
	// message may be gone) into a new message.
	ids, sent, err := b.deliver(ctx, rec.ChatKey, out, sendOpts{held: true})
	if err != nil {
		b.release(seq)
		rec.Attempts++
		rec.Tried = b.opts.Now()
		if data, merr := json.Marshal(rec); merr == nil {
			b.opts.Store.Batch(func(tx *store.Tx) error { return tx.ReplaceOutbox(seq, data) })
		}
		b.log.Warn("sending again failed", "channel", rec.Channel, "chat", rec.ChatKey, "attempt", rec.Attempts, "err", err)
		return false, true
	}
	b.confirm(seq, sent, rec.ChatKey, ids, nil)
	return true, true
}

// retryLoop replays the sends that are due every outboxRetryEvery until
// ctx ends.
func (b *Bus) retryLoop(ctx context.Context) {
	t := time.NewTicker(outboxRetryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.replayOutbox(ctx, true)
			b.pruneSeen()
		}
	}
}

// seenFor is how long a platform event id is remembered to drop
// redeliveries; platforms give up redelivering well within it.
const seenFor = 72 * time.Hour

// pruneSeen forgets event ids older than seenFor, at most once an hour.
func (b *Bus) pruneSeen() {
	now := b.opts.Now()
	b.mu.Lock()
	due := now.Sub(b.pruned) >= time.Hour
	if due {
		b.pruned = now
	}
	b.mu.Unlock()
	if !due {
		return
	}
	var n int
	err := b.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		n, err = tx.PruneSeen(now.Add(-seenFor))
		return err
	})
	if err != nil {
		b.log.Error("forgetting old event ids", "err", err)
	} else if n > 0 {
		b.log.Debug("forgot old event ids", "count", n)
	}
}

// Reopener finds a presented file again (its thread, its virtual path),
// for a delivery retried after a restart.
type Reopener func(threadID, path string) (event.File, error)
