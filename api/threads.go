package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// threadRoutes are LangGraph's thread routes.
func (s *Server) threadRoutes() {
	s.mux.HandleFunc("POST /api/threads", s.createThread)
	s.mux.HandleFunc("POST /api/threads/search", s.searchThreads)
	s.mux.HandleFunc("GET /api/threads/{id}", s.getThread)
	s.mux.HandleFunc("PATCH /api/threads/{id}", s.patchThread)
	s.mux.HandleFunc("DELETE /api/threads/{id}", s.deleteThread)
	s.mux.HandleFunc("POST /api/threads/{id}/copy", s.copyThread)
	s.mux.HandleFunc("GET /api/threads/{id}/state", s.getState)
	s.mux.HandleFunc("POST /api/threads/{id}/state", s.updateState)
	s.mux.HandleFunc("GET /api/threads/{id}/history", s.history)
	s.mux.HandleFunc("POST /api/threads/{id}/history", s.history)
}

// chatKey is the conversation key of an API thread. Only threads created
// through the API (with this key) are reachable through it: the chat
// channels' conversations are their people's.
func chatKey(threadID string) string { return lgwire.ChatKey(threadID) }

// Busy reports whether the thread has an active or a waiting run.
func (s *Server) Busy(threadID string) bool {
	c := s.o.Runner.Conv(chatKey(threadID))
	return c.Active != nil || c.Waiting > 0
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	if status, _, msg := s.forget(t.ID); status != 0 {
		fail(w, status, msg)
		return
	}
	// After the thread is gone from the store no run can start in it, so
	// its files are removed without holding the lanes.
	if s.o.RemoveFiles != nil {
		if err := s.o.RemoveFiles(t.ID); err != nil {
			s.log.Error("api: removing a deleted thread's files", "thread", t.ID, "err", err)
			fail(w, http.StatusInternalServerError, "The thread was deleted, but some of its files could not be removed from disk.")
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// forget deletes thread id from the store, unless a run is active or
// waiting in it; a non-zero status says why not. The runner keeps new
// runs of the thread out meanwhile.
func (s *Server) forget(id string) (status int, code, msg string) {
	err := s.o.Runner.Quiet(chatKey(id), func() error {
		if _, active := s.o.Agent.Active(id); active {
			return runner.ErrBusy
		}
		return s.o.Store.Update(func(tx *store.Tx) error {
			if err := lgwire.SetRunEntries(tx, id, nil); err != nil {
				return err
			}
			return tx.DeleteThread(id)
		})
	})
	switch {
	case errors.Is(err, runner.ErrBusy):
		return http.StatusConflict, "thread_busy", "The thread has a run active or waiting; cancel it first."
	case err != nil:
		s.log.Error("api: deleting a thread", "thread", id, "err", err)
		return http.StatusInternalServerError, "store_error", "The thread could not be deleted; try again."
	}
	s.o.Agent.ForgetHistory(id)
	return 0, "", ""
}

// plainName reports whether name is a file's plain name, without a path.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00") && path.Base(name) == name
}

// file serves a file from the thread's outputs: a plain name, opened
// without following links out of the outputs.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	name := r.PathValue("name")
	if !plainName(name) {
		fail(w, http.StatusBadRequest, "A file is named by its plain name in the thread's outputs, without a path.")
		return
	}
	if s.o.Files == nil {
		fail(w, http.StatusNotFound, "This deerflow serves no files.")
		return
	}
	f, err := s.o.Files(t.ID, name)
	if err != nil {
		fail(w, http.StatusNotFound, fmt.Sprintf("The thread's outputs have no file %q.", name))
		return
	}
	rc, err := f.Open()
	if err != nil {
		fail(w, http.StatusNotFound, fmt.Sprintf("The thread's outputs have no file %q.", name))
		return
	}
	defer rc.Close()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name})) // f.Name is cleaned of bidi characters
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if st, ok := rc.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			w.Header().Set("Content-Length", fmt.Sprint(fi.Size()))
		}
	}
	io.Copy(w, rc)
}
