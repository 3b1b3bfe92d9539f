package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// maxTaskLines is how many recent steps a subagent's progress reply shows.
const maxTaskLines = 4

// taskView is one subagent's progress reply. Guarded by delivery.mu.
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
func (d *delivery) task(ctx context.Context, ev event.Event) {
	te := taskOf(ev)
	if te == nil {
		return
	}
	_, done := ev.(event.TaskDone)
	runID := d.runID
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

	if d.c != nil {
		d.b.trackTask(d.c, te, done)
	}
	if d.stream {
		d.b.send(ctx, d.key, d.out(OutActivity, taskLine(ev, te)))
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
		if e.Status == event.TaskCompleted || e.Status == event.TaskFailed {
			if r := clipLines(e.Result, 3, 300); r != "" {
				text += "\n\n" + r
			}
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
		return fmt.Sprintf("[%s] %s %s", e.Description, taskMark(e.Status), taskOutcome(e.Status, e.Duration))
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
func (b *Bus) trackTask(c *conv, te *event.Task, done bool) {
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
		if t.Status == event.TaskPending {
			fmt.Fprintf(&sb, "• %s (%s) — waiting for a free slot\n", t.Description, t.Type)
			continue
		}
		fmt.Fprintf(&sb, "• %s (%s) — running for %s\n", t.Description, t.Type, b.opts.Now().Sub(t.Started).Round(time.Second))
	}
	return sb.String()
}

// RecordInterrupted records, inside tx, what the conversations of runs a
// previous process left running must be told: each run gets one sentence
// (naming its stopped subagent tasks) pointing to /retry, and each task's
// progress reply is finished as interrupted. The outbox delivers them once
// the channels are up, so a crash before then loses nothing.
func (b *Bus) RecordInterrupted(tx *store.Tx, runs []*store.Run, tasks []*store.Task) error {
	now := b.opts.Now()
	put := func(chatKey string, o *Outbound) error {
		data, err := json.Marshal(newRecord(chatKey, "", o, now))
		if err != nil {
			return err
		}
		_, err = tx.PutOutbox(data)
		return err
	}
	byRun := map[string][]string{}
	for _, t := range tasks {
		byRun[t.RunID] = append(byRun[t.RunID], t.Description)
		if t.Progress == "" {
			continue
		}
		channel, chat, topic := SplitChatKey(t.ChatKey)
		if err := put(t.ChatKey, &Outbound{Kind: OutEdit, Channel: channel, ChatID: chat, Topic: topic, ReplyTo: t.ReplyTo,
			EditID: t.Progress, Task: t.ID, Final: true, Failed: true,
			Text: taskMark(event.TaskInterrupted) + " " + t.Description + " · " + taskOutcome(event.TaskInterrupted, 0)}); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if r.ChatKey == "" {
			continue
		}
		channel, chat, topic := SplitChatKey(r.ChatKey)
		if err := put(r.ChatKey, &Outbound{Kind: OutMessage, Channel: channel, ChatID: chat, Topic: topic,
			ReplyTo: r.MessageID, Text: interruptedText(byRun[r.ID]), Final: true, Failed: true}); err != nil {
			return err
		}
	}
	return nil
}

// interruptedText is the one sentence a conversation gets about a reply a
// restart cut short.
func interruptedText(tasks []string) string {
	var stopped string
	switch len(tasks) {
	case 0:
	case 1:
		stopped = fmt.Sprintf(" (the subagent task %q stopped too)", tasks[0])
	default:
		q := make([]string, len(tasks))
		for i, t := range tasks {
			q[i] = strconv.Quote(t)
		}
		stopped = fmt.Sprintf(" (%d subagent tasks stopped too: %s)", len(tasks), strings.Join(q, ", "))
	}
	return "⚠️ I was restarted before I could finish this reply" + stopped + "; send /retry to run your message again."
}

// SplitChatKey splits a conversation key into channel, chat and topic.
func SplitChatKey(key string) (channel, chat, topic string) {
	channel, rest, _ := strings.Cut(key, ":")
	chat, topic, _ = strings.Cut(rest, ":")
	return channel, chat, topic
}
