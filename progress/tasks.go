package progress

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// maxTaskLines is how many recent steps a subagent's progress reply shows.
const maxTaskLines = 4

// taskView is one subagent's progress reply. Guarded by Delivery.mu.
type taskView struct {
	runID string
	ev    event.Task
	lines []string
	final bool
	ed    *editor // nil for DeltaStreamers
}

// task takes one task event of the run (event.TaskStarted, TaskProgress
// or TaskDone): the subagent's reply is created, updated or finished
// (through its editor), or, for channels that stream, one activity line is
// printed.
func (d *Delivery) task(ctx context.Context, ev event.Event) {
	te := taskOf(ev)
	if te == nil {
		return
	}
	_, done := ev.(event.TaskDone)
	runID := d.opts.RunID
	d.mu.Lock()
	var v *taskView
	for _, t := range d.tasks {
		if t.ev.ID == te.ID {
			v = t
		}
	}
	if v == nil {
		v = &taskView{runID: runID, ev: *te}
		d.tasks = append(d.tasks, v)
		if !d.stream {
			v.ed = d.newEditor(v.render, func(k bus.OutKind, text string) *bus.Outbound {
				o := d.out(k, text)
				o.Task = te.ID
				return o
			})
			v.ed.sent = func(id string) { d.recordTaskReply(runID, te.ID, d.in.MessageID, id) }
			v.ed.after = func() {
				d.mu.Lock()
				d.main.changed() // it may have waited for this reply
				d.mu.Unlock()
			}
		}
	}
	switch ev.(type) {
	case event.TaskProgress:
		v.lines = append(v.lines, te.Line)
		if len(v.lines) > maxTaskLines {
			v.lines = v.lines[len(v.lines)-maxTaskLines:]
		}
	case event.TaskDone:
		v.ev, v.final = *te, true
	default:
		v.ev = *te
	}
	if v.ed != nil {
		v.ed.changed()
	}
	d.mu.Unlock()

	if d.opts.OnTask != nil {
		d.opts.OnTask(*te, done)
	}
	if d.stream {
		d.ob.Send(ctx, d.key, d.out(bus.OutActivity, taskLine(ev, te)))
	}
}

// taskOf is the task a task event reports on; nil for other events.
func taskOf(ev event.Event) *event.Task {
	switch ev := ev.(type) {
	case event.TaskStarted:
		return &ev.Task
	case event.TaskProgress:
		return &ev.Task
	case event.TaskDone:
		return &ev.Task
	}
	return nil
}

// tasksEnding reports whether a subagent's reply is still to show its
// outcome. Callers hold d.mu.
func (d *Delivery) tasksEnding() bool {
	for _, t := range d.tasks {
		if t.final && t.ed != nil && !t.ed.ended() {
			return true
		}
	}
	return false
}

// render is the reply's text now, and whether it is the last version.
func (v *taskView) render() (string, bool) {
	e := &v.ev
	if v.final {
		text := taskMark(e.Status) + " " + e.Description + " · " + taskOutcome(e.Status, e.Duration)
		if e.Status == event.TaskCompleted || e.Status == event.TaskFailed {
			if r := clipLines(e.Result, 3, 300); r != "" {
				text += "\n\n" + r
			}
		}
		if u := TaskUsage(e.Usage, e.Duration); u != "" {
			text += "\n\n— " + u
		}
		return text, true
	}
	if e.Status == event.TaskPending {
		return fmt.Sprintf("⏸ %s · waiting for a free slot (%d ahead)", e.Description, e.Ahead), false
	}
	var b strings.Builder
	b.WriteString("⏳ " + e.Description + " · working")
	for _, l := range v.lines {
		b.WriteString("\n")
		if !strings.HasPrefix(l, "›") {
			b.WriteString("· ")
		}
		b.WriteString(l)
	}
	return b.String(), false
}

// taskLine is a task event (ev, about e) as one activity line, for
// channels that stream.
func taskLine(ev event.Event, e *event.Task) string {
	switch ev.(type) {
	case event.TaskProgress:
		return fmt.Sprintf("[%s] %s", e.Description, e.Line)
	case event.TaskDone:
		line := fmt.Sprintf("[%s] %s %s", e.Description, taskMark(e.Status), taskOutcome(e.Status, e.Duration))
		if u := TaskUsage(e.Usage, e.Duration); u != "" {
			line += " — " + u
		}
		return line
	}
	if e.Status == event.TaskPending {
		return fmt.Sprintf("[%s] waiting for a free slot (%d ahead)", e.Description, e.Ahead)
	}
	return fmt.Sprintf("[%s] subagent started (%s)", e.Description, e.Type)
}

func taskMark(status string) string {
	switch status {
	case event.TaskCompleted:
		return "✅"
	case event.TaskFailed:
		return "❌"
	case event.TaskTimedOut:
		return "⌛"
	case event.TaskInterrupted:
		return "⚠️"
	}
	return "⏹"
}

func taskOutcome(status string, dur time.Duration) string {
	switch status {
	case event.TaskCompleted:
		return "done in " + shortDuration(dur)
	case event.TaskFailed:
		return "failed after " + shortDuration(dur)
	case event.TaskTimedOut:
		return "timed out after " + shortDuration(dur)
	case event.TaskInterrupted:
		return "interrupted by a restart"
	}
	if dur == 0 {
		return "cancelled before it started"
	}
	return "cancelled after " + shortDuration(dur)
}

// TaskUsage is a subagent's tokens, their cost (when the model's prices
// are known) and its running time: "12.3k tokens (10.1k in, 2.2k out),
// $0.0040, 41s"; "" when it reported no tokens.
func TaskUsage(u event.Usage, dur time.Duration) string {
	in, out := int64(u.PromptTokens), int64(u.CompletionTokens)
	if in+out == 0 {
		return ""
	}
	s := fmt.Sprintf("%s tokens (%s in, %s out)", tokens.CountText(in+out), tokens.CountText(in), tokens.CountText(out))
	if u.Cost > 0 {
		s += ", " + tokens.CostText(u.Cost)
	}
	if dur > 0 {
		s += ", " + shortDuration(dur)
	}
	return s
}

// shortDuration is d for people: 0.4s, 12s, 3m5s.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// clipLines keeps the first n lines of s, at most max bytes.
func clipLines(s string, n, max int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	cut := len(lines) > n
	if cut {
		lines = lines[:n]
	}
	out := strings.Join(lines, "\n")
	if len(out) > max {
		out, cut = tools.Clip(out, max), false
	}
	if cut {
		out += "\n…"
	}
	return out
}

// finishTasks makes every subagent reply show its outcome before the
// answer is sent. A task that never reported its end (it cannot normally
// happen: the task tool always does) is shown as cancelled.
func (d *Delivery) finishTasks() {
	d.mu.Lock()
	tasks := d.tasks
	for _, v := range tasks {
		if !v.final {
			v.final, v.ev.Status = true, event.TaskCancelled
			if v.ed != nil {
				v.ed.changed()
			}
		}
	}
	d.mu.Unlock()
	for _, v := range tasks {
		if v.ed != nil {
			<-v.ed.done
		}
	}
	d.forgetTasks()
}

// forgetTasks says the run's subagent replies are over (OnTasksEnd).
func (d *Delivery) forgetTasks() {
	if d.opts.OnTasksEnd != nil {
		d.opts.OnTasksEnd()
	}
}

// recordTaskReply stores which message is a task's progress reply, so that
// it can be marked interrupted after a restart.
func (d *Delivery) recordTaskReply(runID, taskID, replyTo, progressID string) {
	if runID == "" || d.opts.Store == nil {
		return
	}
	err := d.opts.Store.Batch(func(tx *store.Tx) error {
		return tx.UpdateTask(runID, taskID, func(t *store.Task) { t.ReplyTo, t.Progress = replyTo, progressID })
	})
	if err != nil {
		d.log.Error("recording a subagent's reply", "task", taskID, "err", err)
	}
}

// InterruptedTask is the last version of the progress reply of a subagent
// task (its description) that a restart cut short.
func InterruptedTask(description string) string {
	return taskMark(event.TaskInterrupted) + " " + description + " · " + taskOutcome(event.TaskInterrupted, 0)
}
