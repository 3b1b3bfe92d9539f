package subagents

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// The subagent's tokens, over all its model calls, reach its done event
// and the lead's tool result.
func TestTaskUsageReachesDoneEvent(t *testing.T) {
	h := newHarness(t, Options{}, fakeTool("ls", false, nil))
	var mu sync.Mutex
	var leadSaw string
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case isLead(r) && r.Last().Role == "tool":
			leadSaw = r.Last().Content
			return fakeopenai.Turn{Text: "all done"}
		case isLead(r):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Look it up", "look", GeneralPurpose)}}
		case r.Last().Role == "tool":
			return fakeopenai.Turn{Text: "found it", Usage: &fakeopenai.Usage{PromptTokens: 1500, CompletionTokens: 300, TotalTokens: 1800}}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{}`}},
			Usage: &fakeopenai.Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200}}
	})
	evs := h.run(context.Background(), "th_1", "go")
	var done []event.Task
	for _, ev := range evs {
		if d, ok := ev.(event.TaskDone); ok {
			done = append(done, d.Task)
		}
	}
	if len(done) != 1 || done[0].Status != event.TaskCompleted {
		t.Fatalf("done events: %+v", done)
	}
	if want := (event.Usage{PromptTokens: 2500, CompletionTokens: 500}); done[0].Usage != want {
		t.Errorf("the done event's usage = %+v, want %+v", done[0].Usage, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(leadSaw, "\nTokens: 2500 in, 500 out\n\nfound it") {
		t.Errorf("the lead's tool result:\n%s", leadSaw)
	}
}
