// Package llm is the chat-model client: one streaming call to an
// OpenAI-compatible endpoint, with tool-call assembly, usage, reasoning
// content, retries and user-facing error classification. It reads the
// event stream itself (sse.go) and decodes chunks with its own types
// (wire.go), so that providers' variations decode: content as typed parts
// (Mistral), reasoning under three names, tool calls without index or id
// (Gemini), error events (Groq, OpenRouter), and opaque fields that must
// go back to the provider that sent them (thought signatures,
// reasoning_details). Each quirk has a fixture in testdata/streams.
// Requests are go-openai's types, wrapped to carry those opaque fields
// (request.go); error objects are go-openai's APIError, and ListModels
// asks go-openai's client.
//
// It imports no package of ours but llm/sse, its event-stream reader.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"unicode/utf8"
)

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation as the model sees it.
type Message struct {
	Role      Role       `json:"role"`
	Content   string     `json:"content,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"` // reasoning_content, reasoning or reasoning_details' text
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name are set on RoleTool messages: the call answered
	// and the tool's name.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	// Extra holds the provider's opaque fields of an assistant message as
	// one JSON object (e.g. {"reasoning_details": [...]}), kept verbatim.
	// They are sent back, merged into the message, only to Provider.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Provider is who wrote the Extra fields here and on the tool calls:
	// the base URL and the model, joined by "|" (see Client.Provider).
	Provider string `json:"provider,omitempty"`
	// Images go with a user message to models that see images.
	Images []Image `json:"-"`
}

// Image is an image given to the model inline.
type Image struct {
	MIME string // image/png, image/jpeg, image/gif or image/webp
	Data []byte
}

// ToolCall is one function call requested by the model. Arguments is the raw
// JSON text the model produced; it may be malformed.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Extra holds the provider's opaque fields of the call as one JSON
	// object (e.g. {"extra_content": {"google": {"thought_signature":
	// "..."}}}), sent back verbatim only to the message's Provider.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Truncated marks a call cut by the output length limit: its
	// arguments may be incomplete, so it must not be run.
	Truncated bool `json:"truncated,omitempty"`
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON schema of the arguments object
}

// Request is one model call. Tools travel with every request; they are never
// bound to a model instance.
type Request struct {
	Model       string // provider model id; empty means the client's default
	Messages    []Message
	Tools       []ToolSpec
	MaxTokens   int      // 0: provider default
	Temperature *float32 // nil: provider default
}

// Usage is the token accounting of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"` // of CompletionTokens, when the provider says
	CachedTokens     int `json:"cached_tokens,omitempty"`    // of PromptTokens, served from the provider's cache
}

// Response is the assembled result of one call.
type Response struct {
	Message      Message // always RoleAssistant
	FinishReason string  // "stop", "tool_calls", "length", "content_filter", ...; never "error" (that is an *Error)
	Usage        Usage
}

// Chunk is one piece of a streamed response. Exactly one of the fields is
// set: a text delta, a reasoning delta, or (last) the assembled Response.
type Chunk struct {
	Text      string
	Reasoning string
	Done      *Response
}

// Model streams one chat completion. The sequence ends after a chunk with
// Done set, or with a non-nil error (an *Error where it could be classified).
// Stopping the iteration early, or cancelling ctx, closes the stream.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Collect drains a stream into its Response, calling onText for every text
// delta (onText may be nil).
func Collect(seq iter.Seq2[Chunk, error], onText func(string)) (*Response, error) {
	for c, err := range seq {
		if err != nil {
			return nil, err
		}
		if c.Text != "" && onText != nil {
			onText(c.Text)
		}
		if c.Done != nil {
			return c.Done, nil
		}
	}
	return nil, &Error{Kind: KindTruncated, Err: errNoDone}
}

// Complete runs req on m and returns the whole answer's text: the way to
// make one non-streamed call (memory updates, reviews).
func Complete(ctx context.Context, m Model, req *Request) (string, error) {
	var text strings.Builder
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		if c.Done != nil {
			if text.Len() == 0 {
				return c.Done.Message.Content, nil
			}
			return text.String(), nil
		}
		text.WriteString(c.Text)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "", &Error{Kind: KindTruncated, Err: errors.New("stream ended without a final chunk")}
}

// JSONObject returns the outermost {...} of a model's answer, which may
// wrap it in a code fence or a sentence; ok is false when there is none.
func JSONObject(text string) (obj string, ok bool) {
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return "", false
	}
	return text[start : end+1], true
}

// Tokens estimates the tokens of s offline: about four characters a token
// for ASCII text, one a character for other scripts (CJK runs close to
// that), rounded up. Good enough for budgets; not a tokenizer.
func Tokens(s string) int {
	ascii, other := 0, 0
	for len(s) > 0 {
		// Eight bytes at a time while they are ASCII (most text, and
		// every request counts the whole history).
		for len(s) >= 8 && (uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)&0x8080808080808080 == 0 {
			ascii += 8
			s = s[8:]
		}
		if len(s) == 0 {
			break
		}
		r, size := utf8.DecodeRuneInString(s)
		if r < 0x80 {
			ascii++
		} else {
			other++
		}
		s = s[size:]
	}
	return (ascii+3)/4 + other
}
