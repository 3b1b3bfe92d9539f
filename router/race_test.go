package router

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/bus"
)

// visibleChannel shows each answer to the chat's people the moment it is
// sent, before the platform's reply to the send reaches the bot: its
// reply hook runs then, as a person who answers at once.
type visibleChannel struct {
	mu      sync.Mutex
	next    int
	onShown func(out *bus.Outbound, id string)
	answers chan *bus.Outbound
}

func (c *visibleChannel) Name() string { return "plat" }

func (c *visibleChannel) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	if out.Kind != bus.OutMessage && out.Kind != bus.OutEdit {
		return nil, nil
	}
	c.mu.Lock()
	c.next++
	id := fmt.Sprintf("m%d", c.next)
	if out.Kind == bus.OutEdit {
		id = out.EditID
	}
	c.mu.Unlock()
	if out.Final {
		c.onShown(out, id)
		c.answers <- out
	}
	return []string{id}, nil
}

// TestReplyInTheSameMillisecond: in a group topic, a person replies to the
// bot's answer the instant it appears — before the bot has even heard back
// from the platform, let alone recorded which conversation the answer
// belongs to. A thousand times over, the reply continues the topic's
// conversation; it never starts a new one.
func TestReplyInTheSameMillisecond(t *testing.T) {
	b, st := openBus(t, filepath.Join(t.TempDir(), "deerflow.db"), echoModel{})
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	ch := &visibleChannel{answers: make(chan *bus.Outbound, 4)}
	ch.onShown = func(out *bus.Outbound, id string) {
		if out.Text != "you said: start" { // the first answer of each chat only
			return
		}
		// The person replies from the chat (no topic in their client's
		// event, only what they reply to), while the send is in flight.
		go b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: out.ChatID, UserID: "u1", ReplyTo: id,
			MessageID: "r" + id, Text: "and then?"})
	}
	b.Register(ch)
	const n = 1000
	for i := range n {
		chat := fmt.Sprintf("g%d", i)
		if err := b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: chat, Topic: "t1", UserID: "u1",
			MessageID: "q" + chat, Text: "start"}); err != nil {
			t.Fatal(err)
		}
		first, reply := <-ch.answers, <-ch.answers
		if first.Topic != "t1" || reply.Topic != "t1" || reply.ChatID != chat {
			t.Fatalf("turn %d: the answer went to topic %q (%q), the reply's answer to %q in %s (%q): the reply started a new conversation", i, first.Topic, first.Text, reply.Topic, reply.ChatID, reply.Text)
		}
	}
}
