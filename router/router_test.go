package router

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		text, name, args string
		ok               bool
	}{
		{"/new", "new", "", true},
		{"/models big", "models", "big", true},
		{"/Status", "status", "", true},
		{"/models  big  ", "models", "big", true},
		{"/help\nmore text", "help", "more text", true},
		{"/usr/bin/env", "", "", false},
		{"/ nothing", "", "", false},
		{"hello /new", "", "", false},
		{"/1abc", "", "", false},
		{"/skill-name do it", "skill-name", "do it", true},
	}
	for _, tt := range tests {
		name, args, ok := parseCommand(tt.text)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", tt.text, name, args, ok, tt.name, tt.args, tt.ok)
		}
	}
}

// stepModel streams each text piece when the test sends on step, then
// finishes; with tool set it first asks for that tool.
type stepModel struct {
	step   chan string
	tool   string
	called int
	mu     sync.Mutex
}

func (m *stepModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		m.mu.Lock()
		m.called++
		first := m.called == 1
		m.mu.Unlock()
		if first && m.tool != "" {
			yield(llm.Chunk{Done: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant,
				ToolCalls: []llm.ToolCall{{ID: "c1", Name: m.tool, Arguments: `{"description":"looking things up"}`}}}}}, nil)
			return
		}
		var full strings.Builder
		for {
			select {
			case <-ctx.Done():
				yield(llm.Chunk{}, ctx.Err())
				return
			case piece, ok := <-m.step:
				if !ok {
					yield(llm.Chunk{Done: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: full.String()}, FinishReason: "stop"}}, nil)
					return
				}
				full.WriteString(piece)
				if !yield(llm.Chunk{Text: piece}, nil) {
					return
				}
			}
		}
	}
}

// editChannel is a platform-like sender: new messages get ids, edits
// replace text. failEdits makes every edit fail.
type editChannel struct {
	mu        sync.Mutex
	next      int
	texts     map[string]string
	log       []string
	changed   chan struct{}
	failEdits bool
}

func newEditChannel() *editChannel {
	return &editChannel{texts: map[string]string{}, changed: make(chan struct{}, 100)}
}

func (c *editChannel) Name() string                      { return "plat" }
func (c *editChannel) EditInterval(string) time.Duration { return 0 }
func (c *editChannel) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	c.mu.Lock()
	defer func() { c.mu.Unlock(); c.changed <- struct{}{} }()
	switch out.Kind {
	case bus.OutMessage:
		c.next++
		id := fmt.Sprintf("m%d", c.next)
		c.texts[id] = out.Text
		c.log = append(c.log, fmt.Sprintf("send %s final=%v: %s", id, out.Final, out.Text))
		return []string{id}, nil
	case bus.OutEdit:
		if c.failEdits {
			return nil, errors.New("edit refused")
		}
		c.texts[out.EditID] = out.Text
		c.log = append(c.log, fmt.Sprintf("edit %s final=%v: %s", out.EditID, out.Final, out.Text))
		return []string{out.EditID}, nil
	}
	return nil, nil
}

// waitText blocks until message id shows want.
func (c *editChannel) waitText(t *testing.T, id, want string) {
	t.Helper()
	guard := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		got := c.texts[id]
		c.mu.Unlock()
		if strings.Contains(got, want) {
			return
		}
		select {
		case <-c.changed:
		case <-guard:
			t.Fatalf("message %s never showed %q; log:\n%s", id, want, strings.Join(c.log, "\n"))
		}
	}
}

func newTestBus(t *testing.T, m llm.Model, ts ...tools.Tool) (*Router, *store.Store) {
	t.Helper()
	b, st := openBus(t, filepath.Join(t.TempDir(), "deerflow.db"), m, ts...)
	t.Cleanup(func() { st.Close() })
	return b, st
}

func TestStreamingByEdits(t *testing.T) {
	m := &stepModel{step: make(chan string), tool: "lookup"}
	lookup := tools.Func("lookup", "Looks up.", func(context.Context, struct {
		Description string `json:"description,omitempty"`
	}) (string, error) {
		return "found", nil
	})
	b, st := newTestBus(t, m, lookup)
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	if err := b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", MessageID: "in1", Text: "question"}); err != nil {
		t.Fatal(err)
	}
	// The progress message shows the tool call, then the answer as it
	// streams, edited in place.
	ch.waitText(t, "m1", "› lookup: looking things up")
	m.step <- "The answer "
	ch.waitText(t, "m1", "The answer")
	m.step <- "is **42**."
	ch.waitText(t, "m1", "The answer is **42**.")
	close(m.step)
	if err := b.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	ch.mu.Lock()
	last := ch.log[len(ch.log)-1]
	count := ch.next
	ch.mu.Unlock()
	if last != "edit m1 final=true: The answer is **42**." || count != 1 {
		t.Fatalf("last = %q, messages sent = %d", last, count)
	}
	// Every message the bot sent is mapped to the conversation.
	key, err := st.BotMessageChat("plat", "c1", "m1")
	if err != nil || key != "plat:c1" {
		t.Errorf("bot message map = %q, %v", key, err)
	}
}

func TestFailedFinalEditFallsBackToNewMessage(t *testing.T) {
	m := &stepModel{step: make(chan string)}
	b, _ := newTestBus(t, m)
	ch := newEditChannel()
	ch.failEdits = true
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "hi"})
	m.step <- "partial"
	ch.waitText(t, "m1", "partial")
	m.step <- " and the rest"
	close(m.step)
	b.WaitIdle(ctx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.texts["m2"] != "partial and the rest" {
		t.Fatalf("log:\n%s", strings.Join(ch.log, "\n"))
	}
}

func TestStopShowsPartialAnswer(t *testing.T) {
	m := &stepModel{step: make(chan string)}
	b, _ := newTestBus(t, m)
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	in := func(text string) *bus.Inbound {
		return &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: text}
	}
	b.Publish(ctx, in("tell me a long story"))
	m.step <- "Once upon a time"
	ch.waitText(t, "m1", "Once upon a time")
	b.Publish(ctx, in("later message"))
	b.Publish(ctx, in("/stop"))
	b.WaitIdle(ctx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if got := ch.texts["m1"]; got != "Once upon a time\n\nStopped." {
		t.Errorf("stopped message = %q", got)
	}
	// The queued message was dropped, and the sender was told.
	var dropped bool
	for _, l := range ch.log {
		dropped = dropped || strings.Contains(l, "Dropped 1 waiting message")
	}
	if !dropped {
		t.Errorf("log:\n%s", strings.Join(ch.log, "\n"))
	}
}
