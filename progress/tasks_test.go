package progress

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
)

// TestSubagentReplyEndsWithItsUsage: the last version of a subagent's
// reply ends with its tokens, their cost and its time; a terminal's
// activity line carries them too; a task that reported no tokens has no
// such line.
func TestSubagentReplyEndsWithItsUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{Outbox: ob, Logger: quiet()})
		defer d.Close()
		ctx := t.Context()
		task := event.Task{ID: "t1", Description: "read the logs", Status: event.TaskRunning}
		d.Handle(ctx, event.TaskStarted{Task: task})
		time.Sleep(time.Second)
		task.Status, task.Duration, task.Result = event.TaskCompleted, 41*time.Second, "all quiet"
		task.Usage = event.Usage{PromptTokens: 10_100, CompletionTokens: 2_200, Cost: 0.004}
		d.Handle(ctx, event.TaskDone{Task: task})
		d.Handle(ctx, event.Answer{Text: "The logs are quiet."})
		synctest.Wait()

		var final string
		for _, l := range p.seen() {
			if _, text, ok := strings.Cut(l, "edit m1 final=true: "); ok {
				final = text
			}
		}
		want := "✅ read the logs · done in 41s\n\nall quiet\n\n— 12.3k tokens (10.1k in, 2.2k out), $0.0040, 41s"
		if final != want {
			t.Errorf("the reply ends as %q, want %q", final, want)
		}
	})
	done := event.Task{Description: "read the logs", Status: event.TaskCompleted, Duration: 2 * time.Second,
		Usage: event.Usage{PromptTokens: 900, CompletionTokens: 50}}
	if got, want := taskLine(event.TaskDone{Task: done}, &done), "[read the logs] ✅ done in 2.0s — 950 tokens (900 in, 50 out), 2.0s"; got != want {
		t.Errorf("activity line %q, want %q", got, want)
	}
	failed := event.Task{Description: "read the logs", Status: event.TaskFailed, Duration: time.Second, Result: "no logs"}
	if text, _ := (&taskView{ev: failed, final: true}).render(); strings.Contains(text, "tokens") {
		t.Errorf("a task without tokens ends as %q", text)
	}
}
