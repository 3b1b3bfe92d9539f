package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools"
)

// screen is what the terminal shows; tests wait for text to appear on it.
type screen struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
}

func newScreen() *screen { return &screen{changed: make(chan struct{})} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor blocks until the screen shows want n times in all. The guard
// only turns a hang into a readable failure; it measures nothing.
func (s *screen) waitFor(t *testing.T, want string, n int) {
	t.Helper()
	guard := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		got, ch := s.buf.String(), s.changed
		s.mu.Unlock()
		if strings.Count(got, want) >= n {
			return
		}
		select {
		case <-ch:
		case <-guard:
			t.Fatalf("screen never showed %q (x%d); it shows:\n%s", want, n, got)
		}
	}
}

// session is one `deerflow chat` wired exactly as the command wires it on
// a terminal, with the terminal replaced by a pipe of key presses (the
// line editor without raw mode) and a screen. chat_tty_test.go drives a
// real pseudo-terminal; chat_pipe_test.go the script mode.
type session struct {
	t      *testing.T
	app    *app
	in     *io.PipeWriter
	screen *screen
	done   chan error
}

func testConfig(t *testing.T, fake *fakeopenai.Server, dataDir string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Models = []config.Model{
		{Name: "default", Model: "fake-model", BaseURL: fake.URL, APIKey: "test-key", TimeoutSeconds: 60, MaxRetries: 2},
		{Name: "big", Model: "fake-big", BaseURL: fake.URL, APIKey: "test-key", TimeoutSeconds: 60, MaxRetries: 2},
	}
	// Memory would add model calls of its own; its tests switch it on.
	cfg.Memory.Enabled = false
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func startChat(t *testing.T, cfg *config.Config, extra ...tools.Tool) *session {
	t.Helper()
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range extra {
		a.tools.Add(tl)
	}
	r, w := io.Pipe()
	s := &session{t: t, app: a, in: w, screen: newScreen(), done: make(chan error, 1)}
	go func() { s.done <- converse(context.Background(), a, r, lf{s.screen}, io.Discard, true) }()
	t.Cleanup(func() { s.close() })
	return s
}

// lf passes what the line editor writes on with its line ends as "\n".
type lf struct{ w io.Writer }

func (l lf) Write(p []byte) (int, error) {
	if _, err := l.w.Write(bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *session) say(text string) {
	s.t.Helper()
	if _, err := fmt.Fprintln(s.in, text); err != nil {
		s.t.Fatal(err)
	}
}

// close ends the input (EOF), waits for queued work and shuts the app down.
func (s *session) close() {
	if s.in == nil {
		return
	}
	s.in.Close()
	s.in = nil
	if err := <-s.done; err != nil {
		s.t.Errorf("console: %v", err)
	}
	s.app.shutdown(5 * time.Second)
}

type lookupArgs struct {
	Description string `json:"description,omitempty"`
	City        string `json:"city"`
}

func weatherTool() tools.Tool {
	return tools.Func("weather", "Looks up the weather.", func(_ context.Context, in lookupArgs) (string, error) {
		return "sunny in " + in.City, nil
	})
}

func TestChatMultiTurnWithTools(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Key = "test-key"
	fake.Script(
		fakeopenai.Turn{Text: "Let me check.", ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_1", Name: "weather", Arguments: `{"description":"weather in Paris","city":"Paris"}`},
			{ID: "call_2", Name: "weather", Arguments: `{"city":"Oslo"}`},
		}},
		fakeopenai.Turn{Text: "Paris is sunny and so is Oslo."},
		fakeopenai.Turn{Text: "You asked about Paris and Oslo."},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()), weatherTool())
	s.say("What's the weather in Paris and Oslo?")
	s.screen.waitFor(t, "Paris is sunny and so is Oslo.", 1)
	s.say("What did I ask?")
	s.screen.waitFor(t, "You asked about Paris and Oslo.", 1)
	s.close()

	out := s.screen.String()
	for _, want := range []string{"Let me check.", "› weather: weather in Paris", `› weather: {"city":"Oslo"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model got %d requests", len(reqs))
	}
	second := reqs[1].Messages
	if r := second[len(second)-1]; r.Role != "tool" || r.Content != "sunny in Oslo" || r.ToolCallID != "call_2" {
		t.Errorf("second request ends with %+v", r)
	}
	if got := reqs[2].Roles(); got != "system,user,assistant,tool,tool,assistant,user" {
		t.Errorf("third request roles = %s", got)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "<role>") {
		t.Errorf("system prompt = %q", reqs[0].Messages[0].Content)
	}
}

func TestChatNewStartsFreshThread(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "first answer"}, fakeopenai.Turn{Text: "fresh answer"})
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("remember the number 42")
	s.screen.waitFor(t, "first answer", 1)
	s.say("/new")
	s.screen.waitFor(t, "Started a new conversation", 1)
	s.say("what number?")
	s.screen.waitFor(t, "fresh answer", 1)
	reqs := fake.Requests()
	if got := reqs[1].Roles(); got != "system,user" {
		t.Errorf("after /new the model saw %s", got)
	}
}

func TestChatRestartKeepsHistory(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "Nice to meet you, Ann."}, fakeopenai.Turn{Text: "Your name is Ann."})
	dir := t.TempDir()
	cfg := testConfig(t, fake, dir)

	s := startChat(t, cfg)
	s.say("my name is Ann")
	s.screen.waitFor(t, "Nice to meet you, Ann.", 1)
	s.close()

	s = startChat(t, cfg)
	s.say("what is my name?")
	s.screen.waitFor(t, "Your name is Ann.", 1)
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	if got := last.Roles(); got != "system,user,assistant,user" {
		t.Fatalf("after restart the model saw %s", got)
	}
	if last.Messages[1].Content != "my name is Ann" || last.Messages[2].Content != "Nice to meet you, Ann." {
		t.Errorf("history = %+v", last.Messages)
	}
}

func TestChatQueuesMessageDuringRun(t *testing.T) {
	fake := fakeopenai.New(t)
	hold := make(chan struct{})
	fake.Script(
		fakeopenai.Turn{Text: "answer one", Hold: hold},
		fakeopenai.Turn{Text: "answer two"},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("one")
	fake.WaitRequests(1)
	s.say("two")
	s.screen.waitFor(t, "Queued", 1)
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("second message reached the model while the first ran (%d requests)", n)
	}
	close(hold)
	s.screen.waitFor(t, "answer two", 1)
	out := s.screen.String()
	if strings.Index(out, "answer one") > strings.Index(out, "answer two") {
		t.Errorf("answers out of order:\n%s", out)
	}
	second := fake.Requests()[1]
	if got := second.Roles(); got != "system,user,assistant,user" || second.Messages[3].Content != "two" {
		t.Errorf("second run saw %s", got)
	}
}

func TestChatQueueOverflow(t *testing.T) {
	fake := fakeopenai.New(t)
	hold := make(chan struct{})
	fake.Script(fakeopenai.Turn{Text: "a1", Hold: hold}, fakeopenai.Turn{Text: "a2"}, fakeopenai.Turn{Text: "a3"})
	cfg := testConfig(t, fake, t.TempDir())
	cfg.Router.MaxQueued = 2
	s := startChat(t, cfg)
	s.say("m1")
	fake.WaitRequests(1)
	s.say("m2")
	s.say("m3")
	s.say("m4")
	s.screen.waitFor(t, "didn't take this one", 1)
	close(hold)
	s.screen.waitFor(t, "a3", 1)
	s.close()
	for _, r := range fake.Requests() {
		if r.Last().Content == "m4" {
			t.Errorf("the refused message reached the model")
		}
	}
}

func TestChatStopCancelsSlowStream(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{Text: "This answer is very slow and will never finish", Chunk: 4, Delay: time.Hour, HoldAfter: 1},
		fakeopenai.Turn{Text: "back to work"},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("write slowly")
	fake.WaitRequests(1)
	s.say("/stop")
	fake.WaitCancelled(1)
	s.screen.waitFor(t, "Stopped.", 1)
	s.say("/status")
	s.screen.waitFor(t, "Run: idle", 1)
	s.say("are you there?")
	s.screen.waitFor(t, "back to work", 1)
}

func TestChatModelErrorsAreOneSentence(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		// Three 500s exhaust the two retries.
		fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500},
		// A cut stream is retried by the agent and then succeeds.
		fakeopenai.Turn{Text: "partial text that gets cut", CutAfter: 2},
		fakeopenai.Turn{Text: "complete answer"},
		// A 429 with Retry-After is honoured and retried.
		fakeopenai.Turn{Status: 429, RetryAfter: "0"},
		fakeopenai.Turn{Text: "after the rate limit"},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("hello")
	s.screen.waitFor(t, "The model provider is having trouble right now; please try again in a moment.", 1)
	s.say("hello again")
	s.screen.waitFor(t, "complete answer", 1)
	s.say("and again")
	s.screen.waitFor(t, "after the rate limit", 1)
	out := s.screen.String()
	for _, leak := range []string{"500", "status", "llm:", "Internal"} {
		if strings.Contains(out, leak) {
			t.Errorf("screen shows internal detail %q:\n%s", leak, out)
		}
	}
}

func TestChatBadKeyAndUnknownModel(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Key = "the-right-key"
	fake.Models = []string{"fake-model"}
	fake.Handle(func(fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "ok"} })
	cfg := testConfig(t, fake, t.TempDir())
	cfg.Models[0].APIKey = "a-wrong-key"
	cfg.Models[1].APIKey = "the-right-key"
	s := startChat(t, cfg)
	s.say("hi")
	s.screen.waitFor(t, "rejected the API key", 1)
	s.say("/models big")
	s.screen.waitFor(t, "now uses big", 1)
	s.say("hi")
	s.screen.waitFor(t, `does not know the model "fake-big"`, 1)
	if strings.Contains(s.screen.String(), "a-wrong-key") {
		t.Error("the key was shown")
	}
}

func TestChatCommands(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "from big"})
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("/help")
	s.screen.waitFor(t, "/stop", 1)
	s.say("/models")
	s.screen.waitFor(t, "• default — fake-model (current)", 1)
	s.say("/models nope")
	s.screen.waitFor(t, `There is no model called "nope"`, 1)
	s.say("/models big")
	s.screen.waitFor(t, "now uses big", 1)
	s.say("/status")
	s.screen.waitFor(t, "Model: big (fake-big)", 1)
	s.say("/stop")
	s.screen.waitFor(t, "Nothing is running", 1)
	s.say("/frobnicate")
	s.screen.waitFor(t, "Unknown command /frobnicate", 1)
	s.say("/usr/bin/env is a path, not a command")
	s.screen.waitFor(t, "from big", 1)
	if got := fake.Requests()[0].Model; got != "fake-big" {
		t.Errorf("model = %q", got)
	}
}
