package llm

import (
	"context"
	"encoding/json"
	"iter"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sentMessages decodes the messages of a request body, each as its fields.
func sentMessages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	return req.Messages
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestOpaqueRoundTrip: what a provider attaches to its answer for the
// next request (Gemini's thought signatures, OpenRouter's
// reasoning_details) goes back to it exactly, on the right tool call, and
// never to another provider: another model, or another base URL.
func TestOpaqueRoundTrip(t *testing.T) {
	tests := []struct {
		fixture string
		// the assistant message's fields, and each tool call's, that must
		// come back, as JSON; nil where nothing may
		message map[string]string
		calls   []map[string]string
	}{
		{"gemini_thought_signature.sse", nil, []map[string]string{
			{"extra_content": `{"google":{"thought_signature":"CiQBVKhc7hRp3Xz0pRTQ7yQ1sig+A=="}}`},
			nil,
		}},
		{"openrouter_reasoning_details.sse", map[string]string{"reasoning_details": `[
			{"type":"reasoning.text","text":"Let me think.","signature":"EqQBCkYIBxgCKkDUmHSz3Q==","format":"anthropic-claude-v1","index":0},
			{"type":"reasoning.encrypted","data":"gAAAAABoVbXHZ7Q==","format":"anthropic-claude-v1","index":1}]`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			bodies := roundTrip(t, tt.fixture)
			same := sentMessages(t, bodies[1])[1]
			for k, v := range tt.message {
				if diff := cmp.Diff(jsonValue(t, v), same[k]); diff != "" {
					t.Errorf("message field %s (-want +got):\n%s", k, diff)
				}
			}
			sentCalls, _ := same["tool_calls"].([]any)
			if len(sentCalls) != len(tt.calls) {
				t.Fatalf("sent %d tool calls, want %d", len(sentCalls), len(tt.calls))
			}
			for i, want := range tt.calls {
				got := sentCalls[i].(map[string]any)
				for _, k := range opaqueFields {
					var w any
					if v, ok := want[k]; ok {
						w = jsonValue(t, v)
					}
					if diff := cmp.Diff(w, got[k]); diff != "" {
						t.Errorf("tool call %d field %s (-want +got):\n%s", i, k, diff)
					}
				}
			}
			for n, body := range bodies[2:] {
				checkStripped(t, n+3, sentMessages(t, body)[1])
			}
		})
	}
}

// opaqueFields are the provider's fields that go back only to it.
var opaqueFields = []string{"extra_content", "reasoning_details"}

// roundTrip gets the fixture's answer and sends it back, kept as the
// agent keeps it (through JSON), with tool results: to the same provider,
// to another model, and to another base URL. It returns the four bodies.
func roundTrip(t *testing.T, fixture string) [][]byte {
	t.Helper()
	s := newStreamServer(t, fixture, "openai_text_usage.sse", "openai_text_usage.sse", "openai_text_usage.sse")
	c, _ := fixtureClient(t, s.URL, Options{})
	req := userRequest("weather in Paris and London?")
	resp, err := Collect(c.Stream(context.Background(), req), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Provider != c.Provider("m") || c.Provider("m") != s.URL+"/v1|m" {
		t.Errorf("provider %q, client's %q", resp.Message.Provider, c.Provider("m"))
	}
	var kept Message
	b, _ := json.Marshal(resp.Message)
	if err := json.Unmarshal(b, &kept); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, kept)
	for _, tc := range kept.ToolCalls {
		req.Messages = append(req.Messages, Message{Role: RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: "21°C"})
	}
	other, _ := fixtureClient(t, s.URL+"/elsewhere", Options{})
	otherModel := *req
	otherModel.Model = "another-model"
	for _, send := range []iter.Seq2[Chunk, error]{
		c.Stream(context.Background(), req),
		c.Stream(context.Background(), &otherModel),
		other.Stream(context.Background(), req),
	} {
		if _, err := Collect(send, nil); err != nil {
			t.Fatal(err)
		}
	}
	return s.requests()
}

// checkStripped: request n's assistant message m carries nothing opaque.
func checkStripped(t *testing.T, n int, m map[string]any) {
	t.Helper()
	calls, _ := m["tool_calls"].([]any)
	for _, k := range opaqueFields {
		if _, ok := m[k]; ok {
			t.Errorf("request %d to another provider carries %s", n, k)
		}
		for _, c := range calls {
			if _, ok := c.(map[string]any)[k]; ok {
				t.Errorf("request %d to another provider carries %s on a tool call", n, k)
			}
		}
	}
}

// TestErrorFrameBeforeData: an error frame that comes before any data is
// retried like an error response.
func TestErrorFrameBeforeData(t *testing.T) {
	s := newStreamServer(t, "error_frame_first.sse", "openai_text_usage.sse")
	c, sl := fixtureClient(t, s.URL, Options{MaxRetries: 1})
	got := streamFixture(t, c, userRequest("hi"))
	if got.Err != nil || got.Resp == nil || got.Resp.Message.Content != "Hello! How can I help?" {
		t.Fatalf("%+v", got)
	}
	if len(s.requests()) != 2 || len(sl.all()) != 1 {
		t.Errorf("%d requests, %d sleeps", len(s.requests()), len(sl.all()))
	}

	s = newStreamServer(t, "error_frame_first.sse")
	c, _ = fixtureClient(t, s.URL, Options{})
	got = streamFixture(t, c, userRequest("hi"))
	if got.Err == nil || got.Err.Kind != KindServer || got.Err.Partial != "" ||
		got.Err.ProviderMessage != "The server had an error while processing your request. Sorry about that!" {
		t.Errorf("%+v", got.Err)
	}
}

// thinkingTests are the provider switches TestThinkingSwitch checks.
var thinkingTests = []struct {
	name   string
	base   string
	opts   Options
	want   string   // JSON object: fields the body must have
	absent []string // fields it must not have
}{
	{"none", "http://api.example.com/v1", Options{}, `{}`, []string{"reasoning_effort", "thinking", "enable_thinking", "extra_body", "reasoning"}},
	{"qwen on", "https://dashscope.aliyuncs.com/compatible-mode/v1", Options{Thinking: Thinking{Mode: "on", Budget: 500}},
		`{"enable_thinking":true,"thinking_budget":500}`, []string{"reasoning_effort"}},
	{"qwen intl off", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", Options{Thinking: Thinking{Mode: "off"}},
		`{"enable_thinking":false}`, []string{"thinking_budget"}},
	{"glm", "https://open.bigmodel.cn/api/paas/v4", Options{Thinking: Thinking{Mode: "on"}}, `{"thinking":{"type":"enabled"}}`, nil},
	{"kimi off", "https://api.moonshot.ai/v1", Options{Thinking: Thinking{Mode: "off"}}, `{"thinking":{"type":"disabled"}}`, nil},
	{"deepseek", "https://api.deepseek.com", Options{Thinking: Thinking{Mode: "on"}}, `{"thinking":{"type":"enabled"}}`, nil},
	{"gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", Options{Thinking: Thinking{Mode: "on", Budget: 800}},
		`{"extra_body":{"google":{"thinking_config":{"thinking_budget":800,"include_thoughts":true}}}}`, nil},
	{"gemini off", "https://generativelanguage.googleapis.com/v1beta/openai/", Options{Thinking: Thinking{Mode: "off"}},
		`{"extra_body":{"google":{"thinking_config":{"thinking_budget":0}}}}`, nil},
	{"openrouter", "https://openrouter.ai/api/v1", Options{Thinking: Thinking{Mode: "on", Budget: 2000}},
		`{"reasoning":{"enabled":true,"max_tokens":2000}}`, nil},
	{"anthropic", "https://api.anthropic.com/v1", Options{Thinking: Thinking{Mode: "on"}},
		`{"thinking":{"type":"enabled","budget_tokens":1024}}`, nil},
	{"unknown host on", "http://localhost:8000/v1", Options{Thinking: Thinking{Mode: "on"}}, `{"reasoning_effort":"medium"}`, []string{"thinking"}},
	{"unknown host off", "http://localhost:8000/v1", Options{Thinking: Thinking{Mode: "off"}}, `{}`, []string{"reasoning_effort", "thinking"}},
	{"effort wins", "http://localhost:8000/v1", Options{Thinking: Thinking{Mode: "on"}, ReasoningEffort: "high"}, `{"reasoning_effort":"high"}`, nil},
	{"extra body merged", "https://openrouter.ai/api/v1", Options{Thinking: Thinking{Mode: "on"},
		ExtraBody: map[string]any{"reasoning": map[string]any{"exclude": true}, "stream_options": map[string]any{"x": 1}, "top_k": 20}},
		`{"reasoning":{"enabled":true,"exclude":true},"stream_options":{"include_usage":true,"x":1},"top_k":20,"stream":true}`, nil},
}

// TestThinkingSwitch: Thinking, ReasoningEffort and ExtraBody reach the
// request in each provider's own words, chosen by the base URL's host.
// Every connection goes to the test server on 127.0.0.1.
func TestThinkingSwitch(t *testing.T) {
	s := newStreamServer(t)
	addr := s.Listener.Addr().String()
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	for _, tt := range thinkingTests {
		t.Run(tt.name, func(t *testing.T) {
			s.mu.Lock()
			s.replies = append(s.replies, "openai_text_usage.sse")
			s.mu.Unlock()
			o := tt.opts
			o.BaseURL, o.APIKey, o.Model = tt.base, "k", "m"
			o.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: dial}}
			// The fake speaks plain HTTP; the host is what picks the switch.
			o.BaseURL = strings.Replace(o.BaseURL, "https://", "http://", 1)
			if _, err := Collect(New(o).Stream(context.Background(), userRequest("hi")), nil); err != nil {
				t.Fatal(err)
			}
			reqs := s.requests()
			var body map[string]any
			if err := json.Unmarshal(reqs[len(reqs)-1], &body); err != nil {
				t.Fatal(err)
			}
			for k, v := range jsonValue(t, tt.want).(map[string]any) {
				if diff := cmp.Diff(v, body[k]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
			for _, k := range tt.absent {
				if v, ok := body[k]; ok {
					t.Errorf("%s sent: %v", k, v)
				}
			}
		})
	}
}
