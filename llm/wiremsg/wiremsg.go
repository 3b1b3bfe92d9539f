// Package wiremsg writes the messages of a chat completion request as
// they are sent: go-openai's message, its tool calls, and the provider's
// own opaque fields, appended straight into the request.
//
// The bytes are exactly what encoding/json makes of go-openai's types
// (field order, omitted empty fields, HTML-safe escaping, U+FFFD for
// invalid UTF-8), without its reflection and its second pass over the
// output of a MarshalJSON: a request carries the whole history, so this is
// on the way of every model call. Messages with content parts (images) go
// through encoding/json as before.
//
// It imports no package of ours.
package wiremsg

import (
	"bytes"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// Message is go-openai's message, whose tool calls go in Calls, plus the
// provider's opaque fields.
type Message struct {
	openai.ChatCompletionMessage
	Calls []Call
	Extra json.RawMessage
}

// Call is go-openai's tool call plus the provider's opaque fields. Like
// every go-openai field, an empty id or name is left out.
type Call struct {
	openai.ToolCall
	Extra json.RawMessage
}

// MarshalJSON is Append to nothing.
func (m Message) MarshalJSON() ([]byte, error) { return m.Append(nil) }

// Append appends m's JSON object to b.
func (m *Message) Append(b []byte) ([]byte, error) {
	om := &m.ChatCompletionMessage
	if len(om.MultiContent) > 0 || om.Refusal != "" || om.Name != "" || om.FunctionCall != nil || len(om.ToolCalls) > 0 {
		return m.appendSlow(b)
	}
	start := len(b)
	b = append(b, `{"role":`...)
	b = String(b, om.Role)
	b = field(b, "content", om.Content)
	b = field(b, "reasoning_content", om.ReasoningContent)
	b = field(b, "tool_call_id", om.ToolCallID)
	if len(m.Calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.Calls[i].Append(b)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	return spliceAt(b, start, valid(m.Extra)), nil
}

// appendSlow is Append through encoding/json, for the fields the fast
// path does not write.
func (m *Message) appendSlow(b []byte) ([]byte, error) {
	j, err := json.Marshal(m.ChatCompletionMessage)
	if err != nil {
		return b, err
	}
	if len(m.Calls) > 0 {
		calls := []byte(`{"tool_calls":[`)
		for i := range m.Calls {
			if i > 0 {
				calls = append(calls, ',')
			}
			calls = m.Calls[i].Append(calls)
		}
		j = Splice(j, append(calls, ']', '}'))
	}
	return append(b, Splice(j, valid(m.Extra))...), nil
}

// Append appends c's JSON object to b.
func (c *Call) Append(b []byte) []byte {
	start := len(b)
	b = append(b, '{')
	if c.Index != nil {
		j, _ := json.Marshal(*c.Index) // only in streamed chunks, never sent; kept for exactness
		b = append(append(append(b, `"index":`...), j...), ',')
	}
	if c.ID != "" {
		b = append(b, `"id":`...)
		b = String(b, c.ID)
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = String(b, string(c.Type))
	b = append(b, `,"function":{`...)
	fn := len(b)
	if c.Function.Name != "" {
		b = append(b, `"name":`...)
		b = String(b, c.Function.Name)
	}
	if c.Function.Arguments != "" {
		if len(b) > fn {
			b = append(b, ',')
		}
		b = append(b, `"arguments":`...)
		b = String(b, c.Function.Arguments)
	}
	b = append(b, '}', '}')
	return spliceAt(b, start, valid(c.Extra))
}

// valid is extra, or nothing when it is not JSON (a damaged record): the
// request must stay JSON, and the fields are only the provider's hints.
func valid(extra json.RawMessage) json.RawMessage {
	if len(extra) == 0 || json.Valid(extra) {
		return extra
	}
	return nil
}

// field appends ,"name":value when value is not empty (omitempty).
func field(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return String(b, value)
}

// Splice adds the fields of the JSON object extra to the object b, as
// they are. Extra fields are the provider's own and never ours.
func Splice(b []byte, extra json.RawMessage) []byte {
	return spliceAt(b, 0, extra)
}

// spliceAt is Splice for the object that begins at b[start:] and ends b.
func spliceAt(b []byte, start int, extra json.RawMessage) []byte {
	extra = bytes.TrimSpace(extra)
	if len(extra) < 2 || extra[0] != '{' || extra[len(extra)-1] != '}' || len(b)-start < 2 {
		return b
	}
	inner := bytes.TrimSpace(extra[1 : len(extra)-1])
	if len(inner) == 0 {
		return b
	}
	b = b[:len(b)-1]
	if len(b)-start > 1 { // not "{}"
		b = append(b, ',')
	}
	b = append(b, inner...)
	return append(b, '}')
}
