package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// BenchmarkStream is one short answer from a zero-latency model through
// the fake server over loopback HTTP; the server's work is included.
func BenchmarkStream(b *testing.B) {
	s := fakeopenai.New(b)
	s.KeepRequests = 1
	s.Handle(func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "Hello! How can I help you today?", Chunk: -1}
	})
	c, _ := newClient(b, s, Options{})
	benchStream(b, c)
}

// BenchmarkStreamNoNetwork is the client's own cost: the transport hands
// back a canned stream without any I/O.
func BenchmarkStreamNoNetwork(b *testing.B) {
	const stream = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello! How can I help you today?"},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":9,"total_tokens":18}}

data: [DONE]

`
	rt := roundTripper(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		return &http.Response{
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"text/event-stream"}},
			Body:       io.NopCloser(bytes.NewReader([]byte(stream))),
			Request:    req,
		}, nil
	})
	c := New(Options{BaseURL: "http://fake/v1", Model: "m", HTTPClient: &http.Client{Transport: rt}})
	benchStream(b, c)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func benchStream(b *testing.B, c *Client) {
	req := &Request{Messages: []Message{
		{Role: RoleSystem, Content: "You are a helpful assistant."},
		{Role: RoleUser, Content: "Hi!"},
	}}
	ctx := context.Background()
	times := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		resp, err := Collect(c.Stream(ctx, req), nil)
		if err != nil || resp.FinishReason != "stop" {
			b.Fatal(err, resp)
		}
		if len(times) < cap(times) {
			times = append(times, time.Since(start))
		}
	}
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
	}
}

// BenchmarkRequestBody encodes a lead agent's request: a system prompt, a
// short history and twenty tools with schemas of a few hundred bytes each
// (the tool schemas are most of the bytes; see toolCache).
func BenchmarkRequestBody(b *testing.B) {
	c := New(Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Model: "m"})
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"` +
		strings.Repeat("where the file is, under the workspace; ", 8) + `"},"content":{"type":"string"}},"required":["path"]}`)
	req := &Request{Messages: []Message{
		{Role: RoleSystem, Content: strings.Repeat("You are a helpful agent. ", 80)},
		{Role: RoleUser, Content: "hello"}, {Role: RoleAssistant, Content: "hi, what can I do?"},
		{Role: RoleUser, Content: "ping"},
	}}
	for i := range 20 {
		req.Tools = append(req.Tools, ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: "does a thing", Parameters: schema})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.body(req, "m"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestBodyHistory is a conversation some way in: the system
// prompt, then 20 exchanges, each a question, a tool call, its result of
// about a kilobyte and an answer (the messages are most of the bytes).
func BenchmarkRequestBodyHistory(b *testing.B) {
	c := New(Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Model: "m"})
	req := &Request{Messages: []Message{{Role: RoleSystem, Content: strings.Repeat("You are a helpful agent. ", 200)}}}
	for i := range 20 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			Message{Role: RoleUser, Content: fmt.Sprintf("question %d: what is in notes.txt? <b>now</b>", i)},
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"/mnt/user-data/workspace/notes.txt"}`}}},
			Message{Role: RoleTool, ToolCallID: id, Content: strings.Repeat("a line of the file, with \"quotes\" and a tab\t;\n", 24)},
			Message{Role: RoleAssistant, Content: "The file says what you wrote — les idées, 中文 and all."})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.body(req, "m"); err != nil {
			b.Fatal(err)
		}
	}
}
