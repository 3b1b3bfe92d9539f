package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// RunData is what a scheduled run carries in runner.Request.Data for the
// front end that shows it.
type RunData struct {
	Task string `json:"task"`
	// Header marks the answer in the chat: "⏰ <description>", and says
	// when the occurrence is late.
	Header string `json:"header"`
}

// lateAfter is how far past its time an occurrence that fell due while
// the service was down must start to be called late.
const lateAfter = time.Second

// fire submits one due task's occurrence, claiming it (the next run moved
// on, a one-shot removed) in the commit that stores the run. What the
// chat must be told besides is left to the caller, to say once no lock
// is held.
func (s *Scheduler) fire(id string, now time.Time) (chatKey, notice string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	t, ok := s.findLocked(id)
	s.mu.Unlock()
	if !ok || t.Paused || t.NextRun.IsZero() || t.NextRun.After(now) {
		return "", ""
	}
	if s.opts.Allowed != nil && !s.opts.Allowed(t.User, t.UserName) {
		s.log.Warn("scheduler: pausing a task whose creator may no longer use the bot", "task", t.ID, "user", t.User)
		s.update(id, func(t *Task) {
			t.Paused, t.NextRun = true, time.Time{}
			t.LastStatus = "paused: its creator may no longer use this bot"
		})
		return "", ""
	}
	due := t.NextRun
	next, recurring := time.Time{}, t.Schedule.Recurring()
	if recurring {
		next, _ = t.Schedule.Next(now) // once for all the occurrences missed
	}
	if t.RunID != "" {
		s.skip(id, next, "skipped: its previous run had not ended")
		return "", ""
	}
	err := s.submit(t, due, next, now)
	var full *runner.FullError
	switch {
	case err == nil:
	case errors.As(err, &full) && recurring:
		s.skip(id, next, fmt.Sprintf("skipped: %d messages were waiting in the conversation", full.Waiting))
		return t.ChatKey, fmt.Sprintf("⏰ I skipped the scheduled task %s (%s): %d messages were already waiting here.", t.ID, t.label(), full.Waiting)
	case errors.Is(err, runner.ErrClosed), full != nil: // still due after a restart; a one-shot waits for room
		s.retryLater(id, now)
	default:
		s.log.Error("scheduler: submitting a task's run; trying again in a minute", "task", t.ID, "err", err)
		s.retryLater(id, now)
	}
	return "", ""
}

// retryLater puts off a due task whose run could not be submitted by a
// minute, in memory only: after a restart it is still due.
func (s *Scheduler) retryLater(id string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.findInPlaceLocked(id); ok {
		cur.NextRun = now.Add(time.Minute)
	}
}

// submit starts t's occurrence that was due at due. next is its next run
// (zero for a one-shot, which leaves the list with this run).
func (s *Scheduler) submit(t *Task, due, next, now time.Time) error {
	runID := agent.NewID(runner.ScheduledRunPrefix)
	claimed := *t
	claimed.LastRun, claimed.NextRun, claimed.RunID = now, next, runID
	var keep *Task
	if t.Schedule.Recurring() {
		keep = &claimed
	}
	s.mu.Lock()
	tasks := s.replacedLocked(t.ChatKey, t.ID, keep)
	index := s.index
	s.mu.Unlock()
	late := due.Before(s.startedAt()) && now.Sub(due) >= lateAfter
	data, err := json.Marshal(RunData{Task: t.ID, Header: header(t, due, late)})
	if err != nil {
		return err
	}
	var newIndex []string
	_, err = s.opts.Submit(runner.Request{
		ID: runID, Origin: runner.OriginSchedule, Conv: t.ChatKey, ChatKey: t.ChatKey,
		ThreadID: threadFor(t), User: t.User, Text: t.Prompt, Data: data, Model: s.modelOf(t.ChatKey),
		Strategy: runner.Enqueue, Created: now,
		Also: func(tx *store.Tx) error {
			var err error
			newIndex, err = putConv(tx, t.ChatKey, tasks, index)
			return err
		},
	})
	if err == nil {
		s.apply(t.ChatKey, tasks, newIndex)
	}
	return err
}

// threadFor is the agent thread of a run: a fresh one in a chat (the
// task belongs to the chat, not to one of its conversations) unless the
// task continues one of its own, the API thread itself for a task of the
// HTTP API (its clients read the answers there).
func threadFor(t *Task) string {
	if id, ok := strings.CutPrefix(t.ChatKey, "api:"); ok {
		return id
	}
	if t.Thread != "" {
		return t.Thread // the task asked to go on where its last run ended
	}
	return agent.NewID("th_")
}

// modelOf is the model the conversation was switched to (/models NAME),
// for its scheduled runs too; "" for the default (or an API thread, whose
// runs use its own).
func (s *Scheduler) modelOf(chatKey string) string {
	if strings.HasPrefix(chatKey, "api:") {
		return ""
	}
	var model string
	s.opts.Store.View(func(tx *store.Tx) error {
		id, err := tx.ChatThread(chatKey)
		if err != nil {
			return err
		}
		th, err := tx.Thread(id)
		if err == nil {
			model = th.Model
		}
		return err
	})
	return model
}

// header is the line a scheduled answer starts with; a late one says
// when it was due.
func header(t *Task, due time.Time, late bool) string {
	h := "⏰ " + t.label()
	if late {
		loc := due.Location()
		if t.Schedule.Cron != "" {
			if l, err := loadZone(t.Schedule.TZ); err == nil {
				loc = l
			}
		} else if !t.Schedule.At.IsZero() {
			loc = t.Schedule.At.Location()
		}
		h += fmt.Sprintf(" (late: it was due at %s)", due.In(loc).Format("2006-01-02 15:04 MST"))
	}
	return h
}

// skip moves a task past an occurrence that did not run.
func (s *Scheduler) skip(id string, next time.Time, why string) {
	_, err := s.update(id, func(t *Task) {
		t.NextRun, t.LastStatus = next, why
	})
	if err != nil {
		s.log.Error("scheduler: recording a skipped occurrence", "task", id, "err", err)
	}
}

// findInPlaceLocked returns the task itself. Callers hold s.mu.
func (s *Scheduler) findInPlaceLocked(id string) (*Task, bool) {
	for _, tasks := range s.convs {
		for _, t := range tasks {
			if t.ID == id {
				return t, true
			}
		}
	}
	return nil, false
}

func (s *Scheduler) notify(chatKey, text string) {
	if s.opts.Notify != nil {
		s.opts.Notify(chatKey, text)
	}
}

// Ended is told how a scheduled run ended (status a runner.Status…). It
// never blocks: the loop records it.
func (s *Scheduler) Ended(req runner.Request, status, errText string) {
	var d RunData
	if json.Unmarshal(req.Data, &d) != nil || d.Task == "" {
		return
	}
	s.mu.Lock()
	s.ended = append(s.ended, ending{task: d.Task, run: req.ID, status: status, errText: errText})
	s.mu.Unlock()
	s.poke()
}

// record records the runs that ended in their tasks: a success clears the
// failures, MaxFailures failures in a row pause the task (and say so).
func (s *Scheduler) record() {
	s.mu.Lock()
	ended := s.ended
	s.ended = nil
	s.mu.Unlock()
	for _, e := range ended {
		var notice string
		s.wmu.Lock()
		t, err := s.update(e.task, func(t *Task) {
			if t.RunID == e.run {
				t.RunID = ""
			}
			notice = s.outcome(t, e)
		})
		s.wmu.Unlock()
		if err != nil {
			s.log.Error("scheduler: recording a run's outcome", "task", e.task, "err", err)
		}
		if t != nil && notice != "" {
			s.notify(t.ChatKey, notice)
		}
	}
}

// outcome applies one run's end to t and returns what the chat must be
// told besides what the run showed ("" for nothing).
func (s *Scheduler) outcome(t *Task, e ending) string {
	switch e.status {
	case runner.StatusSuccess:
		t.LastStatus, t.Failures = "ok", 0
		return ""
	case runner.StatusInterrupted:
		t.LastStatus = "stopped: " + e.errText
		return ""
	case runner.StatusPending: // accepted as deerflow shut down: it runs after the restart
		return ""
	}
	t.Failures++
	t.LastStatus = "error: " + e.errText
	if t.Failures < s.opts.MaxFailures {
		return ""
	}
	t.Paused, t.NextRun = true, time.Time{}
	t.LastStatus = fmt.Sprintf("paused after %d failed runs in a row (last: %s)", t.Failures, e.errText)
	return fmt.Sprintf("⏰ I paused the scheduled task %s (%s): its last %d runs failed. Schedule it again once the problem is fixed, or /unschedule %s.", t.ID, t.label(), t.Failures, t.ID)
}
