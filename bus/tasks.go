package bus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// maxTaskLines is how many recent steps a subagent's progress reply shows.
const maxTaskLines = 4

// taskView is one subagent's progress reply. Guarded by delivery.mu.
type taskView struct {
	runID string
	ev    tools.TaskEvent
	lines []string
	final bool
	ed    *editor // nil for DeltaStreamers
}

// task takes one task event of the run: the subagent's reply is created,
// updated or finished (through its editor), or, for channels that stream,
// one activity line is printed.
func (d *delivery) task(ctx context.Context, runID, kind string, te *tools.TaskEvent) {
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
			v.ed = d.newEditor(v.render, func(k OutKind, text string) *Outbound {
				o := d.out(k, text)
				o.Task = te.ID
				return o
			})
			v.ed.sent = func(id string) { d.b.recordTaskReply(runID, te.ID, d.in.MessageID, id) }
			v.ed.after = func() {
				d.mu.Lock()
				d.main.changed() // it may have waited for this reply
				d.mu.Unlock()
			}
		}
	}
	switch kind {
	case tools.EventTaskProgress:
		v.lines = append(v.lines, te.Line)
		if len(v.lines) > maxTaskLines {
			v.lines = v.lines[len(v.lines)-maxTaskLines:]
		}
	case tools.EventTaskDone:
		v.ev, v.final = *te, true
	default:
		v.ev = *te
	}
	if v.ed != nil {
		v.ed.changed()
	}
	d.mu.Unlock()

	if d.c != nil {
		d.b.trackTask(d.c, te, kind == tools.EventTaskDone)
	}
	if d.stream {
		d.b.send(ctx, d.key, d.out(OutActivity, taskLine(kind, te)))
	}
}

// tasksEnding reports whether a subagent's reply is still to show its
// outcome. Callers hold d.mu.
func (d *delivery) tasksEnding() bool {
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
		if e.Status == tools.TaskCompleted || e.Status == tools.TaskFailed {
			if r := clipLines(e.Result, 3, 300); r != "" {
				text += "\n\n" + r
			}
		}
		return text, true
	}
	if e.Status == tools.TaskPending {
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

// taskLine is a task event as one activity line, for channels that stream.
func taskLine(kind string, e *tools.TaskEvent) string {
	switch kind {
	case tools.EventTaskProgress:
		return fmt.Sprintf("[%s] %s", e.Description, e.Line)
	case tools.EventTaskDone:
		return fmt.Sprintf("[%s] %s %s", e.Description, taskMark(e.Status), taskOutcome(e.Status, e.Duration))
	}
	if e.Status == tools.TaskPending {
		return fmt.Sprintf("[%s] waiting for a free slot (%d ahead)", e.Description, e.Ahead)
	}
	return fmt.Sprintf("[%s] subagent started (%s)", e.Description, e.Type)
}

func taskMark(status string) string {
	switch status {
	case tools.TaskCompleted:
		return "✅"
	case tools.TaskFailed:
		return "❌"
	case tools.TaskTimedOut:
		return "⌛"
	case tools.TaskInterrupted:
		return "⚠️"
	}
	return "⏹"
}

func taskOutcome(status string, dur time.Duration) string {
	switch status {
	case tools.TaskCompleted:
		return "done in " + shortDuration(dur)
	case tools.TaskFailed:
		return "failed after " + shortDuration(dur)
	case tools.TaskTimedOut:
		return "timed out after " + shortDuration(dur)
	case tools.TaskInterrupted:
		return "interrupted by a restart"
	}
	if dur == 0 {
		return "cancelled before it started"
	}
	return "cancelled after " + shortDuration(dur)
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
func (d *delivery) finishTasks() {
	d.mu.Lock()
	tasks := d.tasks
	for _, v := range tasks {
		if !v.final {
			v.final, v.ev.Status = true, tools.TaskCancelled
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

// forgetTasks drops the run's tasks from its conversation's /status.
func (d *delivery) forgetTasks() {
	if d.c == nil {
		return
	}
	d.b.mu.Lock()
	d.c.tasks = nil
	d.b.mu.Unlock()
}

// trackTask keeps the conversation's list of unfinished tasks for /status.
func (b *Bus) trackTask(c *conv, te *tools.TaskEvent, done bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, t := range c.tasks {
		if t.ID == te.ID {
			if done {
				c.tasks = append(c.tasks[:i], c.tasks[i+1:]...)
			} else {
				c.tasks[i] = *te
			}
			return
		}
	}
	if !done {
		c.tasks = append(c.tasks, *te)
	}
}

// recordTaskReply stores which message is a task's progress reply, so that
// it can be marked interrupted after a restart.
func (b *Bus) recordTaskReply(runID, taskID, replyTo, progressID string) {
	if runID == "" {
		return
	}
	err := b.opts.Store.Batch(func(tx *store.Tx) error {
		return tx.UpdateTask(runID, taskID, func(t *store.Task) { t.ReplyTo, t.Progress = replyTo, progressID })
	})
	if err != nil {
		b.log.Error("recording a subagent's reply", "task", taskID, "err", err)
	}
}

// tasksStatus is the /status lines about a conversation's subagents.
// Callers hold b.mu.
func (b *Bus) tasksStatus(c *conv) string {
	if len(c.tasks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Subagents: %d\n", len(c.tasks))
	for _, t := range c.tasks {
		if t.Status == tools.TaskPending {
			fmt.Fprintf(&sb, "• %s (%s) — waiting for a free slot\n", t.Description, t.Type)
			continue
		}
		fmt.Fprintf(&sb, "• %s (%s) — running for %s\n", t.Description, t.Type, b.opts.Now().Sub(t.Started).Round(time.Second))
	}
	return sb.String()
}

// ReportInterrupted tells the conversations whose subagent tasks a restart
// cut off: each task's progress reply is marked interrupted, and each
// conversation gets one message listing them.
func (b *Bus) ReportInterrupted(ctx context.Context, tasks []*store.Task) {
	type convTasks struct {
		replyTo string
		descs   []string
	}
	byConv := map[string]*convTasks{}
	var order []string
	for _, t := range tasks {
		channel, chat, topic := SplitChatKey(t.ChatKey)
		if _, ok := b.sender(channel); !ok {
			continue
		}
		if t.Progress != "" {
			o := &Outbound{Kind: OutEdit, Channel: channel, ChatID: chat, Topic: topic, ReplyTo: t.ReplyTo,
				EditID: t.Progress, Task: t.ID, Final: true, Failed: true,
				Text: taskMark(tools.TaskInterrupted) + " " + t.Description + " · " + taskOutcome(tools.TaskInterrupted, 0)}
			b.send(ctx, t.ChatKey, o)
		}
		ct := byConv[t.ChatKey]
		if ct == nil {
			ct = &convTasks{}
			byConv[t.ChatKey] = ct
			order = append(order, t.ChatKey)
		}
		if t.ReplyTo != "" {
			ct.replyTo = t.ReplyTo
		}
		ct.descs = append(ct.descs, t.Description)
	}
	for _, key := range order {
		ct := byConv[key]
		channel, chat, topic := SplitChatKey(key)
		text := fmt.Sprintf("I was restarted while subagents were working on your message, so %d task(s) stopped before finishing: %s. Send the message again and I'll redo them.",
			len(ct.descs), strings.Join(ct.descs, "; "))
		b.send(ctx, key, &Outbound{Kind: OutMessage, Channel: channel, ChatID: chat, Topic: topic,
			ReplyTo: ct.replyTo, Text: text, Final: true, Failed: true})
	}
}

// SplitChatKey splits a conversation key into channel, chat and topic.
func SplitChatKey(key string) (channel, chat, topic string) {
	channel, rest, _ := strings.Cut(key, ":")
	chat, topic, _ = strings.Cut(rest, ":")
	return channel, chat, topic
}
