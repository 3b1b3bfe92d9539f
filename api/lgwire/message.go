// Package lgwire is LangGraph Server's wire format, as the HTTP API speaks
// it: LangChain messages, a thread's state, a run's input, and a run's
// typed events translated into LangGraph stream events. It holds pure
// conversions, and the API's records in the store that package api
// writes and package gateway reads (records.go); the routes are theirs.
//
// It imports event and store only.
package lgwire

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/store"
)

// Message is a LangChain message as LangGraph clients read it.
type Message struct {
	Type    string `json:"type"` // human, ai, tool, system (AIMessageChunk in a stream)
	Content any    `json:"content"`
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	// ToolCalls is an ai message's calls (always a list for ai).
	ToolCalls      []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallChunks []ToolCallChunk `json:"tool_call_chunks,omitempty"`
	ToolCallID     string          `json:"tool_call_id,omitempty"`
	Status         string          `json:"status,omitempty"` // a tool message's success or error
	// AdditionalKwargs carries reasoning_content; ResponseMetadata the
	// finish_reason.
	AdditionalKwargs map[string]any `json:"additional_kwargs"`
	ResponseMetadata map[string]any `json:"response_metadata"`
	UsageMetadata    *Usage         `json:"usage_metadata,omitempty"`
}

// ToolCall is one call of an ai message; Args is a JSON object.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Type string          `json:"type"` // "tool_call"
}

// ToolCallChunk is a streamed piece of a tool call.
type ToolCallChunk struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Args  string `json:"args"`
	Index int    `json:"index"`
	Type  string `json:"type"` // "tool_call_chunk"
}

// Usage is a message's usage_metadata.
type Usage struct {
	Input  int `json:"input_tokens"`
	Output int `json:"output_tokens"`
	Total  int `json:"total_tokens"`
}

// AIID is the id of a run's k-th assistant message (from 0), the same in
// a stream and in the thread's state afterwards, so clients merge them.
func AIID(runID string, k int) string { return runID + "-ai-" + strconv.Itoa(k) }

// HumanID is the id of the message that started a run.
func HumanID(runID string) string { return runID + "-human" }

// ToolID is the id of a tool call's result in run runID: run-scoped, as a
// provider may reuse call ids across turns.
func ToolID(runID, callID string) string {
	if runID == "" {
		return "tool-" + callID
	}
	return runID + "-tool-" + callID
}

func newMessage(typ string, content any, id string) Message {
	return Message{Type: typ, Content: content, ID: id, AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{}}
}

// FromStore converts a thread's stored messages to LangChain messages,
// leaving out hidden and system ones.
func FromStore(msgs []*store.Message) []Message {
	out := make([]Message, 0, len(msgs))
	EachFromStore(msgs, func(_ *store.Message, m Message) { out = append(out, m) })
	return out
}

// EachFromStore calls fn with each of a thread's stored messages that
// clients see, in order, and its LangChain form (ids as FromStore's).
func EachFromStore(msgs []*store.Message, fn func(*store.Message, Message)) {
	ai := map[string]int{} // run id → assistant messages so far
	for _, m := range msgs {
		if m.Hidden || m.Role == "system" {
			continue
		}
		id := "msg-" + strconv.FormatUint(m.Seq, 10)
		switch m.Role {
		case "user":
			if m.RunID != "" {
				id = HumanID(m.RunID)
			}
			fn(m, newMessage("human", m.Content, id))
		case "assistant":
			if m.RunID != "" {
				id = AIID(m.RunID, ai[m.RunID])
				ai[m.RunID]++
			}
			msg := newMessage("ai", m.Content, id)
			msg.ToolCalls = []ToolCall{}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Args: argsObject(c.Arguments), Type: "tool_call"})
			}
			if m.Reasoning != "" {
				msg.AdditionalKwargs["reasoning_content"] = m.Reasoning
			}
			fn(m, msg)
		case "tool":
			fn(m, toolMessage(m.RunID, m.ToolCallID, m.Name, m.Content, false))
		}
	}
}

// argsObject is a tool call's arguments as a JSON object ({} when they
// are not one).
func argsObject(s string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}

// Artifacts are the virtual paths of the files presented in msgs
// (present_files calls), first presentation first, without repeats.
func Artifacts(msgs []*store.Message) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name != "present_files" {
				continue
			}
			var args struct {
				Filepaths []string `json:"filepaths"`
			}
			json.Unmarshal([]byte(c.Arguments), &args)
			for _, p := range args.Filepaths {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// ErrNoInput: the input has no message to run.
var ErrNoInput = errors.New("input has no human message")

// inputMessage is a message of a run's input, in LangChain ({type,
// content}) or OpenAI ({role, content}) shape.
type inputMessage struct {
	Role    string          `json:"role"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// InputText is the person's message in a run's input: an object with
// messages (the last human/user one counts), or with content, message or
// text.
func InputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`input is required: {"messages":[{"role":"user","content":"…"}]}`)
	}
	var obj struct {
		Content  *string        `json:"content"`
		Message  *string        `json:"message"`
		Text     *string        `json:"text"`
		Messages []inputMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", errors.New("input must be an object with messages")
	}
	for _, v := range []*string{obj.Content, obj.Message, obj.Text} {
		if v != nil {
			return *v, nil
		}
	}
	for i := len(obj.Messages) - 1; i >= 0; i-- {
		m := obj.Messages[i]
		kind := strings.ToLower(m.Type + m.Role)
		if kind != "human" && kind != "user" && kind != "humanuser" {
			continue
		}
		return contentText(m.Content)
	}
	return "", ErrNoInput
}

// contentText reads a message's content: a string or a list of parts, of
// which the text ones count.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return "", errors.New("a message's content must be a string or a list of parts")
	}
	var sb strings.Builder
	for _, p := range parts {
		var part struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(p, &s) == nil {
			sb.WriteString(s)
		} else if json.Unmarshal(p, &part) == nil && part.Type == "text" {
			sb.WriteString(part.Text)
		}
	}
	return sb.String(), nil
}

// Parsed is a message a client gives a thread (POST …/state): a person's
// or an assistant's.
type Parsed struct {
	Role    string // user or assistant
	Content string
}

// ParseMessages reads a list of LangChain or OpenAI messages.
func ParseMessages(raw json.RawMessage) ([]Parsed, error) {
	var list []inputMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("messages must be a list of messages")
	}
	var out []Parsed
	for _, m := range list {
		role := map[string]string{"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}[strings.ToLower(m.Type+m.Role)]
		text, err := contentText(m.Content)
		if role == "" || err != nil {
			return nil, errors.New("each message must be a human or ai message with text content")
		}
		out = append(out, Parsed{Role: role, Content: text})
	}
	return out, nil
}
