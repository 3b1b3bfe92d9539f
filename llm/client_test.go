package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// sleeps records the backoff delays a Client asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newClient(t testing.TB, s *fakeopenai.Server, o Options) (*Client, *sleeps) {
	sl := &sleeps{}
	o.BaseURL = s.URL
	if o.Model == "" {
		o.Model = "m"
	}
	if o.Sleep == nil {
		o.Sleep = sl.sleep
	}
	if o.Logf == nil {
		o.Logf = func(_ context.Context, format string, args ...any) { t.Logf(format, args...) }
	}
	return New(o), sl
}

func userRequest(text string) *Request {
	return &Request{Messages: []Message{{Role: RoleUser, Content: text}}}
}

// collect drains a stream, keeping every chunk.
func collect(t *testing.T, c *Client, req *Request) ([]Chunk, *Response, error) {
	t.Helper()
	var chunks []Chunk
	for ch, err := range c.Stream(context.Background(), req) {
		if err != nil {
			return chunks, nil, err
		}
		chunks = append(chunks, ch)
		if ch.Done != nil {
			return chunks, ch.Done, nil
		}
	}
	t.Fatal("stream ended without Done or error")
	return nil, nil, nil
}

func kindOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	return e
}

func TestStreamText(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{
		Text:  "Hello, wörld! How are you?",
		Chunk: 3,
		Usage: &fakeopenai.Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30},
	})
	c, _ := newClient(t, s, Options{})
	chunks, resp, err := collect(t, c, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, ch := range chunks[:len(chunks)-1] {
		if ch.Text == "" || ch.Reasoning != "" || ch.Done != nil {
			t.Errorf("chunk %+v is not a text delta", ch)
		}
		text = append(text, ch.Text)
	}
	if len(text) < 5 || strings.Join(text, "") != "Hello, wörld! How are you?" {
		t.Errorf("text deltas %q", text)
	}
	want := &Response{
		Message:      Message{Role: RoleAssistant, Content: "Hello, wörld! How are you?"},
		FinishReason: "stop",
		Usage:        Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response %+v, want %+v", resp, want)
	}
	r := s.Requests()[0]
	if r.Model != "m" || !r.Stream || !r.IncludeUsage || r.Header.Get("Authorization") != "" {
		t.Errorf("request %+v", r)
	}
}

func TestStreamReasoning(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Reasoning: "Let me think about it.", Text: "42", Chunk: 5})
	c, _ := newClient(t, s, Options{})
	chunks, resp, err := collect(t, c, userRequest("?"))
	if err != nil {
		t.Fatal(err)
	}
	var reasoning string
	for _, ch := range chunks {
		reasoning += ch.Reasoning
	}
	if reasoning != "Let me think about it." || chunks[0].Reasoning == "" || len(chunks) < 6 {
		t.Errorf("reasoning chunks %+v", chunks)
	}
	if resp.Message.Reasoning != "Let me think about it." || resp.Message.Content != "42" {
		t.Errorf("response %+v", resp.Message)
	}
}

func TestStreamToolCalls(t *testing.T) {
	calls := []fakeopenai.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.txt","note":"ünïcode"}`},
		{ID: "call_b", Name: "bash", Arguments: `{"command":"ls -la /tmp && echo done"}`},
	}
	want := []ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: calls[0].Arguments},
		{ID: "call_b", Name: "bash", Arguments: calls[1].Arguments},
	}
	for _, tt := range []struct {
		name string
		turn fakeopenai.Turn
	}{
		{"sequential", fakeopenai.Turn{Text: "Let me check.", ToolCalls: calls, Chunk: 4}},
		{"interleaved", fakeopenai.Turn{ToolCalls: calls, Chunk: 3, Interleave: true}},
		{"no index", fakeopenai.Turn{ToolCalls: calls, Chunk: 5, OmitIndex: true}},
		{"whole", fakeopenai.Turn{ToolCalls: calls, Chunk: -1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeopenai.New(t)
			s.Script(tt.turn)
			c, _ := newClient(t, s, Options{})
			_, resp, err := collect(t, c, userRequest("go"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, want) || resp.FinishReason != "tool_calls" {
				t.Errorf("got %+v %q, want %+v", resp.Message.ToolCalls, resp.FinishReason, want)
			}
			if resp.Message.Content != tt.turn.Text {
				t.Errorf("content %q", resp.Message.Content)
			}
		})
	}
}

func TestToolArgumentsCap(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "f", Arguments: strings.Repeat("a", maxToolArgs+1)}}, Chunk: 64 << 10})
	c, _ := newClient(t, s, Options{})
	_, _, err := collect(t, c, userRequest("go"))
	if e := kindOf(t, err); e.Kind != KindBadOutput {
		t.Errorf("kind %v, want bad output", e.Kind)
	}
}

// TestConversation sends back a tool round and checks what the (strict)
// fake received: no index, "(no output)" for an empty result, reasoning
// only when asked, tools only when there are some.
func TestConversation(t *testing.T) {
	history := []Message{
		{Role: RoleSystem, Content: "be brief"},
		{Role: RoleUser, Content: "list files"},
		{Role: RoleAssistant, Reasoning: "use bash", ToolCalls: []ToolCall{
			{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`},
			{ID: "c2", Name: "noargs"},
		}},
		{Role: RoleTool, ToolCallID: "c1", Name: "bash"},
		{Role: RoleTool, ToolCallID: "c2", Name: "noargs", Content: "ok"},
	}
	for _, send := range []bool{false, true} {
		s := fakeopenai.New(t)
		s.Script(fakeopenai.Turn{Text: "done"}, fakeopenai.Turn{Text: "done"})
		c, _ := newClient(t, s, Options{SendReasoning: send})
		tools := []ToolSpec{{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}, {Name: "noargs"}}
		for _, req := range []*Request{{Messages: history, Tools: tools}, {Messages: history}} {
			if _, _, err := collect(t, c, req); err != nil {
				t.Fatal(err)
			}
		}
		reqs := s.Requests()
		got := reqs[0].Messages
		if got[3].Content != "(no output)" || got[4].Content != "ok" || got[3].ToolCallID != "c1" {
			t.Errorf("tool messages %+v", got[3:])
		}
		if a := got[2]; a.ToolCalls[0].Arguments != `{"command":"ls"}` || a.ToolCalls[1].Arguments != "{}" || a.Content != "" {
			t.Errorf("assistant message %+v", a)
		}
		if (got[2].Reasoning == "use bash") != send {
			t.Errorf("SendReasoning %v: sent reasoning %q", send, got[2].Reasoning)
		}
		if n := reqs[0].ToolNames(); !reflect.DeepEqual(n, []string{"bash", "noargs"}) || string(reqs[0].Tools[1].Parameters) != string(emptySchema) {
			t.Errorf("tools %+v", reqs[0].Tools)
		}
		if strings.Contains(string(reqs[1].Body), `"tools"`) {
			t.Errorf("tools sent without tools: %s", reqs[1].Body)
		}
	}
}

func TestRequestOptions(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{}, fakeopenai.Turn{})
	c, _ := newClient(t, s, Options{})
	zero, warm := float32(0), float32(0.5)
	for _, req := range []*Request{
		{Model: "other", MaxTokens: 100, Temperature: &zero, Messages: userRequest("x").Messages},
		{Model: "gpt-5-mini", MaxTokens: 100, Temperature: &warm, Messages: userRequest("x").Messages},
	} {
		_, _, err := collect(t, c, req)
		if req.Model == "gpt-5-mini" {
			// go-openai refuses temperature for reasoning models before sending.
			if e := kindOf(t, err); e.Kind != KindBadRequest {
				t.Errorf("kind %v", e.Kind)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r := s.Requests()
	if len(r) != 1 || r[0].Model != "other" || r[0].MaxTokens != 100 || r[0].Temperature == nil || *r[0].Temperature > 1e-9 {
		t.Errorf("request %+v", r)
	}
	if !strings.Contains(string(r[0].Body), `"max_tokens":100`) {
		t.Errorf("body %s", r[0].Body)
	}
}

func TestRetryAfterHonored(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Status: 429, RetryAfter: "1"}, fakeopenai.Turn{Status: 503, RetryAfter: "2"}, fakeopenai.Turn{Text: "ok"})
	c, sl := newClient(t, s, Options{MaxRetries: 3})
	_, resp, err := collect(t, c, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || len(s.Requests()) != 3 {
		t.Errorf("response %+v after %d requests", resp, len(s.Requests()))
	}
	if got := sl.all(); !reflect.DeepEqual(got, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("slept %v, want [1s 2s]", got)
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Status: 429, RetryAfter: "120"}, fakeopenai.Turn{Text: "ok"})
	c, sl := newClient(t, s, Options{MaxRetries: 3})
	_, _, err := collect(t, c, userRequest("hi"))
	e := kindOf(t, err)
	if e.Kind != KindRateLimit || e.Status != 429 || e.RetryAfter != 120*time.Second || len(sl.all()) != 0 {
		t.Errorf("error %+v after sleeps %v", e, sl.all())
	}
}

func TestServerErrorRetried(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 502, Body: "<html>bad gateway</html>"}, fakeopenai.Turn{Text: "ok"})
	c, sl := newClient(t, s, Options{MaxRetries: 2})
	_, resp, err := collect(t, c, userRequest("hi"))
	if err != nil || resp.Message.Content != "ok" {
		t.Fatalf("%v %+v", err, resp)
	}
	got := sl.all()
	if len(got) != 2 || got[0] <= 0 || got[0] > time.Second || got[1] <= 0 || got[1] > 2*time.Second {
		t.Errorf("backoff %v, want full jitter within 1s then 2s", got)
	}
}

func TestRetriesExhausted(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Status: 500}, fakeopenai.Turn{Text: "never"})
	c, sl := newClient(t, s, Options{MaxRetries: 2})
	_, _, err := collect(t, c, userRequest("hi"))
	e := kindOf(t, err)
	if e.Kind != KindServer || e.Status != 500 || !e.Retryable() || e.Model != "m" {
		t.Errorf("error %+v", e)
	}
	if len(s.Requests()) != 3 || len(sl.all()) != 2 {
		t.Errorf("%d requests, %d sleeps", len(s.Requests()), len(sl.all()))
	}
}

func TestNotRetried(t *testing.T) {
	for _, tt := range []struct {
		name string
		turn fakeopenai.Turn
		kind Kind
	}{
		{"bad request", fakeopenai.Turn{Status: 400, Body: `{"error":{"message":"context too long","type":"invalid_request_error","code":"context_length_exceeded"}}`}, KindBadRequest},
		{"quota", fakeopenai.Turn{Status: 429, Body: `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`}, KindRateLimit},
		{"not an event stream", fakeopenai.Turn{Status: 200, Body: "<html>portal</html>"}, KindBadOutput},
		{"cut mid-stream", fakeopenai.Turn{Text: "partial answer", Chunk: 3, CutAfter: 3}, KindTruncated},
		{"error event", fakeopenai.Turn{Text: "par", StreamError: `{"message":"overloaded","type":"server_error","code":null}`}, KindServer},
		{"error event with status code", fakeopenai.Turn{Text: "par", StreamError: `{"message":"slow down","code":429}`}, KindRateLimit},
		{"cut after all content", fakeopenai.Turn{Text: "x", CutAfter: 100}, KindTruncated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeopenai.New(t)
			s.Script(tt.turn, fakeopenai.Turn{Text: "second"})
			c, sl := newClient(t, s, Options{MaxRetries: 3})
			_, _, err := collect(t, c, userRequest("hi"))
			if e := kindOf(t, err); e.Kind != tt.kind {
				t.Errorf("kind %v, want %v (%v)", e.Kind, tt.kind, err)
			}
			if n := len(s.Requests()); n != 1 || len(sl.all()) != 0 {
				t.Errorf("%d requests, sleeps %v", n, sl.all())
			}
		})
	}
}

func TestEmptyStreamRetried(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{CutAfter: -1}, fakeopenai.Turn{Text: "ok"})
	c, _ := newClient(t, s, Options{MaxRetries: 1})
	if _, resp, err := collect(t, c, userRequest("hi")); err != nil || resp.Message.Content != "ok" {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestAuth(t *testing.T) {
	s := fakeopenai.New(t)
	s.Key = "sk-right"
	s.Script(fakeopenai.Turn{Text: "ok"})
	c, sl := newClient(t, s, Options{APIKey: "sk-wrong-secret", MaxRetries: 3})
	_, _, err := collect(t, c, userRequest("hi"))
	e := kindOf(t, err)
	if e.Kind != KindAuth || e.Status != 401 || len(sl.all()) != 0 {
		t.Errorf("error %+v", e)
	}
	if msg := UserMessage(err); !strings.Contains(msg, "key") {
		t.Errorf("user message %q", msg)
	}
	if strings.Contains(err.Error(), "sk-wrong-secret") {
		t.Errorf("key leaked: %v", err)
	}
	if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-wrong-secret" {
		t.Errorf("Authorization %q", got)
	}

	c, _ = newClient(t, s, Options{APIKey: "sk-right"})
	if _, _, err := collect(t, c, userRequest("hi")); err != nil {
		t.Fatal(err)
	}
}

func TestNoKey(t *testing.T) {
	for _, base := range []string{"", "https://api.openai.com/v1", "https://API.openai.com/v1/"} {
		c := New(Options{BaseURL: base, Model: "gpt-4o"})
		_, err := Collect(c.Stream(context.Background(), userRequest("hi")), nil)
		if e := kindOf(t, err); e.Kind != KindNoKey {
			t.Errorf("base %q: kind %v", base, e.Kind)
		}
	}
}

func TestUnknownModel(t *testing.T) {
	s := fakeopenai.New(t)
	s.Models = []string{"m"}
	c, _ := newClient(t, s, Options{MaxRetries: 3})
	req := userRequest("hi")
	req.Model = "nope"
	_, _, err := collect(t, c, req)
	e := kindOf(t, err)
	if e.Kind != KindModel || e.Model != "nope" || !strings.Contains(UserMessage(err), `"nope"`) {
		t.Errorf("error %+v: %s", e, UserMessage(err))
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sl := &sleeps{}
	c := New(Options{BaseURL: "http://" + addr + "/v1", Model: "m", MaxRetries: 2, Sleep: sl.sleep})
	_, err = Collect(c.Stream(context.Background(), userRequest("hi")), nil)
	e := kindOf(t, err)
	if e.Kind != KindUnreachable || len(sl.all()) != 2 {
		t.Errorf("error %+v after sleeps %v", e, sl.all())
	}
	if msg := UserMessage(err); !strings.Contains(msg, "can't reach") {
		t.Errorf("told the user %q", msg)
	}
}

func TestTimeout(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Hold: make(chan struct{})})
	c, _ := newClient(t, s, Options{Timeout: 50 * time.Millisecond, MaxRetries: 3})
	_, _, err := collect(t, c, userRequest("hi"))
	e := kindOf(t, err)
	if e.Kind != KindUnreachable || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
	// The endpoint was reached; it was slow. Saying "can't reach" would
	// send the operator after the network.
	if msg := UserMessage(err); msg != "The model took too long to answer; please try again in a moment." {
		t.Errorf("told the user %q", msg)
	}
	s.WaitCancelled(1)
}

// TestRoundTrip sends an assembled answer back with its tool results, as
// the agent loop does; the strict fake accepts it.
func TestRoundTrip(t *testing.T) {
	s := fakeopenai.New(t)
	s.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if r.Last().Role == "user" {
			return fakeopenai.Turn{Reasoning: "two lookups", ToolCalls: []fakeopenai.ToolCall{
				{Name: "lookup", Arguments: `{"q":"a"}`}, {Name: "lookup", Arguments: `{"q":"b"}`},
			}}
		}
		return fakeopenai.Turn{Text: "both done"}
	})
	c, _ := newClient(t, s, Options{SendReasoning: true})
	req := &Request{Messages: []Message{{Role: RoleUser, Content: "look up a and b"}}, Tools: []ToolSpec{{Name: "lookup"}}}
	resp, err := Collect(c.Stream(context.Background(), req), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, resp.Message)
	for _, tc := range resp.Message.ToolCalls {
		req.Messages = append(req.Messages, Message{Role: RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: "found " + tc.Arguments})
	}
	resp, err = Collect(c.Stream(context.Background(), req), nil)
	if err != nil || resp.Message.Content != "both done" {
		t.Fatalf("%v %+v", err, resp)
	}
	sent := s.Requests()[1].Messages
	if len(sent) != 4 || sent[1].Reasoning != "two lookups" || sent[3].Content != `found {"q":"b"}` {
		t.Errorf("second request %+v", sent)
	}
}
