package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// streamServer replays fixture files of testdata/streams byte for byte,
// one per request, and records the request bodies.
type streamServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []string // fixture names, in order
	bodies  [][]byte
}

func newStreamServer(t *testing.T, fixtures ...string) *streamServer {
	s := &streamServer{replies: fixtures}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		name := ""
		if len(s.replies) > 0 {
			name, s.replies = s.replies[0], s.replies[1:]
		}
		s.mu.Unlock()
		if name == "" {
			http.Error(w, `{"error":{"message":"no fixture left","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(readFixture(t, name))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *streamServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func readFixture(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "streams", name))
	if err != nil {
		t.Error(err)
	}
	return b
}

// streamed is what a caller of Stream saw.
type streamed struct {
	Text, Reasoning string // the deltas, joined
	Resp            *Response
	Err             *Error
}

func streamFixture(t *testing.T, c *Client, req *Request) streamed {
	t.Helper()
	var got streamed
	for ch, err := range c.Stream(context.Background(), req) {
		if err != nil {
			got.Err = kindOf(t, err)
			break
		}
		got.Text += ch.Text
		got.Reasoning += ch.Reasoning
		if ch.Done != nil {
			got.Resp = ch.Done
		}
	}
	return got
}

// want is what a caller sees of a stream.
type want struct {
	text, reasoning string
	calls           []ToolCall
	usage           Usage
	finish          string
	kind            Kind   // for a failure
	providerMessage string // for a failure
}

// providerStreams are the fixtures of testdata/streams and what a caller
// must get from each.
var providerStreams = []struct {
	fixture string
	want    want
}{
	{"openai_text_usage.sse", want{text: "Hello! How can I help?", finish: "stop",
		usage: Usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29, ReasoningTokens: 3, CachedTokens: 8}}},
	{"openai_parallel_tools.sse", want{finish: "tool_calls", usage: Usage{PromptTokens: 80, CompletionTokens: 40, TotalTokens: 120},
		calls: []ToolCall{
			{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather", Arguments: `{"location": "Paris, France"}`},
			{ID: "call_ABCD9pD3xa9XTPNJ32zg2hcB", Name: "get_weather", Arguments: `{"location": "Bogotá, Colombia"}`},
		}}},
	{"gemini_thought_signature.sse", want{finish: "tool_calls", usage: Usage{PromptTokens: 61, CompletionTokens: 24, TotalTokens: 193, ReasoningTokens: 108},
		calls: []ToolCall{
			{ID: "function-call-f3b9ecb3-d55f-4076-98c8-b13e9d1c0e01", Name: "get_current_temperature", Arguments: `{"location":"Paris"}`,
				Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"CiQBVKhc7hRp3Xz0pRTQ7yQ1sig+A=="}}}`)},
			{ID: "function-call-335673ad-913e-42d1-bbf5-387c8ab80f44", Name: "get_current_temperature", Arguments: `{"location":"London"}`},
		}}},
	{"gemini_calls_without_index_or_id.sse", want{finish: "stop", usage: Usage{PromptTokens: 50, CompletionTokens: 20, TotalTokens: 70},
		calls: []ToolCall{
			{ID: "call_0", Name: "web_search", Arguments: `{"query":"weather Paris"}`},
			{ID: "call_1", Name: "web_search", Arguments: `{"query":"weather London"}`},
		}}},
	{"mistral_content_parts.sse", want{text: "2 + 2 = 4.", reasoning: "The user asks for 2+2. That is 4.", finish: "stop",
		usage: Usage{PromptTokens: 12, CompletionTokens: 28, TotalTokens: 40}}},
	{"groq_error_event.sse", want{text: "The capital of", kind: KindServer,
		providerMessage: "Service Unavailable: the model is over capacity, please retry"}},
	{"openrouter_reasoning_details.sse", want{text: "Hi there!", reasoning: "Let me think.", finish: "stop",
		usage: Usage{PromptTokens: 42, CompletionTokens: 30, TotalTokens: 72, ReasoningTokens: 12, CachedTokens: 16}}},
	{"openrouter_finish_error.sse", want{text: "Here is the first part of", kind: KindServer, providerMessage: "Provider disconnected unexpectedly"}},
	{"deepseek_reasoning_content.sse", want{text: "9.8 is greater.", reasoning: "9.11 vs 9.8: compare tenths.", finish: "stop",
		usage: Usage{PromptTokens: 18, CompletionTokens: 60, TotalTokens: 78, ReasoningTokens: 52}}},
	{"qwen_dashscope_thinking.sse", want{text: "我是通义千问。", reasoning: "嗯，用户问我是谁。", finish: "stop",
		usage: Usage{PromptTokens: 10, CompletionTokens: 360, TotalTokens: 370, ReasoningTokens: 340}}},
	{"ollama_reasoning.sse", want{text: "Hello!", reasoning: "Okay, a greeting.", finish: "stop",
		usage: Usage{PromptTokens: 11, CompletionTokens: 24, TotalTokens: 35}}},
	{"length_tool_call.sse", want{finish: "length", calls: []ToolCall{
		{ID: "call_read", Name: "read_file", Arguments: `{"path":"a.txt"}`},
		{ID: "call_write", Name: "write_file", Arguments: `{"path":"b.txt","content":"lorem ip`, Truncated: true},
	}}},
	{"length_answer.sse", want{text: "The three reasons are: first, the", finish: "length", usage: Usage{PromptTokens: 5, CompletionTokens: 8, TotalTokens: 13}}},
	{"cut_mid_stream.sse", want{text: "Once upon", kind: KindTruncated}},
	{"sse_framing.sse", want{text: "Line one, line two", finish: "stop"}},
}

// TestProviderStreams replays what each provider sends, as its public
// documentation shows it, and checks what the caller gets.
func TestProviderStreams(t *testing.T) {
	for _, tt := range providerStreams {
		t.Run(strings.TrimSuffix(tt.fixture, ".sse"), func(t *testing.T) {
			s := newStreamServer(t, tt.fixture, "openai_text_usage.sse")
			c, sl := fixtureClient(t, s.URL, Options{MaxRetries: 2})
			got := streamFixture(t, c, userRequest("hi"))
			if n := len(s.requests()); n != 1 || len(sl.all()) != 0 {
				t.Errorf("%d requests, %d retries; want 1, 0", n, len(sl.all()))
			}
			checkStreamed(t, got, tt.want)
		})
	}
}

// checkStreamed compares what a caller saw with w.
func checkStreamed(t *testing.T, got streamed, w want) {
	t.Helper()
	if got.Text != w.text || got.Reasoning != w.reasoning {
		t.Errorf("streamed text %q, reasoning %q; want %q, %q", got.Text, got.Reasoning, w.text, w.reasoning)
	}
	if w.kind != KindUnknown {
		if got.Err == nil {
			t.Fatalf("no error; response %+v", got.Resp)
		}
		e := got.Err
		if e.Kind != w.kind || e.Partial != w.text || e.ProviderMessage != w.providerMessage {
			t.Errorf("error %v: kind %v, partial %q, provider message %q; want %v, %q, %q",
				e, e.Kind, e.Partial, e.ProviderMessage, w.kind, w.text, w.providerMessage)
		}
		return
	}
	if got.Err != nil {
		t.Fatal(got.Err)
	}
	wantResp := &Response{
		Message:      Message{Role: RoleAssistant, Content: w.text, Reasoning: w.reasoning, ToolCalls: w.calls},
		FinishReason: w.finish,
		Usage:        w.usage,
	}
	// An id made for a call that came without one is unique per response
	// (call_<8 hex>_<index>); the expectations name it call_<index>.
	seen := map[string]bool{}
	for i, c := range got.Resp.Message.ToolCalls {
		if seen[c.ID] {
			t.Errorf("two calls share the id %q", c.ID)
		}
		seen[c.ID] = true
		got.Resp.Message.ToolCalls[i].ID = madeID.ReplaceAllString(c.ID, "call_$1")
	}
	if diff := cmp.Diff(wantResp, got.Resp, cmpopts.IgnoreFields(Message{}, "Extra", "Provider")); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

var madeID = regexp.MustCompile(`^call_[0-9a-f]{8}_([0-9]+)$`)

func fixtureClient(t *testing.T, base string, o Options) (*Client, *sleeps) {
	sl := &sleeps{}
	o.BaseURL, o.Sleep = base+"/v1", sl.sleep
	if o.Model == "" {
		o.Model = "m"
	}
	o.Logf = func(_ context.Context, format string, args ...any) { t.Logf(format, args...) }
	return New(o), sl
}
