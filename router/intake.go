package router

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// resolveReply moves a reply into the conversation of the message it
// answers, when that message belongs to one.
func (r *Router) resolveReply(ctx context.Context, in *bus.Inbound) {
	if in.ReplyTo == "" {
		return
	}
	key, ok := r.out.Conversation(ctx, in.Channel, in.ChatID, in.ReplyTo)
	if !ok {
		return
	}
	prefix := bus.ChatKey(in.Channel, in.ChatID, "")
	switch {
	case key == prefix:
		in.Topic = ""
	case strings.HasPrefix(key, prefix+":"):
		in.Topic = key[len(prefix)+1:]
	}
}

// seen reports whether in's event was already accepted (a redelivery),
// so nothing (uploads included) is done twice. record checks again inside
// its transaction.
func (r *Router) seen(in *bus.Inbound) bool {
	if in.EventKey == "" {
		return false
	}
	var dup bool
	r.opts.Store.View(func(tx *store.Tx) error {
		var err error
		dup, err = tx.Seen(in.EventKey)
		return err
	})
	return dup
}

// record durably accepts a command: its event key is marked seen (a
// redelivery reports dup) and its message id mapped to its conversation.
func (r *Router) record(in *bus.Inbound) (dup bool, err error) {
	err = r.opts.Store.Batch(func(tx *store.Tx) error {
		var err error
		dup, err = r.recordTx(tx, in)
		return err
	})
	if err != nil {
		r.log.Error("accepting message", "chat", in.ChatKey(), "err", err)
		return false, errors.Join(errors.New("router: message not stored"), err)
	}
	if dup {
		r.log.Info("dropped a redelivered message", "chat", in.ChatKey(), "event", in.EventKey)
	}
	return dup, nil
}

// recordTx marks in's event key seen (dup: it was already) and maps its
// message id to its conversation, so replies to it continue the
// conversation.
func (r *Router) recordTx(tx *store.Tx, in *bus.Inbound) (dup bool, err error) {
	if in.EventKey != "" {
		if dup, err = tx.MarkSeen(in.EventKey, r.opts.Now()); err != nil || dup {
			return dup, err
		}
	}
	if in.MessageID != "" {
		return false, tx.PutBotMessage(in.Channel, in.ChatID, in.MessageID, in.ChatKey())
	}
	return false, nil
}

// Adopt moves the messages an older deerflow left in its own intake queue
// into the runner's, in the order they arrived; each leaves the old queue
// in the commit that stores it in the new one. Call it once, after the
// runner's Recover.
func (r *Router) Adopt(ctx context.Context) (int, error) {
	type legacy struct {
		seq uint64
		in  *bus.Inbound
	}
	var list []legacy
	err := r.opts.Store.View(func(tx *store.Tx) error {
		return tx.Inbound(func(seq uint64, data []byte) error {
			in := new(bus.Inbound)
			if err := json.Unmarshal(data, in); err != nil {
				r.log.Error("skipping an unreadable stored message", "seq", seq, "err", err)
				in = nil
			}
			list = append(list, legacy{seq, in})
			return nil
		})
	})
	n := 0
	for _, l := range list {
		if err == nil {
			err = r.adopt(ctx, l.seq, l.in)
			n++
		}
	}
	return n, err
}

// adopt submits one message of the old intake queue (nil: unreadable,
// dropped).
func (r *Router) adopt(ctx context.Context, seq uint64, in *bus.Inbound) error {
	drop := func(tx *store.Tx) error { return tx.DeleteInbound(seq) }
	if in == nil {
		return r.opts.Store.Update(drop)
	}
	key := in.ChatKey()
	threadID, err := r.threadFor(key)
	if errors.Is(err, store.ErrDamaged) { // quarantined: told once, not replayed
		r.log.Error("skipping a stored message of a damaged conversation", "chat", key, "err", err)
		r.reply(ctx, in, DamagedChatText)
		return r.opts.Store.Update(drop)
	}
	if err != nil {
		return err
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = r.opts.Runner.Submit(runner.Request{
		Conv: key, ThreadID: threadID, Origin: runner.OriginChat, ChatKey: key,
		User: in.Channel + ":" + in.UserID, Text: in.Text, Skill: in.Skill, MessageID: in.MessageID,
		Data: data, Strategy: runner.Enqueue, Also: drop,
	})
	return err
}

// seenFor is how long a platform event id is remembered to drop
// redeliveries; platforms give up redelivering well within it.
const seenFor = 72 * time.Hour

// pruneEvery is how often pruneLoop looks whether old event ids are due to
// be forgotten (pruneSeen does it at most once an hour).
const pruneEvery = 5 * time.Second

// pruneLoop forgets old event ids now and then until ctx ends.
func (r *Router) pruneLoop(ctx context.Context) {
	// The first pass waits a tick: a commit while the channels connect
	// would only delay them.
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.pruneSeen()
		}
	}
}

// pruneSeen forgets event ids older than seenFor, at most once an hour.
func (r *Router) pruneSeen() {
	now := r.opts.Now()
	r.mu.Lock()
	due := now.Sub(r.pruned) >= time.Hour
	if due {
		r.pruned = now
	}
	r.mu.Unlock()
	if !due {
		return
	}
	var n int
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		n, err = tx.PruneSeen(now.Add(-seenFor))
		return err
	})
	if err != nil {
		r.log.Error("forgetting old event ids", "err", err)
	} else if n > 0 {
		r.log.Debug("forgot old event ids", "count", n)
	}
}
