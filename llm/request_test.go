package llm

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantRequest is the body TestRequestJSON expects.
const wantRequest = `{
	"model": "m", "stream": true, "stream_options": {"include_usage": true, "x": 1},
	"max_tokens": 512, "temperature": 0, "reasoning_effort": "low", "top_k": 20,
	"messages": [
		{"role": "system", "content": "Be brief."},
		{"role": "user", "content": [
			{"type": "text", "text": "What is this?"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,cG5n", "detail": "auto"}}]},
		{"role": "assistant", "reasoning_content": "Look it up.",
			"reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}],
			"tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"png\"}"},
					"extra_content": {"google": {"thought_signature": "sig"}}},
				{"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "an image format"},
		{"role": "tool", "tool_call_id": "c2", "content": "(no output)"}],
	"tools": [
		{"type": "function", "function": {"name": "search", "description": "Search the web.",
			"parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
		{"type": "function", "function": {"name": "now", "description": "The time.",
			"parameters": {"type": "object", "properties": {}}}}]
}`

// TestRequestJSON: a representative request goes out as wantRequest —
// go-openai's fields, a zero temperature kept, the opaque fields spliced
// in, the effort and ExtraBody merged on top.
func TestRequestJSON(t *testing.T) {
	c := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ReasoningEffort: "low", SendReasoning: true,
		ExtraBody: map[string]any{"top_k": 20, "stream_options": map[string]any{"x": 1}}})
	zero := float32(0)
	req := &Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "Be brief."},
			{Role: RoleUser, Content: "What is this?", Images: []Image{{MIME: "image/png", Data: []byte("png")}}},
			{Role: RoleAssistant, Reasoning: "Look it up.", Provider: c.Provider("m"),
				Extra: json.RawMessage(`{"reasoning_details":[{"type":"reasoning.encrypted","data":"x"}]}`),
				ToolCalls: []ToolCall{
					{ID: "c1", Name: "search", Arguments: `{"q":"png"}`,
						Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"sig"}}}`)},
					{ID: "c2", Name: "now"},
				}},
			{Role: RoleTool, ToolCallID: "c1", Name: "search", Content: "an image format"},
			{Role: RoleTool, ToolCallID: "c2", Name: "now"},
		},
		Tools: []ToolSpec{
			{Name: "search", Description: "Search the web.", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			{Name: "now", Description: "The time."},
		},
		MaxTokens:   512,
		Temperature: &zero,
	}
	b, err := c.body(req, "m")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonValue(t, wantRequest), jsonValue(t, string(b))); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// TestRequestJSONPlain: without ExtraBody the body is go-openai's
// encoding as it is; a reasoning model gets max_completion_tokens.
func TestRequestJSONPlain(t *testing.T) {
	c := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ReasoningEffort: "low"})
	b, err := c.body(&Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, MaxTokens: 100}, "o3")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model": "o3", "stream": true, "stream_options": {"include_usage": true}, "reasoning_effort": "low",
		"max_completion_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}`
	if diff := cmp.Diff(jsonValue(t, want), jsonValue(t, string(b))); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// TestUnparsableArgumentsGoBackAsObject: a call whose arguments are not
// JSON (cut at the length limit, or malformed by the model) is sent back
// with {} as its arguments: Ollama refuses a whole request that carries
// one, and the conversation could never go on.
func TestUnparsableArgumentsGoBackAsObject(t *testing.T) {
	c := New(Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Model: "m"})
	req := &Request{Messages: []Message{
		{Role: RoleUser, Content: "write it"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "a", Name: "write_file", Arguments: `{"path":"b.txt","content":"lorem ip`, Truncated: true},
			{ID: "b", Name: "read_file", Arguments: `{"path":"a.txt"}`},
			{ID: "c", Name: "list", Arguments: ``},
		}},
	}}
	body, err := c.body(req, "m")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string } `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, tc := range got.Messages[1].ToolCalls {
		args = append(args, tc.Function.Arguments)
	}
	if diff := cmp.Diff([]string{`{}`, `{"path":"a.txt"}`, `{}`}, args); diff != "" {
		t.Errorf("arguments sent back (-want +got):\n%s", diff)
	}
}
