package router

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// echoModel answers "you said: <last user text>".
type echoModel struct{}

func (echoModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		last := req.Messages[len(req.Messages)-1].Content
		yield(llm.Chunk{Done: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "you said: " + last}, FinishReason: "stop"}}, nil)
	}
}

// openBus wires a bus over the store at path with model m and tools ts.
func openBus(t *testing.T, path string, m llm.Model, ts ...tools.Tool) (*Router, *store.Store) {
	t.Helper()
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ag, err := agent.New(agent.Options{Store: st, Models: []agent.ModelRef{{Name: "m", ID: "m", Model: m}}, Tools: tools.NewRegistry(ts...), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := runner.New(runner.Options{Store: st, Logger: log, Forget: ag.ForgetHistory, Stop: ag.StopAll})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{Store: st, Agent: ag, Runner: rn, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rn.Start()
	return b, st
}

// recoverAll is a process's start: the runner's recovery pass, then the
// messages of an older deerflow's intake queue. It returns how many runs
// were resumed or adopted.
func (r *Router) recoverAll(ctx context.Context) (int, error) {
	n, _, err := r.opts.Runner.Recover()
	if err != nil {
		return n, err
	}
	m, err := r.Adopt(ctx)
	return n + m, err
}

// shutdown is a process's end: the runner closes (the running runs get
// grace), then the router shows their ends.
func (r *Router) shutdown(ctx context.Context, grace time.Duration, cause error) {
	r.opts.Runner.Close(ctx, grace, cause)
	r.Close(ctx)
}

func TestQueuedMessagesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	m := &stepModel{step: make(chan string)}
	b, st := openBus(t, path, m)
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	msg := func(text string) *bus.Inbound {
		return &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: text}
	}
	b.Publish(ctx, msg("first"))
	m.step <- "working on it"
	ch.waitText(t, "m1", "working on it")
	b.Publish(ctx, msg("second"))
	b.Publish(ctx, msg("third"))
	// The process is told to stop: the running turn is cancelled, the
	// queued ones stay stored.
	b.shutdown(ctx, 0, agent.ErrStopped)
	st.Close()

	b, st = openBus(t, path, echoModel{})
	defer st.Close()
	ch2 := newEditChannel()
	b.Register(ch2)
	n, err := b.recoverAll(ctx)
	if err != nil || n != 2 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	b.WaitIdle(ctx)
	ch2.mu.Lock()
	got := strings.Join(ch2.log, "\n")
	ch2.mu.Unlock()
	if !strings.Contains(got, "you said: second") || !strings.Contains(got, "you said: third") ||
		strings.Index(got, "second") > strings.Index(got, "third") {
		t.Fatalf("after restart:\n%s", got)
	}
	// Each ran once: nothing is left to recover.
	if n, _ := b.recoverAll(ctx); n != 0 {
		t.Errorf("recovered again: %d", n)
	}
}

func TestRedeliveryIsDropped(t *testing.T) {
	b, st := openBus(t, filepath.Join(t.TempDir(), "deerflow.db"), echoModel{})
	defer st.Close()
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", EventKey: "plat:update:42", Text: "once"})
	}
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", EventKey: "plat:update:43", Text: "/help"})
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", EventKey: "plat:update:43", Text: "/help"})
	b.WaitIdle(ctx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if strings.Count(strings.Join(ch.log, "\n"), "you said: once") != 1 || strings.Count(strings.Join(ch.log, "\n"), "Commands:") != 1 {
		t.Fatalf("log:\n%s", strings.Join(ch.log, "\n"))
	}
}

func TestReplyContinuesConversation(t *testing.T) {
	b, st := openBus(t, filepath.Join(t.TempDir(), "deerflow.db"), echoModel{})
	defer st.Close()
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	// A group: each fresh mention starts its own conversation (topic =
	// its message id); replies continue the conversation they answer.
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "g", Topic: "m100", MessageID: "100", UserID: "u1", Text: "first question"})
	b.WaitIdle(ctx)
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "g", Topic: "m200", MessageID: "200", UserID: "u2", Text: "other question"})
	b.WaitIdle(ctx)
	// Reply to the bot's answer to the first question (message m1).
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "g", Topic: "m300", MessageID: "300", ReplyTo: "m1", UserID: "u1", Text: "follow-up"})
	b.WaitIdle(ctx)
	// Reply to the person's own first message.
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "g", Topic: "m400", MessageID: "400", ReplyTo: "100", UserID: "u1", Text: "and another"})
	b.WaitIdle(ctx)

	first, err := st.ChatThread("plat:g:m100")
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := st.Messages(first, 0)
	var users []string
	for _, m := range msgs {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if got := strings.Join(users, "|"); got != "first question|follow-up|and another" {
		t.Errorf("first conversation got %q", got)
	}
	if _, err := st.ChatThread("plat:g:m300"); err == nil {
		t.Error("the reply started a conversation of its own")
	}
}

// typingChannel counts typing calls.
type typingChannel struct {
	*editChannel
	mu    sync.Mutex
	typed int
}

func (c *typingChannel) Typing(context.Context, *bus.Outbound) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.typed++
	return nil
}

func TestTypingWhileWorking(t *testing.T) {
	m := &stepModel{step: make(chan string)}
	b, st := openBus(t, filepath.Join(t.TempDir(), "deerflow.db"), m)
	defer st.Close()
	ch := &typingChannel{editChannel: newEditChannel()}
	b.Register(ch)
	ctx := context.Background()
	b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: "hi"})
	m.step <- "thinking"
	ch.waitText(t, "m1", "thinking")
	close(m.step)
	b.WaitIdle(ctx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.typed < 1 {
		t.Errorf("typing shown %d times", ch.typed)
	}
}

func TestStopForgetsDroppedMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	m := &stepModel{step: make(chan string)}
	b, st := openBus(t, path, m)
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	msg := func(text string) *bus.Inbound {
		return &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: text}
	}
	b.Publish(ctx, msg("first"))
	m.step <- "x"
	ch.waitText(t, "m1", "x")
	b.Publish(ctx, msg("second"))
	b.Publish(ctx, msg("/stop"))
	b.WaitIdle(ctx)
	b.shutdown(ctx, 0, agent.ErrStopped)
	st.Close()
	b, st = openBus(t, path, echoModel{})
	defer st.Close()
	if n, _ := b.recoverAll(ctx); n != 0 {
		t.Errorf("a message dropped by /stop came back after restart (%d)", n)
	}
}
