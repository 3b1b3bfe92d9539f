// Package scheduler runs scheduled tasks: a person (through the lead
// agent's schedule_task tool, or the HTTP API) asks for a prompt to run at
// a time, every interval or on a cron schedule, and each occurrence is
// submitted to the runner as a run of origin schedule in the conversation
// where the task was created, as the person who created it. The router
// renders those runs in the chat and tells the scheduler how they ended.
//
// Tasks live in the store's state bucket. The claim of an occurrence (the
// task's next run moved on) is written in the commit that stores the run's
// request, so across a crash an occurrence is either still due or already
// queued: never lost, never run twice.
//
// It imports runner, store, agent (for ids), bus (for conversation keys)
// and tools; never router or channels.
package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// Options configures a Scheduler. Zero numbers take the documented
// defaults.
type Options struct {
	Store *store.Store // required
	// Submit starts a run (runner.Runner.Submit); required.
	Submit func(runner.Request) (runner.Ticket, error)
	// Allowed re-checks a task's creator ("channel:user", and their
	// platform user name when known) against the allow-lists before each
	// of its runs; false pauses the task. Nil: everyone is allowed.
	Allowed func(user, userName string) bool
	// SenderName returns the platform user name of the person a run
	// answers (by run id), kept with the tasks it creates; nil: none.
	SenderName func(runID string) string
	// Notify posts text as a new message in a conversation (a task
	// paused, an occurrence skipped). Nil: only logged.
	Notify func(chatKey, text string)
	// MinInterval is the shortest interval between runs (0 → 60 s);
	// MaxPerUser caps one person's tasks (0 → 20); MaxFailures is how many
	// failed runs in a row pause a task (0 → 3).
	MinInterval time.Duration
	MaxPerUser  int
	MaxFailures int
	// Timezone is a cron schedule's zone when none is given ("" → UTC).
	Timezone string
	Logger   *slog.Logger
	Now      func() time.Time // nil: time.Now
}

// Scheduler keeps the tasks and starts their runs when they are due.
type Scheduler struct {
	opts Options
	log  *slog.Logger

	// wmu serializes every change to the tasks, from deciding it to its
	// commit (a local write, never network I/O), so writes made from the
	// in-memory copy never undo one another. It is taken before mu.
	wmu sync.Mutex

	mu      sync.Mutex // guards what follows; never held across I/O
	convs   map[string][]*Task
	index   []string
	ended   []ending // runs that ended, for the loop to record
	wake    chan struct{}
	started time.Time // when Start was called: what fell due before was missed
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// ending is a scheduled run's outcome, as the router reported it.
type ending struct {
	task, run, status, errText string
}

// New loads the stored tasks. An occurrence whose run was submitted before
// a restart is not submitted again: the runner resumes or reports it.
func New(opts Options) (*Scheduler, error) {
	if opts.Store == nil || opts.Submit == nil {
		return nil, errors.New("scheduler: a store and a submit func are required")
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = time.Minute
	}
	if opts.MaxPerUser <= 0 {
		opts.MaxPerUser = 20
	}
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	convs, index, err := load(opts.Store)
	if err != nil {
		return nil, err
	}
	for _, tasks := range convs {
		for _, t := range tasks {
			// Its run ended with the previous process, or the runner
			// resumes it; either way a new occurrence may be claimed.
			t.RunID = ""
		}
	}
	return &Scheduler{opts: opts, log: opts.Logger, convs: convs, index: index, wake: make(chan struct{}, 1)}, nil
}

// Start runs the timer loop until Close (or ctx ends).
func (s *Scheduler) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel, s.started = cancel, s.opts.Now()
	s.mu.Unlock()
	s.done.Go(func() { s.loop(ctx) })
}

func (s *Scheduler) startedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Close stops the loop and waits for it. Runs already submitted are the
// runner's.
func (s *Scheduler) Close() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.done.Wait()
}

// maxWait bounds one sleep of the loop, so a change of the wall clock is
// noticed within it.
const maxWait = time.Minute

func (s *Scheduler) loop(ctx context.Context) {
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	for {
		s.record()
		next := s.fireDue(ctx)
		wait := maxWait
		if !next.IsZero() {
			wait = min(max(next.Sub(s.opts.Now()), 0), maxWait)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// poke wakes the loop: a task was added or a run ended.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// fireDue submits every due task and returns when the next one is due
// (zero: none is).
func (s *Scheduler) fireDue(ctx context.Context) time.Time {
	now := s.opts.Now()
	s.mu.Lock()
	var due []string
	for _, tasks := range s.convs {
		for _, t := range tasks {
			if !t.Paused && !t.NextRun.IsZero() && !t.NextRun.After(now) {
				due = append(due, t.ID)
			}
		}
	}
	s.mu.Unlock()
	for _, id := range due {
		if ctx.Err() != nil {
			return time.Time{}
		}
		if chatKey, notice := s.fire(id, now); notice != "" {
			s.notify(chatKey, notice)
		}
	}
	return s.nextDue()
}

func (s *Scheduler) nextDue() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, tasks := range s.convs {
		for _, t := range tasks {
			if !t.Paused && !t.NextRun.IsZero() && (next.IsZero() || t.NextRun.Before(next)) {
				next = t.NextRun
			}
		}
	}
	return next
}

// find returns the task id (a copy) and its conversation's key. Callers
// hold s.mu.
func (s *Scheduler) findLocked(id string) (*Task, bool) {
	for _, tasks := range s.convs {
		for _, t := range tasks {
			if t.ID == id {
				c := *t
				return &c, true
			}
		}
	}
	return nil, false
}

// replaced returns the conversation's tasks with t in place of the task of
// its id (nil t with id: without it). Callers hold s.mu.
func (s *Scheduler) replacedLocked(chatKey, id string, t *Task) []*Task {
	var out []*Task
	found := false
	for _, old := range s.convs[chatKey] {
		if old.ID != id {
			out = append(out, old)
			continue
		}
		found = true
		if t != nil {
			out = append(out, t)
		}
	}
	if !found && t != nil {
		out = append(out, t)
	}
	return out
}

// write stores the conversation's tasks as given (with their index) and,
// once committed, makes them the in-memory copy. Callers hold s.wmu.
func (s *Scheduler) write(chatKey string, tasks []*Task) error {
	s.mu.Lock()
	index := s.index
	s.mu.Unlock()
	var newIndex []string
	err := s.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		newIndex, err = putConv(tx, chatKey, tasks, index)
		return err
	})
	if err == nil {
		s.apply(chatKey, tasks, newIndex)
	}
	return err
}

func (s *Scheduler) apply(chatKey string, tasks []*Task, index []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(tasks) == 0 {
		delete(s.convs, chatKey)
	} else {
		s.convs[chatKey] = tasks
	}
	s.index = index
}

// update changes one task (by a copy) and stores it. Callers hold s.wmu.
func (s *Scheduler) update(id string, change func(t *Task)) (*Task, error) {
	s.mu.Lock()
	t, ok := s.findLocked(id)
	if !ok {
		s.mu.Unlock()
		return nil, nil
	}
	change(t)
	tasks := s.replacedLocked(t.ChatKey, id, t)
	s.mu.Unlock()
	return t, s.write(t.ChatKey, tasks)
}

// idEncoding spells task ids in lowercase letters and digits: short enough
// to type after /unschedule.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newID() string {
	var b [5]byte
	rand.Read(b[:])
	return "sch_" + idEncoding.EncodeToString(b[:])
}

// Tasks returns a conversation's tasks (copies), soonest first; paused
// ones last.
func (s *Scheduler) Tasks(chatKey string) []Task {
	return s.tasks(func(key string) bool { return key == chatKey })
}

// chatTasks is what the chat commands see: a conversation's tasks and,
// when it is a whole chat (no topic), those of its threads and topics too
// (Slack's /deerflow command comes from the channel, never a thread).
func (s *Scheduler) chatTasks(chatKey string) []Task {
	return s.tasks(func(key string) bool { return inChat(chatKey, key) })
}

func inChat(chatKey, key string) bool {
	if key == chatKey {
		return true
	}
	_, _, topic := bus.SplitChatKey(chatKey)
	return topic == "" && strings.HasPrefix(key, chatKey+":")
}

func (s *Scheduler) tasks(match func(key string) bool) []Task {
	s.mu.Lock()
	var out []Task
	for key, tasks := range s.convs {
		if !match(key) {
			continue
		}
		for _, t := range tasks {
			out = append(out, *t)
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Task) int {
		switch {
		case a.NextRun.IsZero() != b.NextRun.IsZero():
			if a.NextRun.IsZero() {
				return 1
			}
			return -1
		}
		if c := a.NextRun.Compare(b.NextRun); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// userTasks counts a person's tasks across conversations. Callers hold
// s.mu.
func (s *Scheduler) userTasksLocked(user string) int {
	n := 0
	for _, tasks := range s.convs {
		for _, t := range tasks {
			if t.User == user {
				n++
			}
		}
	}
	return n
}

// chatKeyOK reports whether chatKey names a conversation.
func chatKeyOK(chatKey string) bool {
	channel, chat, _ := strings.Cut(chatKey, ":")
	return channel != "" && chat != ""
}
