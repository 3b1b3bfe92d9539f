package repair

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/store"
)

// hist builds messages from a compact notation: "u" user, "a" assistant
// text, "a:x,y" assistant calling x and y, "t:x" result for x.
func hist(spec string) []*store.Message {
	var out []*store.Message
	for i, tok := range strings.Fields(spec) {
		kind, ids, _ := strings.Cut(tok, ":")
		m := &store.Message{Seq: uint64(i + 1)}
		switch kind {
		case "u":
			m.Role = "user"
		case "a":
			m.Role = "assistant"
			if ids != "" {
				for _, id := range strings.Split(ids, ",") {
					name := "tool"
					if id == "_" {
						id, name = "", ""
					}
					m.ToolCalls = append(m.ToolCalls, store.ToolCall{ID: id, Name: name})
				}
			}
		case "t":
			m.Role, m.ToolCallID = "tool", ids
		}
		out = append(out, m)
	}
	return out
}

func render(msgs []*store.Message) string {
	var s []string
	for _, m := range msgs {
		switch m.Role {
		case "user":
			s = append(s, "u")
		case "assistant":
			if len(m.ToolCalls) == 0 {
				s = append(s, "a")
				continue
			}
			var ids []string
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
			s = append(s, "a:"+strings.Join(ids, ","))
		case "tool":
			tok := "t:" + m.ToolCallID
			if m.Content == Interrupted {
				tok += "!"
			}
			s = append(s, tok)
		}
	}
	return strings.Join(s, " ")
}

func TestRepairHistory(t *testing.T) {
	tests := []struct {
		name, in, want string
		from           int
	}{
		{"empty", "", "", 0},
		{"clean", "u a:x t:x a", "u a:x t:x a", 4},
		{"one dangling at end", "u a:x", "u a:x t:x!", 2},
		{"one of two answered", "u a:x,y t:x", "u a:x,y t:x t:y!", 3},
		{"dangling then user", "u a:x u a", "u a:x t:x! u a", 2},
		{"results out of order regrouped", "u a:x,y t:y t:x a", "u a:x,y t:x t:y a", 2},
		{"orphan result dropped", "u t:z a", "u a", 1},
		{"orphan inside a block dropped", "u a:x t:x t:q a", "u a:x t:x a", 3},
		{"ids reused across turns", "u a:x t:x u a:x", "u a:x t:x u a:x t:x!", 5},
		{"empty id and name sanitized", "u a:_", "u a:deerflow_repaired_call_1 t:deerflow_repaired_call_1!", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := hist(tt.in)
			from, tail := History(msgs)
			if from != tt.from {
				t.Errorf("from = %d, want %d", from, tt.from)
			}
			got := render(append(append([]*store.Message{}, msgs[:from]...), tail...))
			if got != tt.want {
				t.Errorf("repaired = %q, want %q", got, tt.want)
			}
			// The repaired history must be one the model API accepts:
			// repairing it again changes nothing.
			fixed := append(append([]*store.Message{}, msgs[:from]...), tail...)
			if from2, tail2 := History(fixed); from2 != len(fixed) || len(tail2) != 0 {
				t.Errorf("second repair changed it: from %d, tail %s", from2, render(tail2))
			}
		})
	}
}
