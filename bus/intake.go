package bus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/deerflow/deerflow/store"
)

// resolveReply moves a reply into the conversation of the message it
// answers, when that message belongs to one.
func (b *Bus) resolveReply(in *Inbound) {
	if in.ReplyTo == "" {
		return
	}
	key, err := b.opts.Store.BotMessageChat(in.Channel, in.ChatID, in.ReplyTo)
	if err != nil {
		return
	}
	prefix := ChatKey(in.Channel, in.ChatID, "")
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
func (b *Bus) seen(in *Inbound) bool {
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
func (b *Bus) record(in *Inbound, keep bool) (seq uint64, dup bool, err error) {
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
		return 0, false, errors.Join(errors.New("bus: message not stored"), err)
	}
	if dup {
		b.log.Info("dropped a redelivered message", "chat", in.ChatKey(), "event", in.EventKey)
	}
	return seq, dup, nil
}

// forgetInbound deletes stored messages that will never run (dropped by
// /stop).
func (b *Bus) forgetInbound(items []*item) {
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
func (b *Bus) Recover(ctx context.Context) (int, error) {
	type pending struct {
		seq uint64
		in  *Inbound
	}
	var list []pending
	err := b.opts.Store.View(func(tx *store.Tx) error {
		return tx.Inbound(func(seq uint64, data []byte) error {
			in := new(Inbound)
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
