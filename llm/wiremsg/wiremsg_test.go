package wiremsg

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// reference is what encoding/json makes of m: go-openai's own MarshalJSON
// for the message, the calls marshalled by encoding/json and spliced in,
// then the provider's fields (the encoder this package replaced).
func reference(t *testing.T, m Message) []byte {
	t.Helper()
	b, err := json.Marshal(m.ChatCompletionMessage)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Calls) > 0 {
		var calls []json.RawMessage
		for _, c := range m.Calls {
			j, err := json.Marshal(c.ToolCall)
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, Splice(j, c.Extra))
		}
		j, err := json.Marshal(struct {
			Calls []json.RawMessage `json:"tool_calls"`
		}{calls})
		if err != nil {
			t.Fatal(err)
		}
		b = Splice(b, j)
	}
	return Splice(b, m.Extra)
}

// strs are the strings an attacker, a model or a foreign script sends.
var strs = []string{
	"", "hello", `quote " backslash \ slash /`, "<script>alert('x')</script> & co",
	"line\nbreak\r\ttab\b\f\x00\x01\x1f\x7f", "emoji 🦌 and 中文 and ünïcödé",
	"separators \u2028 and \u2029", "bad utf-8 \xff\xfe and cut \xe4\xb8",
	`{"path":"a.txt","content":"x"}`, strings.Repeat("long ", 2000),
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	idx := 2
	var msgs []Message
	for _, s := range strs {
		msgs = append(msgs,
			Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "user", Content: s}},
			Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "tool", Content: s, ToolCallID: "call_" + s}},
			Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "assistant", Content: s, ReasoningContent: s},
				Calls: []Call{
					{ToolCall: openai.ToolCall{ID: s, Type: "function", Function: openai.FunctionCall{Name: "write_file", Arguments: s}}},
					{ToolCall: openai.ToolCall{Type: "function", Function: openai.FunctionCall{Arguments: "{}"}}, Extra: json.RawMessage(`{"thought_signature":"c2ln"}`)},
					{ToolCall: openai.ToolCall{Index: &idx, ID: "x", Type: "function"}},
				},
				Extra: json.RawMessage(`{"reasoning_details":[{"type":"reasoning.text","text":"hm"}]}`)},
			// The fields the fast path leaves to encoding/json.
			Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "assistant", Name: s, Refusal: "no"}},
			Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
				{Type: "text", Text: s}, {Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AA==", Detail: "auto"}}}}},
		)
	}
	for i, m := range msgs {
		got, err := m.Append([]byte("prefix,"))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if want := append([]byte("prefix,"), reference(t, m)...); !bytes.Equal(got, want) {
			t.Errorf("%d: Append =\n%s\nencoding/json =\n%s", i, got, want)
		}
		if !json.Valid(got[len("prefix,"):]) {
			t.Errorf("%d: not JSON: %s", i, got)
		}
	}
}

// A damaged record's provider fields are left out, and the request stays
// JSON.
func TestAppendDropsBrokenExtra(t *testing.T) {
	m := Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: "assistant", Content: "hi"},
		Calls: []Call{{ToolCall: openai.ToolCall{ID: "a", Type: "function"}, Extra: json.RawMessage(`{"x":`)}},
		Extra: json.RawMessage(`{"y":[}`)}
	got, err := m.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"role":"assistant","content":"hi","tool_calls":[{"id":"a","type":"function","function":{}}]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := String(nil, s); !bytes.Equal(got, want) {
			t.Errorf("String(%q) = %s, encoding/json: %s", s, got, want)
		}
	})
}
