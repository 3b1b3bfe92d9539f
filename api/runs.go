package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api/lgwire"
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
// agent, can be rolled back by a later run (and are then deleted, as
// LangGraph deletes a rolled-back run), and stay readable for Keep.
func (s *Server) handler() runner.Handler {
	return runner.Handler{
		Engine: runner.EngineFunc(func(ctx context.Context, run *runner.Run) iter.Seq[event.Event] {
			in := run.Input()
			var d runData
			json.Unmarshal(run.Req.Data, &d)
			if d.Agent != "" && s.o.Persona != nil {
				in.Persona, _ = s.o.Persona(d.Agent) // gone since: the built-in agent answers
			}
			if s.o.Prepare != nil {
				s.o.Prepare(&in)
			}
			return s.o.Agent.Run(ctx, in)
		}),
		Undoable: true,
		Observe: func(run *runner.Run, ev event.Event) {
			if rb, ok := ev.(event.RolledBack); ok && rb.Err == nil {
				if err := s.dropRun(run.Req.ThreadID, run.ID()); err != nil {
					s.log.Error("api: deleting a rolled-back run", "run", run.ID(), "err", err)
				}
			}
		},
		Keep:      s.o.Keep,
		Resumable: func(req *runner.Request) bool { return s.apiThread(req.ThreadID) },
	}
}

// submitted answers a Submit that failed; true when it did not.
func (s *Server) submitted(w http.ResponseWriter, threadID string, err error) bool {
	var full *runner.FullError
	switch {
	case err == nil:
		return true
	case errors.Is(err, runner.ErrClosed):
		fail(w, http.StatusServiceUnavailable, "deerflow is shutting down; try again once it is back.")
	case errors.Is(err, runner.ErrBusy):
		fail(w, http.StatusConflict, "The thread already has a run active or waiting (multitask_strategy reject).")
	case errors.As(err, &full):
		w.Header().Set("Retry-After", strconv.Itoa(int(full.RetryAfter().Seconds())))
		fail(w, http.StatusTooManyRequests, fmt.Sprintf("%d runs already wait in this thread; try again later or cancel one.", full.Waiting))
	default:
		s.log.Error("api: storing a run", "thread", threadID, "err", err)
		fail(w, http.StatusInternalServerError, "The run could not be stored; try again.")
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

// cancelOnDisconnect reports whether run was started with on_disconnect
// "cancel".
func cancelOnDisconnect(run *runner.Run) bool {
	var d runData
	json.Unmarshal(run.Req.Data, &d)
	return d.CancelOnDisconnect
}

// runRoutes are LangGraph's run routes, on a thread and thread-less.
func (s *Server) runRoutes() {
	s.mux.HandleFunc("POST /api/threads/{id}/runs", s.createRun)
	s.mux.HandleFunc("POST /api/threads/{id}/runs/stream", s.streamRun)
	s.mux.HandleFunc("POST /api/threads/{id}/runs/wait", s.waitRun)
	s.mux.HandleFunc("POST /api/runs", s.createRun)
	s.mux.HandleFunc("POST /api/runs/stream", s.streamRun)
	s.mux.HandleFunc("POST /api/runs/wait", s.waitRun)
	s.mux.HandleFunc("GET /api/threads/{id}/runs", s.listRuns)
	s.mux.HandleFunc("GET /api/threads/{id}/runs/{run}", s.getRun)
	s.mux.HandleFunc("DELETE /api/threads/{id}/runs/{run}", s.deleteRun)
	s.mux.HandleFunc("POST /api/threads/{id}/runs/{run}/cancel", s.cancelRun)
	s.mux.HandleFunc("GET /api/threads/{id}/runs/{run}/join", s.joinRun)
	s.mux.HandleFunc("GET /api/threads/{id}/runs/{run}/stream", s.joinStream)
}

// start checks a run's body, finds (or makes) its thread and submits it,
// setting Content-Location to the run; false when the client was told
// what is wrong.
func (s *Server) start(w http.ResponseWriter, r *http.Request) (*runner.Run, runEntry, lgwire.Modes, bool) {
	var b lgwire.RunBody
	if !decode(w, r, &b) {
		return nil, runEntry{}, nil, false
	}
	modes, err := lgwire.ParseModes(b.StreamMode)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, err.Error()+".")
		return nil, runEntry{}, nil, false
	}
	q, ok := s.request(w, &b, modes)
	if !ok {
		return nil, runEntry{}, nil, false
	}
	t, ok := s.runThread(w, r.PathValue("id"), &b)
	if !ok {
		return nil, runEntry{}, nil, false
	}
	q.ThreadID, q.Conv = t.ID, chatKey(t.ID)
	q.User, _ = runUser(t.ID, b.UserID)
	if files := lgwire.InputFiles(b.Input); len(files) > 0 && s.o.UploadsNote != nil {
		if note := s.o.UploadsNote(t.ID, files); note != "" { // as the chat channels store it
			q.Text = note + "\n\n" + q.Text
		}
	}
	q.ID = agent.NewID("run_")
	q.Created = s.o.Now()
	e := runEntry{ID: q.ID, Assistant: b.AssistantID, Created: q.Created, Metadata: b.Metadata,
		Strategy: string(q.Strategy), Modes: modes.List(), Config: b.Config, Context: b.Context}
	if e.Assistant == "" {
		e.Assistant = lgwire.LeadAgent
	}
	q.Also = func(tx *store.Tx) error { return addRunEntry(tx, t.ID, e) }
	tk, err := s.o.Runner.Submit(q)
	if !s.submitted(w, t.ID, err) {
		return nil, runEntry{}, nil, false
	}
	w.Header().Set("Content-Location", runPath(t.ID, q.ID))
	return tk.Run, e, modes, true
}

// runPath is a run's path under the API's base.
func runPath(threadID, runID string) string {
	return "/threads/" + url.PathEscape(threadID) + "/runs/" + url.PathEscape(runID)
}

// runThread is the thread a run goes to: the one in the path (made when
// if_not_exists is create), or a new one for a thread-less run.
func (s *Server) runThread(w http.ResponseWriter, id string, b *lgwire.RunBody) (*store.Thread, bool) {
	create := id == "" || b.IfNotExists == "create"
	if b.IfNotExists != "" && b.IfNotExists != "create" && b.IfNotExists != "reject" {
		fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("if_not_exists %q is not create or reject.", b.IfNotExists))
		return nil, false
	}
	if !create || (id != "" && s.apiThread(id)) {
		return s.thread(w, id)
	}
	if id != "" && !lgwire.ValidThreadID(id) {
		fail(w, http.StatusUnprocessableEntity, "thread_id must be 1 to 128 letters, digits and - _ . : characters.")
		return nil, false
	}
	t, created, err := s.newThread(id, "", map[string]any{})
	switch {
	case err != nil:
		s.log.Error("api: creating a run's thread", "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be stored; try again.")
		return nil, false
	case !created && t == nil:
		fail(w, http.StatusConflict, fmt.Sprintf("Thread %q exists and is not an API thread.", id))
		return nil, false
	}
	return t, true
}

func (s *Server) createRun(w http.ResponseWriter, r *http.Request) {
	run, e, _, ok := s.start(w, r)
	if !ok {
		return
	}
	reply(w, http.StatusOK, s.runOut(run.Req.ThreadID, e))
}

func (s *Server) streamRun(w http.ResponseWriter, r *http.Request) {
	run, _, modes, ok := s.start(w, r)
	if !ok {
		return
	}
	w.Header().Set("Location", runPath(run.Req.ThreadID, run.ID())+"/stream")
	s.follow(w, r, run, modes, 0, false)
}

func (s *Server) waitRun(w http.ResponseWriter, r *http.Request) {
	run, _, _, ok := s.start(w, r)
	if !ok {
		return
	}
	s.answerEnd(w, r, run)
}

// answerEnd waits for run to end and answers the thread's values, or
// LangGraph's __error__ when it failed.
func (s *Server) answerEnd(w http.ResponseWriter, r *http.Request, run *runner.Run) {
	if !s.await(r.Context(), run, cancelOnDisconnect(run) || r.URL.Query().Get("cancel_on_disconnect") == "1") {
		return // the client went away
	}
	if in := run.Info(); in.Status == runner.StatusError {
		reply(w, http.StatusOK, map[string]any{"__error__": map[string]string{"error": "RunError", "message": in.Error}})
		return
	}
	v, err := s.values(run.Req.ThreadID)
	if err != nil {
		fail(w, http.StatusInternalServerError, "The thread's values could not be read; try again.")
		return
	}
	reply(w, http.StatusOK, v)
}

// await waits until run has ended (true) or ctx is done, when it cancels
// the run if cancel says so.
func (s *Server) await(ctx context.Context, run *runner.Run, cancel bool) bool {
	for {
		_, ended, wake := run.Read(math.MaxInt32)
		if ended {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			if cancel {
				s.o.Runner.Cancel(run.ID(), nil)
			}
			return false
		}
	}
}
