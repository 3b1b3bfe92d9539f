package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
)

// ErrNotFound: the conversation has no task of that id.
var ErrNotFound = errors.New("scheduler: no such task in this conversation")

// NewTask is a task to create.
type NewTask struct {
	ChatKey     string // the conversation it runs and answers in
	User        string // channel:user, who it runs as
	UserName    string // their platform user name, when known
	Prompt      string
	Description string
	Spec        Spec
	// Continue: every run goes on in one thread of the task's own, seeing
	// the earlier runs ("what changed since yesterday"); else each run
	// starts a fresh one.
	Continue bool
}

// Create checks and stores a new task. Its errors are sentences for the
// person or the model.
func (s *Scheduler) Create(n NewTask) (Task, error) {
	n.Prompt = strings.TrimSpace(n.Prompt)
	n.Description = strings.TrimSpace(n.Description)
	switch {
	case n.Prompt == "":
		return Task{}, errors.New("prompt is empty: say what to do at each run")
	case !chatKeyOK(n.ChatKey):
		return Task{}, errors.New("scheduled tasks belong to a conversation, and this run has none")
	}
	now := s.opts.Now()
	sched, err := Parse(n.Spec, Limits{MinInterval: s.opts.MinInterval, Timezone: s.opts.Timezone}, now)
	if err != nil {
		return Task{}, err
	}
	next, ok := sched.Next(now)
	if !ok {
		return Task{}, errors.New("the schedule has no run in the future")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if n.User != "" && s.userTasksLocked(n.User) >= s.opts.MaxPerUser {
		s.mu.Unlock()
		return Task{}, fmt.Errorf("you already have %d scheduled tasks, the most allowed (scheduler.max_per_user); cancel one first", s.opts.MaxPerUser)
	}
	t := &Task{
		ID: newID(), ChatKey: n.ChatKey, User: n.User, UserName: n.UserName, Prompt: n.Prompt, Description: clip(n.Description, 200),
		Schedule: sched, NextRun: next, Created: now,
	}
	if n.Continue && !strings.HasPrefix(n.ChatKey, "api:") { // an API task runs on its thread anyway
		t.Thread = agent.NewID("th_")
	}
	tasks := s.replacedLocked(n.ChatKey, t.ID, t)
	s.mu.Unlock()
	if err := s.write(n.ChatKey, tasks); err != nil {
		return Task{}, fmt.Errorf("scheduler: storing the task: %w", err)
	}
	s.poke()
	return *t, nil
}

// Cancel removes a task of the conversation.
func (s *Scheduler) Cancel(chatKey, id string) (Task, error) {
	return s.cancelIf(id, func(key string) bool { return key == chatKey })
}

func (s *Scheduler) cancelIf(id string, match func(key string) bool) (Task, error) {
	id = strings.TrimSpace(id)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	t, ok := s.findLocked(id)
	if !ok || !match(t.ChatKey) {
		s.mu.Unlock()
		return Task{}, ErrNotFound
	}
	tasks := s.replacedLocked(t.ChatKey, id, nil)
	s.mu.Unlock()
	if err := s.write(t.ChatKey, tasks); err != nil {
		return Task{}, fmt.Errorf("scheduler: removing the task: %w", err)
	}
	return *t, nil
}

// ListText answers /schedules: one line per task, starting with its id.
// In a whole chat it lists its threads' and topics' tasks too.
func (s *Scheduler) ListText(chatKey string) string {
	tasks := s.chatTasks(chatKey)
	if len(tasks) == 0 {
		return "No scheduled tasks in this conversation. Ask me to do something at a time or on a schedule (\"every weekday at 9, summarize the news\") and I'll set one up."
	}
	var sb strings.Builder
	for _, t := range tasks {
		fmt.Fprintf(&sb, "%s — %s — %s", t.ID, t.label(), t.Schedule)
		switch {
		case t.Paused:
			sb.WriteString(" — paused")
		case !t.NextRun.IsZero():
			fmt.Fprintf(&sb, " — next %s", formatTime(t.NextRun, t.Schedule))
		}
		if t.LastStatus != "" {
			fmt.Fprintf(&sb, " — last: %s", clip(t.LastStatus, 120))
		}
		sb.WriteString("\n")
	}
	sb.WriteString("/unschedule ID cancels one.")
	return sb.String()
}

// CancelText answers /unschedule ID.
func (s *Scheduler) CancelText(chatKey, id string) string {
	if strings.TrimSpace(id) == "" {
		return "Say which task: /unschedule ID (/schedules lists them)."
	}
	t, err := s.cancelIf(id, func(key string) bool { return inChat(chatKey, key) })
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Sprintf("There is no scheduled task %q in this conversation; /schedules lists them.", strings.TrimSpace(id))
	case err != nil:
		s.log.Error("scheduler: cancelling a task", "task", id, "err", err)
		return "I couldn't cancel that task; please try again."
	}
	return fmt.Sprintf("Cancelled the scheduled task %s (%s).", t.ID, t.label())
}

// StatusText is the /status line about a conversation's tasks ("" if
// none).
func (s *Scheduler) StatusText(chatKey string) string {
	tasks := s.chatTasks(chatKey)
	if len(tasks) == 0 {
		return ""
	}
	line := fmt.Sprintf("Scheduled tasks: %d", len(tasks))
	if t := tasks[0]; !t.NextRun.IsZero() && !t.Paused {
		line += fmt.Sprintf(" (next %s: %s)", formatTime(t.NextRun, t.Schedule), t.label())
	}
	return line
}

// formatTime shows a run time in the schedule's own zone.
func formatTime(t time.Time, sched Schedule) string {
	loc := time.UTC
	switch {
	case sched.Cron != "":
		if l, err := loadZone(sched.TZ); err == nil {
			loc = l
		}
	case !sched.At.IsZero():
		loc = sched.At.Location()
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}
