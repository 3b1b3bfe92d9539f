package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/llm/sse"
)

// wireChunk is one streamed chat.completion.chunk, as providers send it.
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *apiError    `json:"error"` // an error frame, or OpenRouter's with finish_reason "error"
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          content         `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"` // DeepSeek, Qwen, Kimi, GLM
	Reasoning        string          `json:"reasoning"`         // OpenRouter, Groq, Ollama, vLLM
	ReasoningDetails []reasoningPart `json:"reasoning_details"` // OpenRouter
	ToolCalls        []wireToolDelta `json:"tool_calls"`
}

// reasoning returns the delta's reasoning text. Providers that send more
// than one of the fields send the same text in each.
func (d *wireDelta) reasoning() string {
	switch {
	case d.ReasoningContent != "":
		return d.ReasoningContent
	case d.Reasoning != "":
		return d.Reasoning
	}
	var b strings.Builder
	for _, p := range d.ReasoningDetails {
		b.WriteString(p.text())
	}
	return b.String()
}

type wireToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string    `json:"name"`
		Arguments arguments `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"` // Gemini's thought_signature
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptCacheHit      int `json:"prompt_cache_hit_tokens"` // DeepSeek
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *wireUsage) usage() Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens, CachedTokens: u.PromptCacheHit}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		out.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// content is a message's content: a string, or (Mistral) an array of
// typed parts whose "thinking" parts are reasoning and "text" parts the
// answer.
type content struct {
	Text, Thinking string
}

type contentPart struct {
	Type     string  `json:"type"`
	Text     string  `json:"text"`
	Thinking content `json:"thinking"` // a string, or an array of text parts
}

func (c *content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		return json.Unmarshal(b, &c.Text)
	case b[0] != '[':
		return fmt.Errorf("content is neither a string nor an array: %.40s", b)
	}
	var parts []contentPart
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var text, thinking strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text", "":
			text.WriteString(p.Text)
		case "thinking", "reasoning":
			thinking.WriteString(p.Thinking.Text)
			thinking.WriteString(p.Thinking.Thinking)
		}
	}
	c.Text, c.Thinking = text.String(), thinking.String()
	return nil
}

// arguments are a tool call's arguments: a JSON string as OpenAI sends
// them, or (some local servers) the object itself.
type arguments string

func (a *arguments) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		return json.Unmarshal(b, (*string)(a))
	}
	*a = arguments(b)
	return nil
}

// reasoningPart is one entry of OpenRouter's reasoning_details, kept
// verbatim: it is sent back as it came (signatures included).
type reasoningPart map[string]json.RawMessage

func (p reasoningPart) str(key string) string {
	var s string
	json.Unmarshal(p[key], &s)
	return s
}

// text is the readable reasoning of the part: reasoning.text's text,
// reasoning.summary's summary; encrypted parts have none.
func (p reasoningPart) text() string {
	switch p.str("type") {
	case "reasoning.text":
		return p.str("text")
	case "reasoning.summary":
		return p.str("summary")
	}
	return ""
}

// apiError is a provider's error object, in an error response or event:
// go-openai's APIError, decoded by it ({"message", "type", "code",
// "param"}; a message may be a list, a code a string or a number) or, as
// it refuses them, leniently: just a string, or a param of another type.
type apiError struct{ openai.APIError }

func (e *apiError) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Message)
	}
	if e.APIError.UnmarshalJSON(b) == nil {
		return nil
	}
	var loose struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	err := json.Unmarshal(b, &loose)
	e.APIError = openai.APIError{Message: loose.Message, Type: loose.Type, Code: loose.Code}
	return err
}

// code is the error's code as text ("429" for a number).
func (e *apiError) code() string {
	switch c := e.Code.(type) {
	case string:
		return c
	case int:
		if c != 0 { // go-openai reads a null code as 0
			return strconv.Itoa(c)
		}
	case float64:
		return strconv.Itoa(int(c))
	}
	return ""
}

// status is the HTTP status an error event names in its code, or 0.
func (e *apiError) status() int {
	n, _ := strconv.Atoi(e.code())
	if _, ok := e.Code.(string); ok || n < 400 || n >= 600 {
		return 0
	}
	return n
}

// decodeEvent reads one event of the stream. An error event or frame is
// returned as a *streamError.
func decodeEvent(ev sse.Event) (*wireChunk, error) {
	var c wireChunk
	if ev.Type == "error" {
		return nil, errorEvent(ev.Data)
	}
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return nil, fmt.Errorf("decoding event %.80q: %w", ev.Data, err)
	}
	if c.Error != nil && !hasFinish(&c, "error") {
		return nil, &streamError{*c.Error}
	}
	return &c, nil
}

// errorEvent reads the data of an "event: error": an error frame, a bare
// error object, or text.
func errorEvent(data []byte) error {
	var frame struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(data, &frame) == nil && frame.Error != nil {
		return &streamError{*frame.Error}
	}
	var e apiError
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		return &streamError{e}
	}
	return &streamError{apiError{openai.APIError{Message: excerpt(data, 200)}}}
}

func hasFinish(c *wireChunk, reason string) bool {
	for _, ch := range c.Choices {
		if ch.FinishReason == reason {
			return true
		}
	}
	return false
}

// streamError is an error the provider sent inside a 200 stream.
type streamError struct{ api apiError }

func (e *streamError) Error() string {
	if e.api.Message == "" {
		return "error event"
	}
	return "error event: " + e.api.Message
}
