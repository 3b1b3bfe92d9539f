package message

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/llm"
)

func TestCallSummary(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"description first", `{"command":"ls -la","description":"List  the\nfiles"}`, "List the files"},
		{"main argument", `{"path":"/mnt/user-data/a.txt","content":"x"}`, "/mnt/user-data/a.txt"},
		{"blank main argument skipped", `{"command":"  ","query":"go iter"}`, "go iter"},
		{"no known key", `{"n":3}`, `{"n":3}`},
		{"not JSON", `{"path":`, `{"path":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CallSummary(llm.ToolCall{Name: "t", Arguments: tt.args}); got != tt.want {
				t.Errorf("CallSummary(%s) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	in := llm.Message{Role: llm.RoleAssistant, Content: "c", Reasoning: "r",
		ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "echo", Arguments: `{"text":"x"}`}}}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	stored := FromLLM(&in, "run_1", now)
	if stored.RunID != "run_1" || !stored.Time.Equal(now) {
		t.Errorf("stored run %q at %v", stored.RunID, stored.Time)
	}
	if diff := cmp.Diff(in, ToLLM(stored)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
