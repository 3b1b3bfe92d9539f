package outbox

import (
	"context"
	"errors"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// Send delivers out and records the id of what was sent against the
// conversation chatKey, so a reply to it continues that conversation.
// What matters after a crash goes through the outbox. It returns the id a
// later edit should target.
func (o *Outbox) Send(ctx context.Context, chatKey string, out *bus.Outbound) (string, error) {
	ids, _, err := o.Deliver(ctx, chatKey, out, SendOpts{})
	if len(ids) == 0 {
		return "", err
	}
	return ids[0], err
}

// SendOpts are Deliver's options.
type SendOpts struct {
	ThreadID string // needed for files
	// Held: the caller recorded the send in the outbox (HoldTx) and
	// confirms it later (Confirm), with the returned ids and the Outbound
	// actually sent.
	Held bool
	// OnTx runs inside the transaction that records the confirmed ids.
	OnTx func(tx *store.Tx, ids []string) error
}

// Deliver sends out, recorded in the outbox first when it is durable, and
// returns the platform's ids and the Outbound actually sent: a final edit
// that fails becomes a new message.
func (o *Outbox) Deliver(ctx context.Context, chatKey string, out *bus.Outbound, so SendOpts) ([]string, *bus.Outbound, error) {
	s, ok := o.Sender(out.Channel)
	if !ok {
		return nil, out, errors.New("outbox: no sender for channel " + out.Channel)
	}
	var seq uint64
	if !so.Held {
		seq = o.hold(chatKey, so.ThreadID, out)
	}
	o.sent.begin(out)
	ids, err := s.Send(ctx, out)
	if err != nil && out.Kind == bus.OutEdit && out.Final {
		o.log.InfoContext(ctx, "editing failed; sending the text as a new message", "channel", out.Channel, "chat", out.ChatID, "err", err)
		m := *out
		m.Kind, m.EditID = bus.OutMessage, ""
		out = &m
		ids, err = s.Send(ctx, out)
	}
	o.sent.end(out, mappable(out, chatKey), ids)
	if err != nil {
		o.log.WarnContext(ctx, "send failed", "channel", out.Channel, "chat", out.ChatID, "kind", out.Kind, "err", err)
		o.Release(seq) // kept for the replay
		return nil, out, err
	}
	if !so.Held {
		o.Confirm(seq, out, chatKey, ids, so.OnTx)
	}
	return ids, out, nil
}

// mappable is chatKey when out's ids are recorded against the conversation
// (Confirm does), else "".
func mappable(out *bus.Outbound, chatKey string) string {
	if out.Kind == bus.OutDelta || out.Kind == bus.OutActivity {
		return ""
	}
	return chatKey
}
