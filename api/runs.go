package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
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

// createRunReq is the body of POST /runs. Input is the person's message:
// a string, or {"messages":[{"role":"user","content":"…"}]} (the last user
// message counts), or {"content"|"message"|"text":"…"}; a top-level
// "message" string is taken when there is no input.
type createRunReq struct {
	Input             json.RawMessage `json:"input"`
	Message           string          `json:"message"` // accepted instead of input
	MultitaskStrategy string          `json:"multitask_strategy"`
	OnDisconnect      string          `json:"on_disconnect"` // "continue" (default) or "cancel"
	Model             string          `json:"model"`
	// UserID names the person the run is for (their long-term memory);
	// empty: "api", one person for every client.
	UserID string `json:"user_id"`
}

// inputText reads the run's message from raw.
func inputText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("input is required: the message to run, as a string or {\"messages\":[{\"role\":\"user\",\"content\":\"…\"}]}")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var obj struct {
		Content  *string `json:"content"`
		Message  *string `json:"message"`
		Text     *string `json:"text"`
		Messages []struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", errors.New("input must be a string or an object with messages")
	}
	for _, v := range []*string{obj.Content, obj.Message, obj.Text} {
		if v != nil {
			return *v, nil
		}
	}
	for i := len(obj.Messages) - 1; i >= 0; i-- {
		m := obj.Messages[i]
		if m.Role != "user" && m.Role != "human" && m.Type != "human" {
			continue
		}
		if json.Unmarshal(m.Content, &s) == nil {
			return s, nil
		}
		// Content parts: [{"type":"text","text":"…"}].
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			var sb strings.Builder
			for _, p := range parts {
				if p.Type == "text" {
					sb.WriteString(p.Text)
				}
			}
			return sb.String(), nil
		}
		return "", errors.New("a message's content must be a string or a list of text parts")
	}
	return "", errors.New("input has no user message")
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
	if len(req.Input) == 0 && req.Message != "" {
		req.Input, _ = json.Marshal(req.Message) // {"message":"…"} without input
	}
	text, err := inputText(req.Input)
	if err == nil && strings.TrimSpace(text) == "" {
		err = errors.New("the input message is empty")
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "bad_input", err.Error()+".")
		return
	}
	if n := len([]rune(text)); n > s.o.MaxInput {
		fail(w, http.StatusRequestEntityTooLarge, "input_too_large", fmt.Sprintf("The input message has %d characters; the limit is %d.", n, s.o.MaxInput))
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
	user := "api"
	if u := strings.TrimSpace(req.UserID); u != "" {
		if len(u) > 128 || strings.ContainsFunc(u, func(c rune) bool { return c < ' ' || c == 0x7f }) {
			fail(w, http.StatusBadRequest, "bad_user_id", "user_id must be at most 128 printable characters.")
			return
		}
		user = "api:" + u
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

// queued is a waiting run as the store keeps it.
type queued struct {
	ID                 string    `json:"id"`
	ThreadID           string    `json:"thread_id"`
	Input              string    `json:"input"`
	Model              string    `json:"model,omitempty"`
	User               string    `json:"user"`
	CancelOnDisconnect bool      `json:"cancel_on_disconnect,omitempty"`
	Created            time.Time `json:"created"`
}

// persist stores r in the run queue.
func (s *Server) persist(r *run) error {
	data, err := json.Marshal(queued{ID: r.id, ThreadID: r.threadID, Input: r.input, Model: r.model,
		User: r.user, CancelOnDisconnect: r.cancelOnDisconnect, Created: r.created})
	if err != nil {
		return err
	}
	return s.o.Store.Batch(func(tx *store.Tx) error {
		seq, err := tx.PutQueuedRun(data)
		r.seq = seq
		return err
	})
}

// unpersist takes r out of the run queue (cancelled before it started).
func (s *Server) unpersist(r *run) {
	if r.seq == 0 {
		return
	}
	if err := s.o.Store.Batch(func(tx *store.Tx) error { return tx.DeleteQueuedRun(r.seq) }); err != nil {
		s.log.Error("api: removing a cancelled run from the queue", "run", r.id, "err", err)
	}
}

// Resume queues the runs a previous process accepted but never started,
// in the order they came, with their ids: their clients find them again.
// Call it once, when the API starts serving.
func (s *Server) Resume() error {
	var runs []*run
	err := s.o.Store.View(func(tx *store.Tx) error {
		return tx.QueuedRuns(func(seq uint64, data []byte) error {
			var q queued
			if err := json.Unmarshal(data, &q); err != nil || q.ID == "" || q.ThreadID == "" {
				s.log.Error("api: a stored run is unreadable; dropping it", "seq", seq, "err", err)
				runs = append(runs, &run{seq: seq}) // removed below
				return nil
			}
			runs = append(runs, &run{
				s: s, seq: seq, id: q.ID, threadID: q.ThreadID, input: q.Input, model: q.Model, user: q.User,
				cancelOnDisconnect: q.CancelOnDisconnect, status: statusPending, created: q.Created, wake: make(chan struct{}),
			})
			return nil
		})
	})
	if err != nil {
		return err
	}
	n := 0
	for _, r := range runs {
		if r.id == "" || !s.apiThread(r.threadID) {
			s.unpersist(r) // unreadable, or its thread was deleted
			continue
		}
		s.mu.Lock()
		if !s.closed {
			s.enqueueLocked(s.laneLocked(r.threadID), r)
			n++
		}
		s.mu.Unlock()
	}
	if n > 0 {
		s.log.Info("api: resuming the runs accepted before the restart", "runs", n)
	}
	return nil
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

// execute runs r through the agent and turns its events into the run's
// stream. A run cancelled for a rollback is undone before the next run
// starts. It returns the status to finish r with ("" when r had already
// finished: cancelled while it waited).
func (s *Server) execute(r *run) (status, errText string) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var snap *store.ThreadSnapshot
	err := s.o.Store.View(func(tx *store.Tx) error {
		var err error
		snap, err = tx.SnapshotThread(r.threadID)
		return err
	})
	r.mu.Lock()
	if r.done { // cancelled while it waited
		r.mu.Unlock()
		return "", ""
	}
	r.cancel, r.snap = cancel, snap
	r.status, r.started = statusRunning, s.o.Now()
	if r.stop != nil {
		cancel(r.stop)
	}
	r.mu.Unlock()
	if err != nil {
		s.unpersist(r)
		s.log.Error("api: reading the thread before a run", "thread", r.threadID, "err", err)
		r.add("error", apiError{Code: "store_error", Message: "The thread could not be read; try again."})
		return statusError, err.Error()
	}
	r.add("metadata", map[string]any{"run_id": r.id, "thread_id": r.threadID})

	status, errText = statusError, "the run ended without an answer"
	for ev := range s.o.Agent.Run(ctx, agent.Input{
		RunID: r.id, ThreadID: r.threadID, ChatKey: chatKey(r.threadID), UserID: r.user,
		Text: r.input, Model: r.model, OnBegin: r.onBegin(),
	}) {
		switch ev.Kind {
		case agent.EventStarted:
			r.add("run_started", map[string]any{"run_id": r.id, "model": ev.Model})
		case agent.EventTextDelta:
			r.add("message_delta", map[string]string{"content": ev.Text})
		case agent.EventReasoningDelta:
			r.add("reasoning_delta", map[string]string{"content": ev.Text})
		case agent.EventTextReset:
			r.add("message_reset", map[string]string{"reason": "the model call is being retried; discard the text since the last tool call"})
		case agent.EventToolStart:
			r.add("tool_start", toolJSON(ev.Tool, false))
		case agent.EventToolEnd:
			r.add("tool_end", toolJSON(ev.Tool, true))
		case agent.EventTool:
			s.custom(r, ev.Custom)
		case agent.EventAnswer:
			r.add("message", map[string]any{"role": "assistant", "content": ev.Text,
				"usage": map[string]int{"prompt_tokens": ev.Usage.PromptTokens, "completion_tokens": ev.Usage.CompletionTokens}})
			status, errText = statusSuccess, ""
		case agent.EventError:
			code := "run_failed"
			if errors.Is(ev.Err, agent.ErrThreadBusy) {
				code = "thread_busy"
			}
			r.add("error", apiError{Code: code, Message: ev.Text})
			status, errText = statusError, ev.Text
		case agent.EventStopped:
			status, errText = statusInterrupted, stopText(ev.Err, context.Cause(ctx))
		}
	}
	if !r.began.Load() {
		s.unpersist(r) // it never started (the agent refused it): not again after a restart
	}
	r.mu.Lock()
	rollback := r.rollback
	r.mu.Unlock()
	if rollback {
		if err := s.restore(r); err != nil {
			s.log.Error("api: rolling back a run", "thread", r.threadID, "run", r.id, "err", err)
			r.mu.Lock()
			r.rollback = false // it was not rolled back
			r.mu.Unlock()
			r.add("error", apiError{Code: "rollback_failed", Message: "The run was stopped but the thread could not be restored: " + err.Error()})
		} else {
			r.add("rolled_back", map[string]string{"run_id": r.id})
			status, errText = statusInterrupted, "rolled back by a later run (multitask_strategy rollback)"
		}
	}
	return status, errText
}

// onBegin takes r out of the run queue in the transaction that starts it:
// after a crash it either runs again or is known to have started.
func (r *run) onBegin() func(*store.Tx) error {
	if r.seq == 0 {
		return nil
	}
	return func(tx *store.Tx) error {
		r.began.Store(true)
		return tx.DeleteQueuedRun(r.seq)
	}
}

// restore puts r's thread back as it was before r.
func (s *Server) restore(r *run) error {
	if r.snap == nil {
		return errors.New("no snapshot was taken")
	}
	err := s.o.Store.Update(func(tx *store.Tx) error { return tx.RestoreThread(r.snap) })
	s.o.Agent.ForgetHistory(r.threadID)
	return err
}

func stopText(evErr, cause error) string {
	switch {
	case errors.Is(cause, errCancelled):
		return "cancelled"
	case errors.Is(evErr, agent.ErrStopped), errors.Is(cause, agent.ErrStopped):
		return "interrupted by a later run"
	}
	return "interrupted: deerflow is shutting down"
}

func toolJSON(t *agent.ToolActivity, end bool) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	m := map[string]any{"call_id": t.CallID, "name": t.Name, "summary": t.Summary}
	if end {
		m["result"], m["is_error"], m["duration_ms"] = t.Result, t.IsError, t.Duration.Milliseconds()
	}
	return m
}

// custom passes on what a tool reported: files and subagent tasks.
func (s *Server) custom(r *run, ev *tools.Event) {
	if ev == nil {
		return
	}
	switch ev.Kind {
	case tools.EventFiles:
		files, _ := ev.Data.([]tools.File)
		var out []map[string]any
		for _, f := range files {
			m := map[string]any{"name": f.Name, "path": f.Path, "size": f.Size}
			// The files route finds a file by its name in the outputs:
			// a url only for a file it serves (not one presented from a
			// folder inside them, which it would take for another).
			if plainName(f.Name) && s.o.Files != nil {
				if got, err := s.o.Files(r.threadID, f.Name); err == nil && got.Path == f.Path {
					m["url"] = "/api/threads/" + url.PathEscape(r.threadID) + "/files/" + url.PathEscape(f.Name)
				}
			}
			out = append(out, m)
		}
		if len(out) > 0 {
			r.add("files", map[string]any{"files": out})
		}
	case tools.EventTaskStarted, tools.EventTaskProgress, tools.EventTaskDone:
		te, ok := ev.Data.(tools.TaskEvent)
		if !ok {
			return
		}
		m := map[string]any{"task_id": te.ID, "description": te.Description, "subagent_type": te.Type, "status": te.Status}
		switch ev.Kind {
		case tools.EventTaskStarted:
			if te.Status == tools.TaskPending {
				m["ahead"] = te.Ahead
			}
		case tools.EventTaskProgress:
			m["line"] = te.Line
		case tools.EventTaskDone:
			m["result"], m["duration_ms"] = te.Result, te.Duration.Milliseconds()
		}
		r.add(ev.Kind, m)
	}
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
