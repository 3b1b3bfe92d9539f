package outbox

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// Run delivers what a previous process left in the outbox (Replay), then
// replays the unconfirmed sends that are due every few seconds until ctx
// ends. Call it once the channels' senders are registered.
func (o *Outbox) Run(ctx context.Context) {
	o.Replay(ctx)
	t := time.NewTicker(retryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			o.replay(ctx, true)
		}
	}
}

// Replay sends again what was recorded and never confirmed: by a previous
// process (call it once the channels' senders are registered) or by this
// one when the platform failed. Sends still in flight here are left alone;
// stale ones (older than a day, or failed too often) are dropped and
// logged. It returns how many were delivered.
func (o *Outbox) Replay(ctx context.Context) int { return o.replay(ctx, false) }

// pending is one record read back for the replay; rec is nil when it
// could not be read.
type pending struct {
	seq uint64
	rec *Record
}

// replay is Replay; onlyDue leaves the sends whose pause (Record.due) has
// not passed.
func (o *Outbox) replay(ctx context.Context, onlyDue bool) int {
	list := o.pending(onlyDue)
	delivered := 0
	for _, p := range list {
		if ctx.Err() != nil {
			break
		}
		switch ok, keep := o.replayOne(ctx, p.seq, p.rec); {
		case ok:
			delivered++
		case !keep:
			o.drop(p.seq)
		}
	}
	if delivered > 0 {
		o.log.Info("delivered sends left unconfirmed", "count", delivered)
	}
	return delivered
}

// pending reads the records not in flight (and due, with onlyDue).
func (o *Outbox) pending(onlyDue bool) []pending {
	var list []pending
	now := o.opts.Now()
	o.opts.Store.View(func(tx *store.Tx) error {
		return tx.Outbox(func(seq uint64, data []byte) error {
			o.mu.Lock()
			busy := o.inflight[seq]
			o.mu.Unlock()
			if busy {
				return nil
			}
			rec := new(Record)
			if err := json.Unmarshal(data, rec); err != nil {
				o.log.Error("dropping an unreadable outbox record", "seq", seq, "err", err)
				rec = nil
			} else if onlyDue && !rec.due(now) {
				return nil
			}
			list = append(list, pending{seq, rec})
			return nil
		})
	})
	return list
}

// replayOne tries one recorded send. It reports whether it was delivered,
// and otherwise whether to keep it for a later replay.
func (o *Outbox) replayOne(ctx context.Context, seq uint64, rec *Record) (ok, keep bool) {
	if rec == nil {
		return false, false
	}
	now := o.opts.Now()
	if now.Sub(rec.Created) > maxAge || rec.Attempts >= maxAttempts {
		o.log.Error("giving up on a send the platform never confirmed", "channel", rec.Channel, "chat", rec.ChatKey, "attempts", rec.Attempts, "created", rec.Created)
		return false, false
	}
	if _, found := o.Sender(rec.Channel); !found {
		return false, true // its channel is not running in this process
	}
	o.mu.Lock()
	if o.inflight[seq] {
		o.mu.Unlock()
		return false, true
	}
	o.inflight[seq] = true
	o.mu.Unlock()
	out, ok := o.reopen(seq, rec)
	if !ok {
		return false, false
	}
	// Held: this record is the send's; Deliver turns a failed edit (the
	// message may be gone) into a new message.
	ids, sent, err := o.Deliver(ctx, rec.ChatKey, out, SendOpts{Held: true})
	if err != nil {
		o.Release(seq)
		rec.Attempts++
		rec.Tried = o.opts.Now()
		o.opts.Store.Batch(func(tx *store.Tx) error { return ReplaceTx(tx, seq, rec) })
		o.log.Warn("sending again failed", "channel", rec.Channel, "chat", rec.ChatKey, "attempt", rec.Attempts, "err", err)
		return false, true
	}
	o.Confirm(seq, sent, rec.ChatKey, ids, nil)
	return true, true
}

// reopen is rec's Outbound, its file found again for OutFile. When the
// file is gone it ends the flight of seq and reports false.
func (o *Outbox) reopen(seq uint64, rec *Record) (*bus.Outbound, bool) {
	out := rec.outbound()
	if rec.Kind != bus.OutFile {
		return out, true
	}
	if o.opts.Reopen == nil {
		o.Release(seq)
		return nil, false
	}
	f, err := o.opts.Reopen(rec.ThreadID, rec.File)
	if err != nil {
		o.log.Warn("a file to deliver again is gone", "chat", rec.ChatKey, "file", rec.File, "err", err)
		o.Release(seq)
		return nil, false
	}
	out.File = &f
	return out, true
}
