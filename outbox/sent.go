package outbox

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// A person may reply to the bot's message the instant it appears, before
// the commit that maps its id to its conversation lands (or even before
// the platform's answer to the send reaches us). sent bridges that gap:
// the ids of sends whose mapping is not yet committed are known in
// memory, and a reply in a chat with a send in flight waits for it.
type sent struct {
	mu       sync.Mutex
	ids      map[string]string // channel, chat, message id → conversation, until committed
	inflight map[string]int    // channel, chat → sends under way
	wake     chan struct{}     // closed and replaced when a send ends
}

func newSent() *sent {
	return &sent{ids: map[string]string{}, inflight: map[string]int{}, wake: make(chan struct{})}
}

func chatOf(channel, chat string) string { return channel + "\x00" + chat }
func msgOf(channel, chat, id string) string {
	return channel + "\x00" + chat + "\x00" + id
}

// begin notes a send to chat under way.
func (s *sent) begin(out *bus.Outbound) {
	s.mu.Lock()
	s.inflight[chatOf(out.Channel, out.ChatID)]++
	s.mu.Unlock()
}

// end notes the send's end and the ids it created for chatKey.
func (s *sent) end(out *bus.Outbound, chatKey string, ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := chatOf(out.Channel, out.ChatID)
	if s.inflight[k]--; s.inflight[k] <= 0 {
		delete(s.inflight, k)
	}
	if chatKey != "" {
		for _, id := range ids {
			s.ids[msgOf(out.Channel, out.ChatID, id)] = chatKey
		}
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

// committed forgets ids whose mapping the store now has.
func (s *sent) committed(out *bus.Outbound, ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.ids, msgOf(out.Channel, out.ChatID, id))
	}
}

// replyWait bounds how long a reply waits for a send in flight to its
// chat: a platform answers a send well within it.
const replyWait = 3 * time.Second

// Conversation returns the conversation of the bot's (or a person's)
// message id in chat: from a send whose mapping is still being committed,
// else from the store; when neither knows it and a send to the chat is
// under way, it waits for that send (up to a few seconds) and looks again.
func (o *Outbox) Conversation(ctx context.Context, channel, chat, id string) (string, bool) {
	var timeout <-chan time.Time
	for {
		o.sent.mu.Lock()
		key, ok := o.sent.ids[msgOf(channel, chat, id)]
		busy, wake := o.sent.inflight[chatOf(channel, chat)] > 0, o.sent.wake
		o.sent.mu.Unlock()
		if ok {
			return key, true
		}
		key, err := o.opts.Store.BotMessageChat(channel, chat, id)
		if err == nil {
			return key, true
		}
		if !busy || !errors.Is(err, store.ErrNotFound) {
			return "", false
		}
		if timeout == nil {
			t := time.NewTimer(replyWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			return "", false
		case <-ctx.Done():
			return "", false
		}
	}
}
