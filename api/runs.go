package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/store"
)

// Run statuses.
const (
	statusPending     = "pending"
	statusRunning     = "running"
	statusSuccess     = "success"
	statusError       = "error"
	statusInterrupted = "interrupted"
)

// Multitask strategies: what a new run does when the thread is busy.
const (
	strategyReject    = "reject"    // refuse it (409)
	strategyEnqueue   = "enqueue"   // wait its turn (the default)
	strategyInterrupt = "interrupt" // cancel the active run, keeping what it produced
	strategyRollback  = "rollback"  // cancel the active run and undo it
)

// run is one run, while the Server keeps it.
type run struct {
	s        *Server
	id       string
	threadID string
	input    string
	model    string
	user     string      // channel:user, as the agent sees it
	seq      uint64      // its record in the store's run queue until it starts
	began    atomic.Bool // the agent's begin commit took it off the queue
	// cancelOnDisconnect: the run is cancelled when its last stream
	// client goes away before it ends.
	cancelOnDisconnect bool

	mu       sync.Mutex
	status   string
	errText  string
	created  time.Time
	started  time.Time
	ended    time.Time
	rollback bool                  // undo the run once it has stopped
	snap     *store.ThreadSnapshot // the thread before the run
	events   []event               // the latest events, ids first..next-1
	first    int                   // id of events[0]
	next     int                   // id of the next event
	wake     chan struct{}         // closed and replaced when an event is added or the run ends
	done     bool
	clients  int
	cancel   context.CancelCauseFunc // set while it runs
	stop     error                   // a cancellation asked for before cancel was set
}

// event is one Server-Sent Event.
type event struct {
	id   int
	kind string
	data []byte // JSON
}

// errCancelled is the cause of a run cancelled through the API (or its
// client's disconnect).
var errCancelled = errors.New("api: run cancelled")

// add appends an event, dropping the oldest beyond the buffer, and wakes
// the streams.
func (r *run) add(kind string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte(`{}`)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(kind, data)
}

func (r *run) addLocked(kind string, data []byte) {
	if r.next == 0 {
		r.next, r.first = 1, 1 // event ids start at 1
	}
	r.events = append(r.events, event{id: r.next, kind: kind, data: data})
	r.next++
	if over := len(r.events) - r.s.o.Buffer; over > 0 {
		r.events = append(r.events[:0:0], r.events[over:]...)
		r.first += over
	}
	close(r.wake)
	r.wake = make(chan struct{})
}

// finish ends the run with status (once), adding the end event.
func (r *run) finish(status, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.status, r.errText, r.ended, r.done = status, errText, r.s.o.Now(), true
	data, _ := json.Marshal(map[string]any{"run_id": r.id, "status": status})
	r.addLocked("end", data)
}

// runJSON is a run's status as the API shows it.
type runJSON struct {
	RunID    string    `json:"run_id"`
	ThreadID string    `json:"thread_id"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Created  time.Time `json:"created_at,omitzero"`
	Started  time.Time `json:"started_at,omitzero"`
	Ended    time.Time `json:"ended_at,omitzero"`
	// RolledBack: the run was undone (multitask_strategy rollback).
	RolledBack bool `json:"rolled_back,omitempty"`
}

func (r *run) json() runJSON {
	r.mu.Lock()
	defer r.mu.Unlock()
	return runJSON{RunID: r.id, ThreadID: r.threadID, Status: r.status, Error: r.errText,
		Created: r.created, Started: r.started, Ended: r.ended, RolledBack: r.rollback && r.done}
}

func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var req createRunReq
	if !decode(w, r, &req) {
		return
	}
	text, ok := s.input(w, &req)
	if !ok {
		return
	}
	strategy := strings.ToLower(strings.TrimSpace(req.MultitaskStrategy))
	switch strategy {
	case "":
		strategy = strategyEnqueue
	case strategyReject, strategyEnqueue, strategyInterrupt, strategyRollback:
	default:
		fail(w, http.StatusBadRequest, "bad_strategy", fmt.Sprintf("multitask_strategy %q is not one of reject, enqueue, interrupt, rollback.", req.MultitaskStrategy))
		return
	}
	onDisconnect := strings.ToLower(strings.TrimSpace(req.OnDisconnect))
	if onDisconnect != "" && onDisconnect != "continue" && onDisconnect != "cancel" {
		fail(w, http.StatusBadRequest, "bad_on_disconnect", fmt.Sprintf("on_disconnect %q is not continue or cancel.", req.OnDisconnect))
		return
	}
	if req.Model != "" {
		if _, ok := s.o.Agent.Model(req.Model); !ok {
			fail(w, http.StatusBadRequest, "unknown_model", fmt.Sprintf("There is no model called %q.", req.Model))
			return
		}
	}
	user, ok := runUser(t.ID, req.UserID)
	if !ok {
		fail(w, http.StatusBadRequest, "bad_user_id", "user_id must be at most 128 printable characters.")
		return
	}
	nr := &run{
		s: s, id: agent.NewID("run_"), threadID: t.ID, input: text, model: req.Model, user: user,
		cancelOnDisconnect: onDisconnect == "cancel",
		status:             statusPending, created: s.o.Now(), wake: make(chan struct{}),
	}

	switch err := s.submit(nr, strategy); {
	case errors.Is(err, errClosed):
		fail(w, http.StatusServiceUnavailable, "shutting_down", "deerflow is shutting down; try again once it is back.")
		return
	case errors.Is(err, errBusy):
		fail(w, http.StatusConflict, "thread_busy", "The thread already has a run active or waiting (multitask_strategy reject).")
		return
	case err != nil:
		s.log.Error("api: storing a run", "thread", t.ID, "err", err)
		fail(w, http.StatusInternalServerError, "store_error", "The run could not be stored; try again.")
		return
	}
	reply(w, http.StatusAccepted, struct {
		runJSON
		Strategy string `json:"multitask_strategy"`
	}{nr.json(), strategy})
}

var (
	errClosed = errors.New("api: shutting down")
	errBusy   = errors.New("api: thread busy")
)

// submit stores nr, so that it runs after a restart if it has not started
// by then, and queues it on its thread as strategy says.
func (s *Server) submit(nr *run, strategy string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	l := s.laneLocked(nr.threadID)
	s.mu.Unlock()
	// One submission per thread at a time: "reject" sees the thread as
	// the store will have it.
	l.post.Lock()
	defer l.post.Unlock()
	s.mu.Lock()
	busy := l.active != nil || len(l.queue) > 0
	s.mu.Unlock()
	if strategy == strategyReject && busy {
		return errBusy
	}
	if err := s.persist(nr); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.unpersist(nr)
		return errClosed
	}
	if prev := l.active; prev != nil && (strategy == strategyInterrupt || strategy == strategyRollback) {
		prev.mu.Lock()
		prev.rollback = prev.rollback || strategy == strategyRollback
		prev.mu.Unlock()
		prev.interrupt(agent.ErrStopped)
	}
	s.enqueueLocked(l, nr)
	s.mu.Unlock()
	return nil
}

// laneLocked returns the thread's lane, creating it. Callers hold s.mu.
func (s *Server) laneLocked(threadID string) *lane {
	l := s.lanes[threadID]
	if l == nil {
		l = &lane{}
		s.lanes[threadID] = l
	}
	return l
}

// enqueueLocked adds r to its lane and starts the lane's worker if it
// has none. Callers hold s.mu.
func (s *Server) enqueueLocked(l *lane, r *run) {
	s.runs[r.id] = r
	l.queue = append(l.queue, r)
	if l.active == nil {
		s.workers.Add(1)
		l.active = l.queue[0]
		l.queue = l.queue[1:]
		go s.work(r.threadID, l)
	}
}

// work runs the thread's runs, in order, until none waits. A run's end
// event is added once the lane has moved on from it, so that a client
// that saw it finds the thread free (or on to its next run).
func (s *Server) work(threadID string, l *lane) {
	defer s.workers.Done()
	for {
		s.mu.Lock()
		r := l.active
		s.mu.Unlock()
		status, errText := s.execute(r)
		s.mu.Lock()
		last := len(l.queue) == 0 || s.closed
		if last {
			l.active = nil
		} else {
			l.active = l.queue[0]
			l.queue = l.queue[1:]
		}
		s.mu.Unlock()
		if status != "" {
			r.finish(status, errText)
		}
		s.expire(r)
		if last {
			return
		}
	}
}

// expire forgets a finished run's events after Keep.
func (s *Server) expire(r *run) {
	time.AfterFunc(s.o.Keep, func() {
		s.mu.Lock()
		if s.runs[r.id] == r {
			delete(s.runs, r.id)
		}
		s.mu.Unlock()
	})
}

// lookup returns the kept run id of thread threadID.
func (s *Server) lookup(threadID, id string) (*run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok || r.threadID != threadID {
		return nil, false
	}
	return r, true
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	id := r.PathValue("run")
	if kept, ok := s.lookup(t.ID, id); ok {
		reply(w, http.StatusOK, kept.json())
		return
	}
	// A run no longer kept (or from before a restart): its record.
	var rec *store.Run
	err := s.o.Store.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Run(id)
		return err
	})
	if err != nil || rec.ThreadID != t.ID {
		fail(w, http.StatusNotFound, "run_not_found", fmt.Sprintf("Thread %s has no run %q.", t.ID, id))
		return
	}
	out := runJSON{RunID: rec.ID, ThreadID: rec.ThreadID, Status: storedStatus(rec), Error: rec.Error, Started: rec.Started, Ended: rec.Ended}
	reply(w, http.StatusOK, out)
}

// storedStatus maps a run record's status to the API's.
func storedStatus(rec *store.Run) string {
	switch rec.Status {
	case store.RunDone:
		return statusSuccess
	case store.RunError:
		return statusError
	case store.RunRunning:
		return statusInterrupted // not kept by this process: a restart cut it
	}
	return statusInterrupted
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	run, ok := s.lookup(t.ID, r.PathValue("run"))
	if !ok {
		fail(w, http.StatusNotFound, "run_not_found", fmt.Sprintf("Thread %s has no active or waiting run %q.", t.ID, r.PathValue("run")))
		return
	}
	s.cancel(run)
	reply(w, http.StatusAccepted, run.json())
}

// cancel stops a running run, or takes a waiting one out of its queue.
func (s *Server) cancel(r *run) {
	s.mu.Lock()
	if l := s.lanes[r.threadID]; l != nil {
		for i, q := range l.queue {
			if q == r {
				l.queue = append(l.queue[:i:i], l.queue[i+1:]...)
				s.mu.Unlock()
				s.unpersist(r)
				r.finish(statusInterrupted, "cancelled before it started")
				s.expire(r)
				return
			}
		}
	}
	s.mu.Unlock()
	r.interrupt(errCancelled)
}

// interrupt cancels the run with cause, now if it runs, else as soon as it
// starts.
func (r *run) interrupt(cause error) {
	r.mu.Lock()
	cancel := r.cancel
	if cancel == nil && r.stop == nil {
		r.stop = cause
	}
	r.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}
