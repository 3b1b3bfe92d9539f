// Package repair makes a stored history one a model API accepts again:
// every tool call answered, no result without its call. A crash or a
// stopped run can leave either behind. It must not import agent.
package repair

import (
	"fmt"

	"github.com/deerflow/deerflow/store"
)

// Interrupted is what the model reads for a tool call that never got a
// result (the process died or the run was stopped mid-call).
const Interrupted = "The tool call was interrupted before it returned a result."

// History returns msgs with every tool call answered: each assistant
// message with tool calls is followed directly by one result per call (a
// synthetic "interrupted" result where none exists), results that answer no
// call are dropped, and calls with an empty id or name get usable ones.
//
// It returns the index of the first message that differs from msgs and the
// repaired messages from that index on; from == len(msgs) means nothing
// changed. Messages before from are shared with msgs, unchanged.
func History(msgs []*store.Message) (from int, tail []*store.Message) {
	out := make([]*store.Message, 0, len(msgs))
	used := make([]bool, len(msgs))
	synth := 0
	for i, m := range msgs {
		if m.Role == "tool" {
			continue // emitted with its call, or an orphan
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			out = append(out, m)
			continue
		}
		fixed := sanitizeCalls(m, &synth)
		out = append(out, fixed)
		// Results for these calls are the tool messages that follow, up to
		// the next assistant message with calls (ids may repeat across
		// turns).
		end := i + 1
		for end < len(msgs) && !(msgs[end].Role == "assistant" && len(msgs[end].ToolCalls) > 0) {
			end++
		}
		for ci, call := range fixed.ToolCalls {
			orig := m.ToolCalls[ci].ID
			found := -1
			for j := i + 1; j < end; j++ {
				if msgs[j].Role == "tool" && !used[j] && msgs[j].ToolCallID == orig {
					found = j
					break
				}
			}
			if found < 0 {
				out = append(out, &store.Message{
					Role: "tool", ToolCallID: call.ID, Name: call.Name,
					Content: Interrupted, RunID: m.RunID, Hidden: true, Time: m.Time,
				})
				continue
			}
			used[found] = true
			r := msgs[found]
			if r.ToolCallID != call.ID {
				c := *r
				c.ToolCallID = call.ID
				r = &c
			}
			out = append(out, r)
		}
	}
	from = 0
	for from < len(msgs) && from < len(out) && out[from] == msgs[from] {
		from++
	}
	if from == len(msgs) && len(out) == len(msgs) {
		return len(msgs), nil
	}
	return from, out[from:]
}

// sanitizeCalls returns m, or a copy of it whose tool calls all have an id
// and a name.
func sanitizeCalls(m *store.Message, synth *int) *store.Message {
	ok := true
	for _, c := range m.ToolCalls {
		if c.ID == "" || c.Name == "" {
			ok = false
		}
	}
	if ok {
		return m
	}
	c := *m
	c.ToolCalls = make([]store.ToolCall, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		if tc.ID == "" {
			*synth++
			tc.ID = fmt.Sprintf("deerflow_repaired_call_%d", *synth)
		}
		if tc.Name == "" {
			tc.Name = "unknown_tool"
		}
		c.ToolCalls[i] = tc
	}
	return &c
}
