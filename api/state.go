package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/store"
)

// threadOut is t as LangGraph shows it; values are the full state when
// full, else its title only (cheap, for lists).
func (s *Server) threadOut(t *store.Thread, full bool) lgwire.Thread {
	out := lgwire.Thread{ThreadID: t.ID, Created: t.Created, Updated: t.Updated, Metadata: lgwire.ThreadMetadata(t),
		Status: s.threadStatus(t), Values: map[string]any{"title": t.Title}, Interrupts: map[string]any{}}
	if full {
		if v, err := s.values(t.ID); err == nil {
			out.Values = v
		}
	}
	return out
}

// threadStatus is busy while a run is active or waiting, error when its
// last run failed, else idle.
func (s *Server) threadStatus(t *store.Thread) string {
	if s.Busy(t.ID) {
		return "busy"
	}
	runs := s.entries(t.ID)
	if len(runs) > 0 && s.runStatus(t.ID, runs[len(runs)-1].ID) == "error" {
		return "error"
	}
	return "idle"
}

// values is thread id's state: its messages, title, artifacts and todos.
func (s *Server) values(id string) (map[string]any, error) {
	var t *store.Thread
	var msgs []*store.Message
	var todos []lgwire.Todo
	err := s.o.Store.View(func(tx *store.Tx) error {
		var err error
		if t, err = tx.Thread(id); err != nil {
			return err
		}
		todos = lgwire.Todos(tx, id)
		msgs, err = tx.Messages(id, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"messages": lgwire.FromStore(msgs), "title": t.Title, "artifacts": lgwire.Artifacts(msgs), "todos": todos}, nil
}

// thread loads the API thread id, answering 404 itself when there is
// none.
func (s *Server) thread(w http.ResponseWriter, id string) (*store.Thread, bool) {
	t, err := s.o.Store.Thread(id)
	if err == nil && t.ChatKey != chatKey(id) {
		err = store.ErrNotFound
	}
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("api: reading a thread", "thread", id, "err", err)
			fail(w, http.StatusInternalServerError, "The thread could not be read; try again.")
			return nil, false
		}
		fail(w, http.StatusNotFound, fmt.Sprintf("Thread %q not found.", id))
		return nil, false
	}
	return t, true
}

// apiThread reports whether id is an API thread that exists.
func (s *Server) apiThread(id string) bool {
	t, err := s.o.Store.Thread(id)
	return err == nil && t.ChatKey == chatKey(id)
}

type createThreadBody struct {
	ThreadID string         `json:"thread_id"`
	IfExists string         `json:"if_exists"` // raise (default) or do_nothing
	Metadata map[string]any `json:"metadata"`
	Model    string         `json:"model"` // deerflow's: a configured model name
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var req createThreadBody
	if !decode(w, r, &req) {
		return
	}
	if req.Model != "" {
		if _, ok := s.o.Agent.Model(req.Model); !ok {
			fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("There is no model called %q.", req.Model))
			return
		}
	}
	if req.IfExists != "" && req.IfExists != "raise" && req.IfExists != "do_nothing" {
		fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("if_exists %q is not raise or do_nothing.", req.IfExists))
		return
	}
	if req.ThreadID != "" && !lgwire.ValidThreadID(req.ThreadID) {
		fail(w, http.StatusUnprocessableEntity, "thread_id must be 1 to 128 letters, digits and - _ . : characters.")
		return
	}
	t, created, err := s.newThread(req.ThreadID, req.Model, req.Metadata)
	switch {
	case err != nil:
		s.log.Error("api: creating a thread", "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be stored; try again.")
	case !created && (req.IfExists == "do_nothing" && t != nil):
		reply(w, http.StatusOK, s.threadOut(t, true))
	case !created:
		fail(w, http.StatusConflict, fmt.Sprintf("Thread %q already exists.", req.ThreadID))
	default:
		reply(w, http.StatusOK, s.threadOut(t, false))
	}
}

// newThread stores a new API thread (id "" → a new id). When id is taken
// it returns the API thread of that id (nil for another kind) and false.
func (s *Server) newThread(id, model string, meta map[string]any) (*store.Thread, bool, error) {
	if id == "" {
		id = agent.NewID("th_")
	}
	now := s.o.Now()
	t := &store.Thread{ID: id, ChatKey: chatKey(id), Model: model, Created: now, Updated: now}
	if meta == nil {
		meta = map[string]any{}
	}
	lgwire.SetThreadMetadata(t, meta)
	var old *store.Thread
	err := s.o.Store.Update(func(tx *store.Tx) error {
		cur, err := tx.Thread(id)
		if err == nil {
			old = cur
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return tx.PutThread(t)
	})
	if err != nil || old == nil {
		return t, err == nil, err
	}
	if old.ChatKey != chatKey(id) {
		old = nil
	}
	return old, false, nil
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.thread(w, r.PathValue("id")); ok {
		reply(w, http.StatusOK, s.threadOut(t, true))
	}
}

// patchThread merges the body's metadata into the thread's.
func (s *Server) patchThread(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var req struct {
		Metadata map[string]any `json:"metadata"`
	}
	if !decode(w, r, &req) {
		return
	}
	t, err := s.changeThread(t.ID, func(t *store.Thread) {
		m := lgwire.ThreadMetadata(t)
		for k, v := range req.Metadata {
			m[k] = v
		}
		lgwire.SetThreadMetadata(t, m)
	})
	if err != nil {
		s.log.Error("api: updating a thread", "thread", r.PathValue("id"), "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be updated; try again.")
		return
	}
	reply(w, http.StatusOK, s.threadOut(t, false))
}

// changeThread applies fn to thread id's record in one transaction and
// returns it.
func (s *Server) changeThread(id string, fn func(*store.Thread)) (*store.Thread, error) {
	var t *store.Thread
	err := s.o.Store.Update(func(tx *store.Tx) error {
		var err error
		if t, err = tx.Thread(id); err != nil {
			return err
		}
		fn(t)
		t.Updated = s.o.Now()
		return tx.PutThread(t)
	})
	return t, err
}

// checkpointID names the thread's state now: LangGraph clients pass it
// back but deerflow keeps one state per thread.
func checkpointID(t *store.Thread) string {
	return "cp-" + strconv.FormatInt(t.Updated.UnixNano(), 36)
}
