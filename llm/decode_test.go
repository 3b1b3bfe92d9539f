package llm

import (
	"encoding/json"
	"testing"

	"github.com/deerflow/deerflow/llm/sse"
)

// TestContentParts: content is a string, null, or an array of typed parts.
func TestContentParts(t *testing.T) {
	tests := []struct {
		in   string
		want content
	}{
		{`"hi"`, content{Text: "hi"}},
		{`null`, content{}},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, content{Text: "ab"}},
		{`[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"x"}]`, content{Text: "x", Thinking: "hm"}},
		{`[{"type":"thinking","thinking":"plain"}]`, content{Thinking: "plain"}},
		{`[{"type":"image_url","image_url":{"url":"x"}}]`, content{}},
	}
	for _, tt := range tests {
		var got content
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	var c content
	if err := json.Unmarshal([]byte(`{"text":"x"}`), &c); err == nil {
		t.Error("an object accepted as content")
	}
}

// FuzzDecodeEvent: no chunk makes decoding or assembly panic.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"a"}]}],"tool_calls":[{"function":{"name":"f","arguments":"{"}}],"reasoning_details":[{"type":"reasoning.text","text":"x","index":0}]},"finish_reason":"length"}],"usage":{"prompt_tokens":1}}`))
	f.Add([]byte(`{"error":"boom"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeEvent(sse.Event{Data: b})
		if err != nil {
			return
		}
		var a answer
		if _, err := a.add(c, func(Chunk, error) bool { return true }); err == nil {
			a.response()
		}
	})
}
