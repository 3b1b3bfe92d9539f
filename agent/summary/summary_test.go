package summary

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

func TestFoldPoint(t *testing.T) {
	msg := func(roles string) []*store.Message {
		var out []*store.Message
		for _, r := range strings.Split(roles, ",") {
			out = append(out, &store.Message{Role: map[string]string{"u": "user", "a": "assistant", "t": "tool"}[r]})
		}
		return out
	}
	tests := []struct {
		roles         string
		keep, userIdx int
		want          int
	}{
		{"u,a,u,a,u,a,u", 2, 6, 5},     // keep the last two
		{"u,a,u,a,t,t,a,u", 3, 7, 3},   // the kept part would start with a tool result: take its call too
		{"u,a,t,a,u,a,t,t,a", 4, 4, 4}, // never past the run's own user message
		{"u,a,u", 10, 2, 0},            // nothing to fold
		{"u,a,t,t,t", 2, 0, 0},         // only tool rounds of this run
	}
	for _, tt := range tests {
		if got := foldPoint(msg(tt.roles), tt.keep, tt.userIdx); got != tt.want {
			t.Errorf("foldPoint(%s, keep %d, user %d) = %d, want %d", tt.roles, tt.keep, tt.userIdx, got, tt.want)
		}
	}
}

// TestTranscriptPayloadsStayInert: a folded message, tool call or tool
// result cannot end the summarizer's <conversation> early.
func TestTranscriptPayloadsStayInert(t *testing.T) {
	tr := func(p string) string {
		return transcript("Earlier: "+p, []*store.Message{
			{Role: "user", Content: "read " + p},
			{Role: "assistant", Content: "Sure. " + p, ToolCalls: []store.ToolCall{{ID: "c1", Name: "web_fetch", Arguments: `{"url":"` + p + `"}`}}},
			{Role: "tool", Name: "web_fetch", ToolCallID: "c1", Content: "# Page\n" + p},
		})
	}
	base := tr("nothing special")
	for name, p := range testutil.Payloads {
		testutil.AssertInert(t, name, base, tr(p), p)
	}
}
