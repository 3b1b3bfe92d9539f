package fakeopenai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Request is a chat completion request as the fake decoded it.
type Request struct {
	Model        string
	Messages     []Message
	Tools        []Tool
	Stream       bool
	IncludeUsage bool     // stream_options.include_usage
	MaxTokens    int      // max_tokens or max_completion_tokens
	Temperature  *float64 // nil when absent
	Header       http.Header
	Body         []byte    // the raw JSON body
	Time         time.Time // when it arrived (for "did the client wait out Retry-After")
}

// Message is one message of a Request.
type Message struct {
	Role       string
	Content    string // a string content, or the text parts of an array joined
	Reasoning  string // reasoning_content
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// ToolCall is a function call, in an assistant message of a request or in
// a Turn's reply.
type ToolCall struct {
	ID        string // empty in a Turn: one is made up
	Name      string
	Arguments string
}

// Tool is a function offered in a request.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Last returns the last message, or a zero Message if there is none.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolNames returns the names of the offered tools, in order.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
}

type wireToolCall struct {
	Index    *int   `json:"index"` // only valid in response chunks
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// decode parses body; on a syntax error the Request holds only Body.
func decode(body []byte) (Request, *wireRequest, error) {
	req := Request{Body: body}
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return req, nil, err
	}
	req.Model, req.Stream, req.Temperature = w.Model, w.Stream, w.Temperature
	req.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	req.MaxTokens = max(w.MaxTokens, w.MaxCompletionTokens)
	req.Messages = make([]Message, len(w.Messages))
	for i, m := range w.Messages {
		text, _ := contentText(m.Content)
		msg := Message{Role: m.Role, Content: text, Reasoning: m.ReasoningContent, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			args := ""
			if tc.Function.Arguments != nil {
				args = *tc.Function.Arguments
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		req.Messages[i] = msg
	}
	for _, t := range w.Tools {
		if t.Function != nil {
			req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
		}
	}
	return req, &w, nil
}

// contentText returns the text of a message content (a string or an array
// of parts) and whether there was any content at all.
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func invalid(param, format string, args ...any) *apiError {
	return &apiError{Message: fmt.Sprintf(format, args...), Type: "invalid_request_error", Param: param}
}

// validate refuses what the real API refuses, with its wording.
func validate(w *wireRequest) *apiError {
	if w.Model == "" {
		return invalid("", "you must provide a model parameter")
	}
	if len(w.Messages) == 0 {
		return invalid("messages", "[] is too short - 'messages'")
	}
	if w.StreamOptions != nil && !w.Stream {
		return invalid("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if e := validateTools(w.Tools); e != nil {
		return e
	}
	var pending []string // tool_call_ids of the last assistant message not yet answered
	pendingAt := 0
	for i, m := range w.Messages {
		if m.Role != "tool" && len(pending) > 0 {
			return unanswered(pendingAt, pending)
		}
		_, hasContent := contentText(m.Content)
		switch m.Role {
		case "system", "developer", "user":
			if !hasContent {
				return missing(i, "content")
			}
		case "assistant":
			if !hasContent && len(m.ToolCalls) == 0 {
				return missing(i, "content")
			}
			for j, tc := range m.ToolCalls {
				if e := checkToolCall(i, j, tc); e != nil {
					return e
				}
				pending = append(pending, tc.ID)
			}
			pendingAt = i
		case "tool":
			if !hasContent {
				return missing(i, "content")
			}
			if m.ToolCallID == "" {
				return missing(i, "tool_call_id")
			}
			k := slices.Index(pending, m.ToolCallID)
			if k < 0 {
				return invalid(fmt.Sprintf("messages.[%d].role", i), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = append(pending[:k], pending[k+1:]...)
		default:
			return &apiError{Message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", m.Role),
				Type: "invalid_request_error", Param: fmt.Sprintf("messages[%d].role", i), Code: "invalid_value"}
		}
	}
	if len(pending) > 0 {
		return unanswered(pendingAt, pending)
	}
	return nil
}

func validateTools(tools []wireTool) *apiError {
	for i, t := range tools {
		if t.Type != "function" || t.Function == nil {
			return invalid(fmt.Sprintf("tools[%d]", i), "Invalid value for 'tools[%d].type': expected 'function'.", i)
		}
		if !toolName.MatchString(t.Function.Name) {
			return invalid(fmt.Sprintf("tools[%d].function.name", i), "Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
	}
	return nil
}

func checkToolCall(i, j int, tc wireToolCall) *apiError {
	at := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
	switch {
	case tc.Index != nil:
		return invalid(at, "Additional properties are not allowed ('index' was unexpected) - '%s'", at)
	case tc.ID == "":
		return missingParam(at + ".id")
	case tc.Type != "function":
		return missingParam(at + ".type")
	case tc.Function.Name == "":
		return missingParam(at + ".function.name")
	case tc.Function.Arguments == nil:
		return missingParam(at + ".function.arguments")
	}
	return nil
}

func missing(i int, field string) *apiError {
	return missingParam(fmt.Sprintf("messages[%d].%s", i, field))
}

func missingParam(p string) *apiError {
	return &apiError{Message: fmt.Sprintf("Missing required parameter: '%s'.", p), Type: "invalid_request_error", Param: p, Code: "missing_required_parameter"}
}

func unanswered(i int, ids []string) *apiError {
	return invalid(fmt.Sprintf("messages.[%d].role", i),
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s",
		strings.Join(ids, ", "))
}

// Roles lists the roles of the request's messages, comma-separated
// ("system,user,assistant,tool"), for asserting a conversation's shape.
func (r Request) Roles() string {
	s := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		s[i] = m.Role
	}
	return strings.Join(s, ",")
}
