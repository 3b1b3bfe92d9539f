package agent

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/agent/repair"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// scriptModel answers each call with the next scripted step and records
// the requests it saw.
type scriptModel struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req *llm.Request) (*llm.Response, error)
	reqs  []*llm.Request
}

func (m *scriptModel) add(steps ...func(ctx context.Context, req *llm.Request) (*llm.Response, error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

func (m *scriptModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		if len(m.steps) == 0 {
			m.mu.Unlock()
			yield(llm.Chunk{}, errors.New("script exhausted"))
			return
		}
		step := m.steps[0]
		m.steps = m.steps[1:]
		m.mu.Unlock()
		resp, err := step(ctx, req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		if resp.Message.Content != "" && !yield(llm.Chunk{Text: resp.Message.Content}, nil) {
			return
		}
		yield(llm.Chunk{Done: resp}, nil)
	}
}

func (m *scriptModel) requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.reqs...)
}

func say(text string) func(context.Context, *llm.Request) (*llm.Response, error) {
	return func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: text}, FinishReason: "stop"}, nil
	}
}

func call(calls ...llm.ToolCall) func(context.Context, *llm.Request) (*llm.Response, error) {
	return func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}, FinishReason: "tool_calls"}, nil
	}
}

type echoArgs struct {
	Text string `json:"text"`
}

func echoTool() tools.Tool {
	return tools.Func("echo", "Echoes text.", func(_ context.Context, in echoArgs) (string, error) {
		return "echo: " + in.Text, nil
	})
}

func newTestAgent(t *testing.T, m llm.Model, ts ...tools.Tool) (*Agent, *store.Store) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(Options{
		Store:  st,
		Models: []ModelRef{{Name: "default", ID: "fake-model", Model: m}},
		Tools:  tools.NewRegistry(ts...),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, st
}

// collect runs one turn and returns its events and, when it failed, the
// error of its event.Error.
func collect(a *Agent, ctx context.Context, in Input) ([]event.Event, error) {
	var evs []event.Event
	var last error
	for ev := range a.Run(ctx, in) {
		evs = append(evs, ev)
		if e, ok := ev.(event.Error); ok {
			last = e.Err
		}
	}
	return evs, last
}

// kind names ev as the tests spell it.
func kind(ev event.Event) string {
	switch ev.(type) {
	case event.Started:
		return "started"
	case event.TextDelta:
		return "text_delta"
	case event.ReasoningDelta:
		return "reasoning_delta"
	case event.TextReset:
		return "text_reset"
	case event.ToolCall:
		return "tool_start"
	case event.ToolResult:
		return "tool_end"
	case event.Answer:
		return "answer"
	case event.Error:
		return "error"
	case event.Stopped:
		return "stopped"
	}
	return event.Name(ev)
}

func kinds(evs []event.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, kind(e))
	}
	return strings.Join(s, ",")
}

// is reports whether ev is a T.
func is[T event.Event](ev event.Event) bool {
	_, ok := ev.(T)
	return ok
}

// text is the text of an answer or an error, or of a text delta.
func text(ev event.Event) string {
	switch ev := ev.(type) {
	case event.Answer:
		return ev.Text
	case event.Error:
		return ev.Text
	case event.TextDelta:
		return ev.Text
	}
	return ""
}

func storedRoles(t *testing.T, st *store.Store, thread string) string {
	t.Helper()
	msgs, err := st.Messages(thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, m := range msgs {
		s = append(s, m.Role)
	}
	return strings.Join(s, ",")
}

func TestRunWithToolCall(t *testing.T) {
	m := &scriptModel{}
	m.add(
		call(llm.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}),
		say("The tool said hi."),
	)
	a, st := newTestAgent(t, m, echoTool())
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", ChatKey: "console:local", Text: "say hi", RunID: "run_1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(evs), "started,tool_start,tool_end,text_delta,answer"; got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	if text(evs[len(evs)-1]) != "The tool said hi." {
		t.Errorf("answer = %q", text(evs[len(evs)-1]))
	}
	if got := storedRoles(t, st, "t1"); got != "user,assistant,tool,assistant" {
		t.Errorf("stored roles = %s", got)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	second := reqs[1].Messages
	if tm := second[len(second)-1]; tm.Role != llm.RoleTool || tm.Content != "echo: hi" || tm.ToolCallID != "c1" {
		t.Errorf("tool result sent to model = %+v", tm)
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "echo" {
		t.Errorf("tools offered = %+v", reqs[0].Tools)
	}
	run, err := st.Run("run_1")
	if err != nil || run.Status != store.RunDone || run.Turns != 2 {
		t.Errorf("run = %+v, %v", run, err)
	}
}

func TestToolsRunConcurrently(t *testing.T) {
	// Each tool waits until both have started: with sequential execution
	// this would deadlock (and the test would time out).
	var started sync.WaitGroup
	started.Add(2)
	barrier := tools.Func("barrier", "Waits for its sibling.", func(ctx context.Context, in echoArgs) (string, error) {
		started.Done()
		started.Wait()
		return "passed " + in.Text, nil
	})
	m := &scriptModel{}
	m.add(
		call(llm.ToolCall{ID: "a", Name: "barrier", Arguments: `{"text":"a"}`}, llm.ToolCall{ID: "b", Name: "barrier", Arguments: `{"text":"b"}`}),
		say("both passed"),
	)
	a, _ := newTestAgent(t, m, barrier)
	if _, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"}); err != nil {
		t.Fatal(err)
	}
	msgs := m.requests()[1].Messages
	n := len(msgs)
	if msgs[n-2].ToolCallID != "a" || msgs[n-1].ToolCallID != "b" || msgs[n-1].Content != "passed b" {
		t.Errorf("results out of call order: %+v", msgs[n-2:])
	}
}

func TestMalformedArgumentsGoBackToModel(t *testing.T) {
	m := &scriptModel{}
	m.add(
		call(llm.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text": "unterminated`}),
		call(llm.ToolCall{ID: "c2", Name: "nope", Arguments: `{}`}),
		call(llm.ToolCall{ID: "c3", Name: "echo", Arguments: `{"text":"fixed"}`}),
		say("done"),
	)
	a, _ := newTestAgent(t, m, echoTool())
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	results := []string{}
	for _, r := range reqs[1:] {
		results = append(results, r.Messages[len(r.Messages)-1].Content)
	}
	if !strings.Contains(results[0], "invalid arguments for echo") || !strings.Contains(results[0], "Fix the arguments") {
		t.Errorf("malformed JSON result = %q", results[0])
	}
	if !strings.Contains(results[1], `unknown tool "nope"`) {
		t.Errorf("unknown tool result = %q", results[1])
	}
	if results[2] != "echo: fixed" {
		t.Errorf("retried call result = %q", results[2])
	}
	if !is[event.Answer](evs[len(evs)-1]) {
		t.Errorf("last event = %v", kind(evs[len(evs)-1]))
	}
}

func TestPanickingToolBecomesResult(t *testing.T) {
	boom := tools.Func("boom", "Panics.", func(context.Context, echoArgs) (string, error) { panic("kaboom") })
	m := &scriptModel{}
	m.add(call(llm.ToolCall{ID: "c1", Name: "boom", Arguments: `{"text":"x"}`}), say("recovered"))
	a, _ := newTestAgent(t, m, boom)
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	var end *event.ToolResult
	for _, e := range evs {
		if e, ok := e.(event.ToolResult); ok {
			end = &e
		}
	}
	if end == nil || !end.IsError || !strings.Contains(end.Result, "failed unexpectedly") {
		t.Fatalf("tool end = %+v", end)
	}
	if strings.Contains(end.Result, "kaboom") {
		t.Errorf("panic detail leaked to the model: %q", end.Result)
	}
}

func TestStopCancelsModelStream(t *testing.T) {
	entered := make(chan struct{})
	m := &scriptModel{}
	m.add(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}, say("after stop"))
	a, st := newTestAgent(t, m)
	go func() {
		<-entered
		if !a.Stop("t1") {
			t.Error("Stop found no active run")
		}
	}()
	evs, _ := collect(a, context.Background(), Input{ThreadID: "t1", Text: "slow please", RunID: "run_1"})
	last, ok := evs[len(evs)-1].(event.Stopped)
	if !ok || !errors.Is(last.Err, ErrStopped) {
		t.Fatalf("last event = %+v", evs[len(evs)-1])
	}
	run, _ := st.Run("run_1")
	if run.Status != store.RunCancelled {
		t.Errorf("run status = %s", run.Status)
	}
	if _, ok := a.Active("t1"); ok {
		t.Error("run still active after stop")
	}
	// The thread stays usable.
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "again"})
	if err != nil || text(evs[len(evs)-1]) != "after stop" {
		t.Fatalf("next run: %v %+v", err, evs)
	}
}

func TestStopCancelsTools(t *testing.T) {
	entered := make(chan struct{})
	slow := tools.Func("slow", "Waits.", func(ctx context.Context, in echoArgs) (string, error) {
		close(entered)
		<-ctx.Done()
		return "", ctx.Err()
	})
	m := &scriptModel{}
	m.add(call(llm.ToolCall{ID: "c1", Name: "slow", Arguments: `{"text":"x"}`}))
	a, st := newTestAgent(t, m, slow)
	go func() { <-entered; a.Stop("t1") }()
	evs, _ := collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"})
	if k := evs[len(evs)-1]; !is[event.Stopped](k) {
		t.Fatalf("last event = %v", kind(k))
	}
	// Every tool call has its result stored: the history is consistent.
	if got := storedRoles(t, st, "t1"); got != "user,assistant,tool" {
		t.Errorf("stored roles = %s", got)
	}
}

func TestBusyThread(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	m := &scriptModel{}
	m.add(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		close(entered)
		<-release
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "first"}}, nil
	})
	a, _ := newTestAgent(t, m)
	done := make(chan struct{})
	go func() { collect(a, context.Background(), Input{ThreadID: "t1", Text: "one"}); close(done) }()
	<-entered
	_, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "two"})
	if !errors.Is(err, ErrThreadBusy) {
		t.Errorf("second run err = %v", err)
	}
	close(release)
	<-done
}

func TestModelErrorIsOneSentence(t *testing.T) {
	m := &scriptModel{}
	m.add(func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, &llm.Error{Kind: llm.KindAuth, Status: 401, Err: errors.New("Incorrect API key provided: sk-secret")}
	}, say("works again"))
	a, st := newTestAgent(t, m)
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "hi", RunID: "run_1"})
	last := evs[len(evs)-1]
	if err == nil || !is[event.Error](last) || strings.Contains(text(last), "sk-secret") || !strings.Contains(text(last), "API key") {
		t.Fatalf("error event = %+v (%v)", last, err)
	}
	run, _ := st.Run("run_1")
	if run.Status != store.RunError {
		t.Errorf("run status = %s", run.Status)
	}
	evs, err = collect(a, context.Background(), Input{ThreadID: "t1", Text: "hi again"})
	if err != nil || text(evs[len(evs)-1]) != "works again" {
		t.Fatalf("thread unusable after error: %v", err)
	}
	// The failed turn's user message stays in the history.
	if got := storedRoles(t, st, "t1"); got != "user,user,assistant" {
		t.Errorf("stored roles = %s", got)
	}
}

func TestMaxTurns(t *testing.T) {
	m := &scriptModel{}
	for i := 0; i < 3; i++ {
		m.add(call(llm.ToolCall{ID: "c", Name: "echo", Arguments: `{"text":"again"}`}))
	}
	a, _ := newTestAgent(t, m, echoTool())
	a.opts.MaxTurns = 3
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; !is[event.Answer](last) || !strings.Contains(text(last), "3 steps") {
		t.Fatalf("last = %+v", last)
	}
}

func TestCrashedRunIsRepaired(t *testing.T) {
	m := &scriptModel{}
	m.add(say("continuing"))
	a, st := newTestAgent(t, m)
	// A previous process died after the model asked for two tools and
	// only one result was stored.
	err := st.Update(func(tx *store.Tx) error {
		return tx.AppendMessages("t1",
			&store.Message{Role: "user", Content: "do two things"},
			&store.Message{Role: "assistant", ToolCalls: []store.ToolCall{{ID: "x", Name: "echo", Arguments: "{}"}, {ID: "y", Name: "echo", Arguments: "{}"}}},
			&store.Message{Role: "tool", ToolCallID: "x", Name: "echo", Content: "done x"},
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "are you there?"}); err != nil {
		t.Fatal(err)
	}
	sent := m.requests()[0].Messages
	var roles []string
	for _, msg := range sent[1:] {
		roles = append(roles, string(msg.Role)+":"+msg.ToolCallID)
	}
	if got := strings.Join(roles, ","); got != "user:,assistant:,tool:x,tool:y,user:" {
		t.Fatalf("sent = %s", got)
	}
	if sent[4].Content != repair.Interrupted {
		t.Errorf("synthetic result = %q", sent[4].Content)
	}
	// The repair is persisted, not redone each time.
	if got := storedRoles(t, st, "t1"); got != "user,assistant,tool,tool,user,assistant" {
		t.Errorf("stored = %s", got)
	}
}

func TestToolEventsReachWatchers(t *testing.T) {
	reporter := tools.Func("report", "Reports files.", func(ctx context.Context, in echoArgs) (string, error) {
		tools.Emit(ctx, event.Status{Line: in.Text})
		return "ok", nil
	})
	m := &scriptModel{}
	m.add(call(llm.ToolCall{ID: "c1", Name: "report", Arguments: `{"text":"/mnt/user-data/outputs/a.txt"}`}), say("sent"))
	a, _ := newTestAgent(t, m, reporter)
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e, ok := e.(event.Status); ok {
			if e.Line != "/mnt/user-data/outputs/a.txt" {
				t.Errorf("line = %q", e.Line)
			}
			return
		}
	}
	t.Fatalf("no tool event in %s", kinds(evs))
}

// A stream cut before its end is retried by ModelRetry, which tells the
// run's watchers, through the run's scope, to drop the text so far.
func TestTruncatedStreamIsResetAndRetried(t *testing.T) {
	m := &scriptModel{}
	m.add(func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, &llm.Error{Kind: llm.KindTruncated, Err: errors.New("cut")}
	}, say("whole answer"))
	a, _ := newTestAgent(t, m)
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(evs), "started,text_reset,text_delta,answer"; got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
}
