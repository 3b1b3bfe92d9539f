package router

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"strings"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// Schedules is the scheduled tasks as the router sees them: it answers
// /schedules, /unschedule and a /status line, and shows scheduled runs
// (origin schedule) in their chat, reporting how each ended.
type Schedules interface {
	// ListText answers /schedules in chatKey.
	ListText(chatKey string) string
	// CancelText answers /unschedule id in chatKey.
	CancelText(chatKey, id string) string
	// StatusText is the /status line about chatKey's tasks ("" if none).
	StatusText(chatKey string) string
	// Ended is told how a scheduled run ended; it must not block.
	Ended(req runner.Request, status, errText string)
}

// scheduleData is what the scheduler puts in a scheduled run's Data.
type scheduleData struct {
	Header string `json:"header"`
}

// handleSchedules registers the router as the front end of scheduled
// runs: each is shown in its chat as a new message (not a reply), in the
// task's thread or topic, its answer starting with the task's header.
func (r *Router) handleSchedules() {
	r.opts.Runner.Handle(runner.OriginSchedule, runner.Handler{
		Engine:  runner.EngineFunc(r.executeScheduled),
		Observe: r.observeScheduled,
		Interrupted: func(tx *store.Tx, rec *store.Run, tasks []*store.Task) error {
			return r.recordInterrupted(tx, []*store.Run{rec}, tasks, scheduledInterruptedText)
		},
	})
}

// scheduledInterruptedText is what a chat is told about a scheduled run a
// restart cut short: /retry would run the person's last message, not the
// task.
func scheduledInterruptedText(tasks []string) string {
	text := "⏰ I was restarted before I could finish a scheduled task's run"
	if len(tasks) > 0 {
		text += fmt.Sprintf(" (%d subagent task(s) stopped too)", len(tasks))
	}
	return text + "; a repeating task runs again at its next time (/schedules lists them), a one-time task does not."
}

// scheduledRestartText ends a scheduled run that a shutdown stops: /retry
// would run the person's last message, not the task.
const scheduledRestartText = "⏰ I had to stop this scheduled run because I'm restarting; a repeating task runs again at its next time (/schedules lists them), a one-time task does not."

// scheduledInbound is the chat a scheduled run answers in, as if its
// creator had sent the prompt there.
func scheduledInbound(q *runner.Request) *bus.Inbound {
	channel, chat, topic := bus.SplitChatKey(q.ChatKey)
	_, user, _ := strings.Cut(q.User, ":")
	return &bus.Inbound{Channel: channel, ChatID: chat, Topic: topic, UserID: user, Text: q.Text, Time: q.Created}
}

// executeScheduled runs a scheduled task's prompt with the lead agent,
// rendering it like a chat run.
func (r *Router) executeScheduled(ctx context.Context, run *runner.Run) iter.Seq[event.Event] {
	return func(yield func(event.Event) bool) {
		var data scheduleData
		json.Unmarshal(run.Req.Data, &data)
		head := func(text string) string {
			if data.Header == "" {
				return text
			}
			return data.Header + "\n\n" + text
		}
		in := scheduledInbound(&run.Req)
		lctx := logctx.With(r.ctx, slog.String("run", run.ID()))
		d := r.delivery(lctx, in, run.Req.ThreadID, run.ID(), scheduledRestartText)
		sl := r.slot(run.ID())
		r.mu.Lock()
		sl.ctx, sl.d = lctx, d
		r.mu.Unlock()
		ain := run.Input()
		r.gatePlan(&ain)
		if tx := d.AnswerTx(); tx != nil {
			ain.OnAnswer = func(t *store.Tx, answer string) error { return tx(t, head(answer)) }
		}
		for ev := range r.opts.Agent.Run(ctx, ain) {
			switch e := ev.(type) {
			case event.Clarification: // before the question is shown
				r.continueIn(in.ChatKey(), run.Req.ThreadID)
			case event.Answer:
				e.Text = head(e.Text)
				ev = e
			case event.Error:
				e.Text = head(e.Text)
				ev = e
			}
			if !yield(ev) {
				return
			}
		}
	}
}

// continueIn makes threadID, a scheduled run's that asked the person a
// question, the conversation's current thread: their reply answers it,
// with the run's context.
func (r *Router) continueIn(chatKey, threadID string) {
	if strings.HasPrefix(chatKey, "api:") {
		return // the run was on the API thread itself
	}
	if err := r.opts.Store.Update(func(tx *store.Tx) error { return tx.SetChatThread(chatKey, threadID) }); err != nil {
		r.log.Error("moving the conversation to a scheduled run's question", "chat", chatKey, "err", err)
		return
	}
	r.mu.Lock()
	r.convLocked(chatKey).threadID = threadID
	r.mu.Unlock()
}

// observeScheduled renders a scheduled run's events and, at its end,
// tells the scheduler how it went.
func (r *Router) observeScheduled(run *runner.Run, ev event.Event) {
	r.observe(run, ev)
	if end, ok := ev.(event.Ended); ok && r.opts.Schedules != nil {
		var data scheduleData
		json.Unmarshal(run.Req.Data, &data)
		errText := strings.TrimPrefix(end.Error, data.Header+"\n\n")
		r.opts.Schedules.Ended(run.Req, end.Status, errText)
	}
}

// Notify posts text as a new message in the conversation chatKey (the
// scheduler's notices: a task paused, an occurrence skipped).
func (r *Router) Notify(chatKey, text string) {
	channel, chat, topic := bus.SplitChatKey(chatKey)
	if _, err := r.out.Send(r.ctx, chatKey, &bus.Outbound{
		Kind: bus.OutMessage, Channel: channel, ChatID: chat, Topic: topic, Text: text, Final: true,
	}); err != nil {
		r.log.Error("posting a scheduler notice", "chat", chatKey, "err", err)
	}
}

// cmdSchedules answers /schedules and /unschedule.
func (r *Router) cmdSchedules(ctx context.Context, in *bus.Inbound, name, args string) error {
	if r.opts.Schedules == nil {
		return r.reply(ctx, in, "Scheduled tasks are switched off on this deerflow (scheduler.enabled: false).")
	}
	if name == "unschedule" {
		return r.reply(ctx, in, r.opts.Schedules.CancelText(in.ChatKey(), args))
	}
	return r.reply(ctx, in, r.opts.Schedules.ListText(in.ChatKey()))
}

// scheduleStatus is the /status line about the conversation's tasks,
// with its newline ("" if none).
func (r *Router) scheduleStatus(chatKey string) string {
	if r.opts.Schedules == nil {
		return ""
	}
	if line := r.opts.Schedules.StatusText(chatKey); line != "" {
		return line + "\n"
	}
	return ""
}

// SenderName returns the platform user name (Telegram's @username) of the
// person whose message the chat run runID answers, "" when unknown: a
// scheduled task keeps it, for allow-lists written with user names.
func (r *Router) SenderName(runID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sl := r.slots[runID]; sl != nil && sl.in != nil {
		return sl.in.UserName
	}
	return ""
}
