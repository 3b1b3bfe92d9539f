package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// noOutput stands in for a tool's empty result: the API rejects a tool
// message without content.
const noOutput = "(no output)"

// emptySchema is sent for a tool without parameters; the API wants an object.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// wireRequest is a chat completion request as sent: go-openai's request,
// with our messages (which carry the provider's opaque fields) and a
// temperature that may be zero (go-openai omits a zero one).
type wireRequest struct {
	openai.ChatCompletionRequest
	Messages    []wireMessage `json:"-"` // spliced in: see body
	Temperature *float32      `json:"temperature,omitempty"`
}

// wireMessage is go-openai's message, whose tool calls go in calls, plus
// the provider's opaque fields.
type wireMessage struct {
	openai.ChatCompletionMessage
	calls []wireCall
	extra json.RawMessage
}

// wireCall is go-openai's tool call plus the provider's opaque fields.
// Like every go-openai field, an empty id or name is left out, as is a
// tool's empty description.
type wireCall struct {
	openai.ToolCall
	extra json.RawMessage
}

func (m wireMessage) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(m.ChatCompletionMessage)
	if err != nil || len(m.calls) == 0 {
		return splice(b, m.extra), err
	}
	calls, err := json.Marshal(struct {
		Calls []wireCall `json:"tool_calls"`
	}{m.calls})
	return splice(splice(b, calls), m.extra), err
}

func (c wireCall) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(c.ToolCall)
	return splice(b, c.extra), err
}

// splice adds the fields of the JSON object extra to the object b, as
// they are. Extra fields are the provider's own and never ours.
func splice(b []byte, extra json.RawMessage) []byte {
	extra = bytes.TrimSpace(extra)
	if len(extra) < 2 || extra[0] != '{' || extra[len(extra)-1] != '}' || len(b) < 2 {
		return b
	}
	inner := bytes.TrimSpace(extra[1 : len(extra)-1])
	if len(inner) == 0 {
		return b
	}
	out := append(b[:len(b)-1:len(b)-1], ',')
	out = append(out, inner...)
	return append(out, '}')
}

// body builds the wire request for req to model.
func (c *Client) body(req *Request, model string) ([]byte, error) {
	if model == "" {
		return nil, fmt.Errorf("no model configured")
	}
	effort, fields := c.thinkingFields()
	w := wireRequest{ChatCompletionRequest: openai.ChatCompletionRequest{
		Model:           model,
		Stream:          true,
		StreamOptions:   &openai.StreamOptions{IncludeUsage: true},
		ReasoningEffort: effort,
	}, Messages: make([]wireMessage, len(req.Messages))}
	provider := c.Provider(model)
	for i := range req.Messages {
		w.Messages[i] = c.message(&req.Messages[i], provider)
	}
	if req.MaxTokens > 0 {
		if reasoningModel(model) {
			w.MaxCompletionTokens = req.MaxTokens
		} else {
			w.MaxTokens = req.MaxTokens
		}
	}
	if t := req.Temperature; t != nil {
		if reasoningModel(model) && *t != 1 {
			return nil, fmt.Errorf("model %s takes no temperature other than 1", model)
		}
		w.Temperature = t
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	// The messages and the tools are spliced in as they are encoded:
	// encoding/json would validate and compact every byte of what our
	// MarshalJSON and the cached tools already wrote compactly.
	msgs := append(make([]byte, 0, 4096), `{"messages":[`...)
	for i := range w.Messages {
		if i > 0 {
			msgs = append(msgs, ',')
		}
		m, err := w.Messages[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m...)
	}
	b = splice(b, append(msgs, "]}"...))
	if len(req.Tools) > 0 {
		tools, err := c.tools.encode(req.Tools)
		if err != nil {
			return nil, err
		}
		b = splice(b, append(append([]byte(`{"tools":`), tools...), '}'))
	}
	return c.addOptions(b, fields)
}

// message converts m. The provider's opaque fields go only back to the
// provider that wrote them.
func (c *Client) message(m *Message, provider string) wireMessage {
	om := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content}
	if len(m.Images) > 0 && m.Role == RoleUser {
		// A user message with images goes as content parts: the text,
		// then each image inline as a data URL.
		om.Content = ""
		if m.Content != "" {
			om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
		}
		for _, img := range m.Images {
			om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{
				Type:     openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data), Detail: openai.ImageURLDetailAuto},
			})
		}
	}
	w := wireMessage{}
	switch m.Role {
	case RoleTool:
		om.ToolCallID = m.ToolCallID
		if om.Content == "" {
			om.Content = noOutput
		}
	case RoleAssistant:
		ours := m.Provider != "" && m.Provider == provider
		if c.sendReasoning {
			om.ReasoningContent = m.Reasoning
		}
		if ours {
			w.extra = m.Extra
		}
		for _, tc := range m.ToolCalls {
			wc := wireCall{ToolCall: openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}}}
			if !json.Valid([]byte(wc.Function.Arguments)) {
				// The API requires arguments, and strict providers (Ollama)
				// refuse the whole request when they are not JSON: a call
				// cut at the length limit, or malformed by the model, goes
				// back as {} (its result says what became of it).
				wc.Function.Arguments = "{}"
			}
			if ours {
				wc.extra = tc.Extra
			}
			w.calls = append(w.calls, wc)
		}
	}
	w.ChatCompletionMessage = om
	return w
}

// reasoningModel reports the OpenAI model families that take
// max_completion_tokens instead of max_tokens, and no temperature.
func reasoningModel(model string) bool {
	for _, p := range [...]string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}
