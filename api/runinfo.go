package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// runEntry is what a thread's record keeps of a run.
type runEntry = lgwire.RunEntry

// addRunEntry lists run e in its thread, in the commit that stores it.
func addRunEntry(tx *store.Tx, threadID string, e runEntry) error {
	if err := lgwire.SetRunEntries(tx, threadID, append(lgwire.RunEntries(tx, threadID), e)); err != nil {
		return fmt.Errorf("api: listing a run: %w", err)
	}
	return nil
}

// entries lists thread id's runs, oldest first.
func (s *Server) entries(threadID string) []runEntry {
	var list []runEntry
	s.o.Store.View(func(tx *store.Tx) error {
		list = lgwire.RunEntries(tx, threadID)
		return nil
	})
	return list
}

// runOut is run e of a thread, with its status now.
func (s *Server) runOut(threadID string, e runEntry) lgwire.Run {
	out := lgwire.Run{RunID: e.ID, ThreadID: threadID, AssistantID: e.Assistant, Created: e.Created, Updated: e.Created,
		Metadata: e.Metadata, Strategy: e.Strategy,
		Kwargs: map[string]any{"stream_mode": e.Modes, "config": e.Config, "context": e.Context}}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	out.Status = runner.StatusInterrupted // dropped before it started and forgotten since
	if run, ok := s.lookup(threadID, e.ID); ok {
		in := run.Info()
		out.Status, out.Error = in.Status, in.Error
		out.Updated = latest(in.Created, in.Started, in.Ended)
	} else if rec, err := s.o.Store.Run(e.ID); err == nil && rec.ThreadID == threadID {
		out.Status, out.Error = storedStatus(rec), rec.Error
		out.Updated = latest(e.Created, rec.Started, rec.Ended)
	}
	return out
}

// latest is the latest of ts.
func latest(ts ...time.Time) time.Time { return slices.MaxFunc(ts, time.Time.Compare) }

// runStatus is the status of a thread's run.
func (s *Server) runStatus(threadID, runID string) string {
	return s.runOut(threadID, runEntry{ID: runID}).Status
}

// entry finds run id of thread t, answering 404 itself when there is
// none.
// threadRun resolves the {id} and {run} of a run's route; false when the
// client was told what is missing.
func (s *Server) threadRun(w http.ResponseWriter, r *http.Request) (*store.Thread, runEntry, bool) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return nil, runEntry{}, false
	}
	e, ok := s.entry(w, t, r.PathValue("run"))
	return t, e, ok
}

func (s *Server) entry(w http.ResponseWriter, t *store.Thread, id string) (runEntry, bool) {
	for _, e := range s.entries(t.ID) {
		if e.ID == id {
			return e, true
		}
	}
	// A run from before runs were listed: in the store, or not yet ended.
	// (A deleted or rolled-back run is in neither.)
	if rec, err := s.o.Store.Run(id); err == nil && rec.ThreadID == t.ID {
		return runEntry{ID: id, Assistant: lgwire.LeadAgent, Created: rec.Started}, true
	}
	if run, ok := s.lookup(t.ID, id); ok && run.Info().Ended.IsZero() && !run.Info().RolledBack {
		return runEntry{ID: id, Assistant: lgwire.LeadAgent, Created: run.Info().Created}, true
	}
	fail(w, http.StatusNotFound, fmt.Sprintf("Run %q not found in thread %s.", id, t.ID))
	return runEntry{}, false
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, _ := strconv.Atoi(q.Get("offset"))
	out := []lgwire.Run{}
	for _, e := range slices.Backward(s.entries(t.ID)) { // newest first
		if j := s.runOut(t.ID, e); q.Get("status") == "" || q.Get("status") == j.Status {
			out = append(out, j)
		}
	}
	reply(w, http.StatusOK, lgwire.Page(out, offset, limit))
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	if e, ok := s.entry(w, t, r.PathValue("run")); ok {
		reply(w, http.StatusOK, s.runOut(t.ID, e))
	}
}

// deleteRun forgets a finished run: its entry and its record.
func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) {
	t, e, ok := s.threadRun(w, r)
	if !ok {
		return
	}
	if st := s.runStatus(t.ID, e.ID); st == runner.StatusPending || st == runner.StatusRunning {
		fail(w, http.StatusConflict, "The run is "+st+"; cancel it first.")
		return
	}
	if err := s.dropRun(t.ID, e.ID); err != nil {
		s.log.Error("api: deleting a run", "run", e.ID, "err", err)
		fail(w, http.StatusInternalServerError, "The run could not be deleted; try again.")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// dropRun removes run id from its thread's list and the store.
func (s *Server) dropRun(threadID, id string) error {
	return s.o.Store.Update(func(tx *store.Tx) error {
		list := slices.DeleteFunc(lgwire.RunEntries(tx, threadID), func(e runEntry) bool { return e.ID == id })
		if err := lgwire.SetRunEntries(tx, threadID, list); err != nil {
			return err
		}
		if err := tx.DeleteRun(id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
}

// cancelRun cancels a run: ?wait=1 answers once it has stopped;
// ?action=rollback also takes its messages out of the thread and forgets
// it, as LangGraph deletes a rolled-back run.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	action := q.Get("action")
	if action != "" && action != "interrupt" && action != "rollback" {
		fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("action %q is not interrupt or rollback.", action))
		return
	}
	t, e, ok := s.threadRun(w, r)
	if !ok {
		return
	}
	wait := q.Get("wait") == "1" || q.Get("wait") == "true"
	if run, ok := s.lookup(t.ID, e.ID); ok {
		s.o.Runner.Cancel(run.ID(), nil)
		if (wait || action == "rollback") && !s.await(r.Context(), run, false) {
			return
		}
	}
	if action == "rollback" {
		if err := s.rollback(t.ID, e.ID); errors.Is(err, runner.ErrBusy) {
			fail(w, http.StatusConflict, "The run was stopped, but another run has started in the thread since, so it was not rolled back.")
			return
		} else if err != nil {
			s.log.Error("api: rolling back a run", "run", e.ID, "err", err)
			fail(w, http.StatusInternalServerError, "The run was stopped but the thread could not be rolled back.")
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	status := http.StatusAccepted
	if wait {
		status = http.StatusOK
	}
	reply(w, status, s.runOut(t.ID, e))
}

// rollback takes a stopped run's messages out of its thread and forgets
// the run.
func (s *Server) rollback(threadID, id string) error {
	err := s.quiet(threadID, func() error {
		return s.o.Store.Update(func(tx *store.Tx) error {
			msgs, err := tx.Messages(threadID, 0)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				if m.RunID == id {
					return tx.TruncateMessagesAfter(threadID, m.Seq-1)
				}
			}
			return nil // it never began
		})
	})
	if err != nil {
		return err
	}
	s.o.Agent.ForgetHistory(threadID)
	return s.dropRun(threadID, id)
}

func (s *Server) joinRun(w http.ResponseWriter, r *http.Request) {
	t, e, ok := s.threadRun(w, r)
	if !ok {
		return
	}
	if run, ok := s.lookup(t.ID, e.ID); ok {
		s.answerEnd(w, r, run)
		return
	}
	v, err := s.values(t.ID) // ended, and no longer kept
	if err != nil {
		fail(w, http.StatusInternalServerError, "The thread's values could not be read; try again.")
		return
	}
	reply(w, http.StatusOK, v)
}

// quiet is Runner.Quiet for a thread whose run has just ended: its lane
// may still be winding down (briefly busy with no run), so it tries again
// until the thread has a run of its own or the lane is free.
func (s *Server) quiet(threadID string, fn func() error) error {
	for i := 0; ; i++ {
		err := s.o.Runner.Quiet(chatKey(threadID), fn)
		if !errors.Is(err, runner.ErrBusy) || s.Busy(threadID) || i == 200 {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
