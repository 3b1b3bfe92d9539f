package agent

import (
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

// toLLM converts a stored message to the model's form.
func toLLM(m *store.Message) llm.Message {
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

// fromLLM converts a model message to the stored form. The provider's
// opaque fields are kept: the next request to it must carry them back.
func fromLLM(m *llm.Message, runID string, now time.Time) *store.Message {
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
