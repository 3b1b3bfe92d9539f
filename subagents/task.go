package subagents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// errTimedOut is the cancellation cause of a task that ran out of time.
var errTimedOut = errors.New("subagents: task timed out")

// maxSummary caps the result kept in the task record and shown in chat.
const maxSummary = 600

// task is one subagent task while it runs.
type task struct {
	m    *Manager
	env  *tools.Env
	kind *kind
	args taskArgs
	ev   event.Task  // the latest state, as reported
	used event.Usage // the subagent run's tokens, once it answered

	steps []string // the latest progress lines, for a timed-out report

	pending chan error // the last record write started, until waited for
	// ctx, once the task runs, is its context for logging (it names the
	// lead's run and the task).
	ctx context.Context
}

// Outcome is how a subagent task ended.
type Outcome struct {
	ID       string
	Status   string // an event.Task status: completed, failed, cancelled, timed_out, interrupted
	Text     string // the subagent's answer, or what went wrong, in full
	Duration time.Duration
	Usage    event.Usage // the subagent's tokens and their cost
}

// execute runs a subagent for args. It reports task events through env and
// records the task with its run.
func (m *Manager) execute(ctx context.Context, env *tools.Env, k *kind, args taskArgs) Outcome {
	t := &task{m: m, env: env, kind: k, args: args, ev: event.Task{
		ID: agent.NewID("task_"), Description: args.Description, Type: k.Name, Status: event.TaskPending,
	}}
	ctx = logctx.With(ctx, slog.String("task", t.ev.ID)) // its lines name the lead's run and the task
	t.ctx = ctx
	created := m.opts.Now()
	t.record(func(r *store.Task) {
		r.ThreadID, r.ChatKey, r.Type, r.Description = env.ThreadID, env.ChatKey, k.Name, args.Description
		r.Turn, r.Status, r.Created = env.Turn, event.TaskPending, created
	})

	err := m.slots.acquire(ctx, func(ahead int) {
		t.ev.Ahead = ahead
		t.emit(event.TaskStarted{Task: t.ev})
	})
	if err != nil {
		return t.end(t.stopStatus(ctx), 0, context.Cause(ctx).Error())
	}
	defer m.slots.release()
	m.running.Add(1)
	defer m.running.Add(-1)

	started := m.opts.Now()
	t.ev.Status, t.ev.Started, t.ev.Ahead = event.TaskRunning, started, 0
	t.record(func(r *store.Task) { r.Status, r.Started = event.TaskRunning, started })
	t.emit(event.TaskStarted{Task: t.ev})

	sctx, cancel := context.WithTimeoutCause(ctx, k.Timeout, errTimedOut)
	defer cancel()
	status, result := t.run(sctx)
	return t.end(status, m.opts.Now().Sub(started), result)
}

// run runs the subagent's loop and returns its final status and answer.
func (t *task) run(ctx context.Context) (status, result string) {
	model := t.kind.Model
	if model == "" {
		model = t.env.Model
	}
	var persona *agent.Persona // the lead's tool restrictions, on top of the type's
	if t.env.Allow != nil {
		persona = &agent.Persona{Allow: t.env.Allow}
	}
	var text strings.Builder // the current step's text
	for ev := range t.kind.agent.Run(ctx, agent.Input{
		ThreadID:  t.ev.ID,
		ChatKey:   t.env.ChatKey,
		UserID:    t.env.UserID,
		Text:      t.args.Prompt,
		Model:     model,
		Workspace: t.env.ThreadID,
		Persona:   persona,
	}) {
		switch ev := ev.(type) {
		case event.TextDelta:
			text.WriteString(ev.Text)
		case event.TextReset:
			text.Reset()
		case event.ToolCall:
			if s := firstLine(text.String()); s != "" {
				t.progress(s)
			}
			text.Reset()
			line := ev.Name
			if ev.Summary != "" {
				line += ": " + ev.Summary
			}
			t.progress("› " + line)
		case event.Answer:
			t.used = ev.Usage
			if ev.Capped {
				return event.TaskCompleted, fmt.Sprintf("(The subagent used all of its %d steps before finishing; this is where it stopped.)\n\n%s", t.kind.MaxTurns, t.lastSteps())
			}
			return event.TaskCompleted, ev.Text
		case event.Error:
			return event.TaskFailed, ev.Text
		case event.Stopped:
			return t.stopStatus(ctx), context.Cause(ctx).Error()
		}
	}
	return event.TaskFailed, "the subagent ended without an answer"
}

// stopStatus is the status of a task whose context ended.
// A stop by a person is a cancellation; any other cause (shutdown) an
// interruption.
func (t *task) stopStatus(ctx context.Context) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimedOut):
		return event.TaskTimedOut
	case errors.Is(cause, agent.ErrStopped), errors.Is(cause, context.Canceled):
		return event.TaskCancelled
	}
	return event.TaskInterrupted
}

// progress reports one step of the subagent.
func (t *task) progress(line string) {
	line = tools.Clip(line, 200)
	t.steps = append(t.steps, line)
	if len(t.steps) > 5 {
		t.steps = t.steps[len(t.steps)-5:]
	}
	t.ev.Line = line
	t.emit(event.TaskProgress{Task: t.ev})
	t.ev.Line = ""
}

func (t *task) lastSteps() string {
	if len(t.steps) == 0 {
		return "(no steps were taken)"
	}
	return "Its last steps:\n" + strings.Join(t.steps, "\n")
}

// end records and reports the task's outcome.
func (t *task) end(status string, dur time.Duration, result string) Outcome {
	var body string
	switch status {
	case event.TaskCompleted:
		body = strings.TrimSpace(result)
		if body == "" {
			body = "(the subagent gave an empty answer)"
		}
	case event.TaskFailed:
		body = "The subagent failed: " + result
	case event.TaskTimedOut:
		body = fmt.Sprintf("The subagent did not finish within its time limit of %s and was stopped. %s", t.kind.Timeout, t.lastSteps())
	case event.TaskInterrupted:
		body = fmt.Sprintf("The task was interrupted before it finished (%s).", result)
	default:
		if dur == 0 {
			body = "The task was cancelled before it started."
		} else {
			body = "The task was cancelled before it finished."
		}
	}
	summary := tools.Clip(body, maxSummary)
	ended := t.m.opts.Now()
	t.record(func(r *store.Task) { r.Status, r.Ended, r.Result = status, ended, summary })
	if err := t.wait(); err != nil {
		t.m.log.ErrorContext(t.ctx, "recording a subagent task", "err", err)
	}
	t.ev.Status, t.ev.Duration, t.ev.Result, t.ev.Usage = status, dur, summary, t.used
	t.emit(event.TaskDone{Task: t.ev})
	t.m.opts.Metrics.SubagentTask(status)
	return Outcome{ID: t.ev.ID, Status: status, Text: body, Duration: dur, Usage: t.used}
}

// forLead is the task tool's result: status, duration, the subagent's
// tokens (when it reported any) and result text.
func forLead(o Outcome, args taskArgs, k *kind) string {
	var used string
	if u := o.Usage; u.PromptTokens+u.CompletionTokens > 0 {
		used = fmt.Sprintf("\nTokens: %d in, %d out", u.PromptTokens, u.CompletionTokens)
	}
	return fmt.Sprintf("Task %q (%s, %s)\nStatus: %s\nDuration: %s%s\n\n%s",
		args.Description, k.Name, o.ID, o.Status, readable(o.Duration), used, o.Text)
}

// emit reports ev, an event about the task, to the lead's run.
func (t *task) emit(ev event.Event) {
	if t.env.Emit != nil {
		t.env.Emit(ev)
	}
}

// record starts applying fn to the task's stored record, after the
// task's previous write. wait returns the first error.
func (t *task) record(fn func(*store.Task)) {
	if t.env.RunID == "" {
		return // not part of a recorded run (tests, tools called directly)
	}
	prev, done := t.pending, make(chan error, 1)
	t.pending = done
	runID, id := t.env.RunID, t.ev.ID
	go func() {
		if prev != nil {
			if err := <-prev; err != nil {
				done <- err
				return
			}
		}
		done <- t.m.opts.Store.Batch(func(tx *store.Tx) error { return tx.UpdateTask(runID, id, fn) })
	}()
}

func (t *task) wait() error {
	if t.pending == nil {
		return nil
	}
	err := <-t.pending
	t.pending = nil
	return err
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// readable is a duration for the lead: 340ms, 12.3s, 2m5s.
func readable(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
