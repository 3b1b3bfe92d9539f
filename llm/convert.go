package llm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// noOutput stands in for a tool's empty result: go-openai omits empty
// content, and the API rejects a tool message without content.
const noOutput = "(no output)"

// emptySchema is sent for a tool without parameters; the API wants an object.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// convert builds the wire request for req.
func (c *Client) convert(req *Request, model string) (openai.ChatCompletionRequest, error) {
	o := openai.ChatCompletionRequest{
		Model:         model,
		Messages:      make([]openai.ChatCompletionMessage, len(req.Messages)),
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if model == "" {
		return o, fmt.Errorf("no model configured")
	}
	for i := range req.Messages {
		o.Messages[i] = c.message(&req.Messages[i])
	}
	if len(req.Tools) > 0 {
		o.Tools = make([]openai.Tool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = emptySchema
			}
			o.Tools[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			}}
		}
	}
	if req.MaxTokens > 0 {
		if reasoningModel(model) {
			o.MaxCompletionTokens = req.MaxTokens // go-openai refuses max_tokens for these
		} else {
			o.MaxTokens = req.MaxTokens
		}
	}
	if t := req.Temperature; t != nil {
		o.Temperature = *t
		if *t == 0 {
			// go-openai omits a zero temperature; send the closest value it keeps.
			o.Temperature = math.SmallestNonzeroFloat32
		}
	}
	return o, nil
}

func (c *Client) message(m *Message) openai.ChatCompletionMessage {
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
	switch m.Role {
	case RoleTool:
		om.ToolCallID = m.ToolCallID
		if om.Content == "" {
			om.Content = noOutput
		}
	case RoleAssistant:
		if c.sendReasoning {
			om.ReasoningContent = m.Reasoning
		}
		if len(m.ToolCalls) == 0 {
			break
		}
		om.ToolCalls = make([]openai.ToolCall, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}" // go-openai omits empty arguments; the API requires them
			}
			// Index stays nil: it only belongs in response chunks.
			om.ToolCalls[j] = openai.ToolCall{
				ID:       tc.ID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args},
			}
		}
	}
	return om
}

// reasoningModel reports the OpenAI model families that take
// max_completion_tokens instead of max_tokens.
func reasoningModel(model string) bool {
	for _, p := range [...]string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}
