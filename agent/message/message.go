// Package message carries a thread's messages between their forms: the
// stored one (store.Message) and the model's (llm.Message), and a tool
// call as the people watching a run read it, in one line. It must not
// import agent.
package message

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// ToLLM converts a stored message to the model's form.
func ToLLM(m *store.Message) llm.Message {
	out := llm.Message{
		Role:       llm.Role(m.Role),
		Content:    m.Content,
		Reasoning:  m.Reasoning,
		ToolCallID: m.ToolCallID,
		Name:       m.Name,
		Extra:      m.Extra,
		Provider:   m.Provider,
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]llm.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Extra: c.Extra}
		}
	}
	return out
}

// FromLLM converts a model message to the stored form. The provider's
// opaque fields are kept: the next request to it must carry them back.
func FromLLM(m *llm.Message, runID string, now time.Time) *store.Message {
	out := &store.Message{
		Role:      string(m.Role),
		Content:   m.Content,
		Reasoning: m.Reasoning,
		Extra:     m.Extra,
		Provider:  m.Provider,
		RunID:     runID,
		Time:      now,
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]store.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = store.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Extra: c.Extra}
		}
	}
	return out
}

// CallSummary is a short, human-readable line for a tool call: its
// description argument when it has one, else its main argument (command,
// path, query, ...), else its arguments, shortened.
func CallSummary(call llm.ToolCall) string {
	var args map[string]any
	if json.Unmarshal([]byte(call.Arguments), &args) == nil {
		for _, k := range summaryKeys {
			if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
				return tools.Clip(strings.Join(strings.Fields(v), " "), 120)
			}
		}
	}
	return tools.Clip(call.Arguments, 120)
}

// summaryKeys are the arguments that best say what a call does, best first.
var summaryKeys = []string{"description", "command", "path", "query", "url", "pattern", "name"}
