package llm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/deerflow/deerflow/llm/wiremsg"
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
	Messages    []wiremsg.Message `json:"-"` // spliced in: see body
	Temperature *float32          `json:"temperature,omitempty"`
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
	}, Messages: make([]wiremsg.Message, len(req.Messages))}
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
	// The messages and the tools are written in after the other fields,
	// into one buffer of about the right size: encoding/json would
	// validate and compact every byte of what wiremsg and the cached
	// tools already wrote compactly.
	var tools []byte
	if len(req.Tools) > 0 {
		if tools, err = c.tools.encode(req.Tools); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, len(b)+len(tools)+approxSize(req.Messages)+32)
	out = append(append(out, b[:len(b)-1]...), `,"messages":[`...) // b is an object with a model
	for i := range w.Messages {
		if i > 0 {
			out = append(out, ',')
		}
		if out, err = w.Messages[i].Append(out); err != nil {
			return nil, err
		}
	}
	out = append(out, ']')
	if len(tools) > 0 {
		out = append(append(out, `,"tools":`...), tools...)
	}
	b = append(out, '}')
	return c.addOptions(b, fields)
}

// approxSize is about the size of msgs as JSON: their texts and a little
// for the names and quotes.
func approxSize(msgs []Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		n += len(m.Content) + len(m.Reasoning) + len(m.Extra) + 64
		for _, tc := range m.ToolCalls {
			n += len(tc.Arguments) + len(tc.Extra) + 96
		}
	}
	return n + n/16 // escapes
}

// message converts m. The provider's opaque fields go only back to the
// provider that wrote them.
func (c *Client) message(m *Message, provider string) wiremsg.Message {
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
	w := wiremsg.Message{}
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
			w.Extra = m.Extra
		}
		for _, tc := range m.ToolCalls {
			wc := wiremsg.Call{ToolCall: openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}}}
			if !json.Valid([]byte(wc.Function.Arguments)) {
				// The API requires arguments, and strict providers (Ollama)
				// refuse the whole request when they are not JSON: a call
				// cut at the length limit, or malformed by the model, goes
				// back as {} (its result says what became of it).
				wc.Function.Arguments = "{}"
			}
			if ours {
				wc.Extra = tc.Extra
			}
			w.Calls = append(w.Calls, wc)
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
