package router

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// resolveReply moves a reply into the conversation of the message it
// answers, when that message belongs to one.
func (b *Router) resolveReply(in *bus.Inbound) {
	if in.ReplyTo == "" {
		return
	}
	key, err := b.opts.Store.BotMessageChat(in.Channel, in.ChatID, in.ReplyTo)
	if err != nil {
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
func (b *Router) seen(in *bus.Inbound) bool {
	if in.EventKey == "" {
		return false
	}
	var dup bool
	b.opts.Store.View(func(tx *store.Tx) error {
		var err error
		dup, err = tx.Seen(in.EventKey)
		return err
	})
	return dup
}

// record durably accepts in, in one transaction: its event key is marked
// seen (a redelivery reports dup), its message id is mapped to its
// conversation (so replies to it continue the conversation) and, when keep
// is set, the message itself is stored until a run takes it (seq).
func (b *Router) record(in *bus.Inbound, keep bool) (seq uint64, dup bool, err error) {
	var data []byte
	if keep {
		if data, err = json.Marshal(in); err != nil {
			return 0, false, err
		}
	}
	now := b.opts.Now()
	err = b.opts.Store.Batch(func(tx *store.Tx) error {
		seq, dup = 0, false
		if in.EventKey != "" {
			var err error
			if dup, err = tx.MarkSeen(in.EventKey, now); err != nil || dup {
				return err
			}
		}
		if in.MessageID != "" {
			if err := tx.PutBotMessage(in.Channel, in.ChatID, in.MessageID, in.ChatKey()); err != nil {
				return err
			}
		}
		if keep {
			var err error
			seq, err = tx.PutInbound(data)
			return err
		}
		return nil
	})
	if err != nil {
		b.log.Error("accepting message", "chat", in.ChatKey(), "err", err)
		return 0, false, errors.Join(errors.New("router: message not stored"), err)
	}
	if dup {
		b.log.Info("dropped a redelivered message", "chat", in.ChatKey(), "event", in.EventKey)
	}
	return seq, dup, nil
}

// forgetInbound deletes stored messages that will never run (dropped by
// /stop).
func (b *Router) forgetInbound(items []*item) {
	if len(items) == 0 {
		return
	}
	b.mu.Lock()
	for _, it := range items {
		delete(b.live, it.seq)
	}
	b.mu.Unlock()
	err := b.opts.Store.Batch(func(tx *store.Tx) error {
		for _, it := range items {
			if it.seq != 0 {
				if err := tx.DeleteInbound(it.seq); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.log.Error("forgetting dropped messages", "err", err)
	}
}

// Recover queues the messages that were accepted but had not started
// running when the previous process stopped, in the order they arrived.
// Call it once, after every channel's sender is registered; messages this
// process already queued are not queued twice.
func (b *Router) Recover(ctx context.Context) (int, error) {
	type pending struct {
		seq uint64
		in  *bus.Inbound
	}
	var list []pending
	err := b.opts.Store.View(func(tx *store.Tx) error {
		return tx.Inbound(func(seq uint64, data []byte) error {
			in := new(bus.Inbound)
			if err := json.Unmarshal(data, in); err != nil {
				b.log.Error("skipping an unreadable stored message", "seq", seq, "err", err)
				return nil
			}
			list = append(list, pending{seq, in})
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	for _, p := range list {
		threadID, err := b.threadFor(p.in.ChatKey())
		if errors.Is(err, store.ErrDamaged) { // quarantined: told once, not replayed
			b.log.Error("skipping a stored message of a damaged conversation", "chat", p.in.ChatKey(), "err", err)
			b.reply(ctx, p.in, DamagedChatText)
			b.forgetInbound([]*item{{in: p.in, seq: p.seq}})
			continue
		}
		if err != nil {
			return 0, err
		}
		b.push(p.in, threadID, p.seq)
	}
	if len(list) > 0 {
		b.log.Info("resuming messages accepted before the restart", "count", len(list))
	}
	return len(list), nil
}

// seenFor is how long a platform event id is remembered to drop
// redeliveries; platforms give up redelivering well within it.
const seenFor = 72 * time.Hour

// pruneEvery is how often pruneLoop looks whether old event ids are due to
// be forgotten (pruneSeen does it at most once an hour).
const pruneEvery = 5 * time.Second

// pruneLoop forgets old event ids now and then until ctx ends.
func (b *Router) pruneLoop(ctx context.Context) {
	b.pruneSeen()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.pruneSeen()
		}
	}
}

// pruneSeen forgets event ids older than seenFor, at most once an hour.
func (b *Router) pruneSeen() {
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
