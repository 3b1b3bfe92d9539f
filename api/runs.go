package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// The API is a front end of the runner: a run is submitted with the
// thread's conversation ("api:<thread>") and the client's multitask
// strategy, and its events are the runner's journal, as SSE.

// runData is what the API keeps with a run in the runner's queue.
type runData struct {
	// CancelOnDisconnect: the run is cancelled when its last stream
	// client goes away before it ends.
	CancelOnDisconnect bool `json:"cancel_on_disconnect,omitempty"`
	// Agent names the agent that answers ("" = the built-in one).
	Agent string `json:"agent,omitempty"`
}

// handler is the API's part in the runner: its runs go straight to the
// agent, can be rolled back by a later run, and stay readable for Keep.
func (s *Server) handler() runner.Handler {
	return runner.Handler{
		Engine: runner.EngineFunc(func(ctx context.Context, run *runner.Run) iter.Seq[event.Event] {
			in := run.Input()
			var d runData
			json.Unmarshal(run.Req.Data, &d)
			if d.Agent != "" && s.o.Persona != nil {
				in.Persona, _ = s.o.Persona(d.Agent) // gone since: the built-in agent answers
			}
			return s.o.Agent.Run(ctx, in)
		}),
		Undoable:  true,
		Keep:      s.o.Keep,
		Resumable: func(req *runner.Request) bool { return s.apiThread(req.ThreadID) },
	}
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

func infoJSON(in runner.Info) runJSON {
	return runJSON{RunID: in.ID, ThreadID: in.ThreadID, Status: in.Status, Error: in.Error,
		Created: in.Created, Started: in.Started, Ended: in.Ended, RolledBack: in.RolledBack}
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
	q, ok := s.request(w, t.ID, &req)
	if !ok {
		return
	}
	tk, err := s.o.Runner.Submit(q)
	if !s.submitted(w, t.ID, err) {
		return
	}
	reply(w, http.StatusAccepted, struct {
		runJSON
		Strategy string `json:"multitask_strategy"`
	}{infoJSON(tk.Run.Info()), string(q.Strategy)})
}

// request checks a run's body and makes it the runner's request; false
// when the client was told what is wrong.
func (s *Server) request(w http.ResponseWriter, threadID string, req *createRunReq) (runner.Request, bool) {
	text, ok := s.input(w, req)
	if !ok {
		return runner.Request{}, false
	}
	strategy, ok := runner.ParseStrategy(strings.ToLower(strings.TrimSpace(req.MultitaskStrategy)))
	if !ok {
		fail(w, http.StatusBadRequest, "bad_strategy", fmt.Sprintf("multitask_strategy %q is not one of reject, enqueue, interrupt, rollback.", req.MultitaskStrategy))
		return runner.Request{}, false
	}
	onDisconnect := strings.ToLower(strings.TrimSpace(req.OnDisconnect))
	if onDisconnect != "" && onDisconnect != "continue" && onDisconnect != "cancel" {
		fail(w, http.StatusBadRequest, "bad_on_disconnect", fmt.Sprintf("on_disconnect %q is not continue or cancel.", req.OnDisconnect))
		return runner.Request{}, false
	}
	if req.Model != "" {
		if _, ok := s.o.Agent.Model(req.Model); !ok {
			fail(w, http.StatusBadRequest, "unknown_model", fmt.Sprintf("There is no model called %q.", req.Model))
			return runner.Request{}, false
		}
	}
	user, ok := runUser(threadID, req.UserID)
	if !ok {
		fail(w, http.StatusBadRequest, "bad_user_id", "user_id must be at most 128 printable characters.")
		return runner.Request{}, false
	}
	agentName, ok := s.agentOf(w, req)
	if !ok {
		return runner.Request{}, false
	}
	data, _ := json.Marshal(runData{CancelOnDisconnect: onDisconnect == "cancel", Agent: agentName})
	return runner.Request{
		ThreadID: threadID, Conv: chatKey(threadID), Origin: runner.OriginAPI, User: user,
		Text: text, Model: req.Model, Strategy: strategy, Data: data,
	}, true
}

// submitted answers a Submit that failed; true when it did not.
func (s *Server) submitted(w http.ResponseWriter, threadID string, err error) bool {
	var full *runner.FullError
	switch {
	case err == nil:
		return true
	case errors.Is(err, runner.ErrClosed):
		fail(w, http.StatusServiceUnavailable, "shutting_down", "deerflow is shutting down; try again once it is back.")
	case errors.Is(err, runner.ErrBusy):
		fail(w, http.StatusConflict, "thread_busy", "The thread already has a run active or waiting (multitask_strategy reject).")
	case errors.As(err, &full):
		w.Header().Set("Retry-After", strconv.Itoa(int(full.RetryAfter().Seconds())))
		fail(w, http.StatusTooManyRequests, "queue_full", fmt.Sprintf("%d runs already wait in this thread; try again later or cancel one.", full.Waiting))
	default:
		s.log.Error("api: storing a run", "thread", threadID, "err", err)
		fail(w, http.StatusInternalServerError, "store_error", "The run could not be stored; try again.")
	}
	return false
}

// lookup returns the kept run id of thread threadID.
func (s *Server) lookup(threadID, id string) (*runner.Run, bool) {
	run, ok := s.o.Runner.Lookup(id)
	if !ok || run.Req.ThreadID != threadID || run.Req.Origin != runner.OriginAPI {
		return nil, false
	}
	return run, true
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	id := r.PathValue("run")
	if kept, ok := s.lookup(t.ID, id); ok {
		reply(w, http.StatusOK, infoJSON(kept.Info()))
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
		return runner.StatusSuccess
	case store.RunError:
		return runner.StatusError
	}
	return runner.StatusInterrupted // running but not kept by this process: a restart cut it
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
	s.o.Runner.Cancel(run.ID(), nil)
	reply(w, http.StatusAccepted, infoJSON(run.Info()))
}

// cancelOnDisconnect reports whether run was started with on_disconnect
// "cancel".
func cancelOnDisconnect(run *runner.Run) bool {
	var d runData
	json.Unmarshal(run.Req.Data, &d)
	return d.CancelOnDisconnect
}
