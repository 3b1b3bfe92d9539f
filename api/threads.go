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
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// chatKey is the conversation key of an API thread. Only threads created
// through the API (with this key) are reachable through it: the chat
// channels' conversations are their people's.
func chatKey(threadID string) string { return "api:" + threadID }

// threadJSON is a thread as the API shows it.
type threadJSON struct {
	ThreadID string        `json:"thread_id"`
	Title    string        `json:"title"`
	Model    string        `json:"model,omitempty"`
	Created  time.Time     `json:"created_at"`
	Updated  time.Time     `json:"updated_at"`
	Messages []messageJSON `json:"messages"`
	// Busy says whether a run is active or waiting on the thread.
	Busy bool `json:"busy"`
}

type messageJSON struct {
	Seq        uint64         `json:"seq"`
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []toolCallJSON `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	RunID      string         `json:"run_id,omitempty"`
	Time       time.Time      `json:"time,omitzero"`
}

type toolCallJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type createThreadReq struct {
	Model string `json:"model"` // optional: a configured model name
}

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) {
	var req createThreadReq
	if !decode(w, r, &req) {
		return
	}
	if req.Model != "" {
		if _, ok := s.o.Agent.Model(req.Model); !ok {
			fail(w, http.StatusBadRequest, "unknown_model", fmt.Sprintf("There is no model called %q.", req.Model))
			return
		}
	}
	now := s.o.Now()
	t := &store.Thread{ID: agent.NewID("th_"), Model: req.Model, Created: now, Updated: now}
	t.ChatKey = chatKey(t.ID)
	if err := s.o.Store.Update(func(tx *store.Tx) error { return tx.PutThread(t) }); err != nil {
		s.log.Error("api: creating a thread", "err", err)
		fail(w, http.StatusInternalServerError, "store_error", "The thread could not be stored; try again.")
		return
	}
	reply(w, http.StatusCreated, threadJSON{ThreadID: t.ID, Model: t.Model, Created: t.Created, Updated: t.Updated, Messages: []messageJSON{}})
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
			fail(w, http.StatusInternalServerError, "store_error", "The thread could not be read; try again.")
			return nil, false
		}
		fail(w, http.StatusNotFound, "thread_not_found", fmt.Sprintf("There is no API thread %q.", id))
		return nil, false
	}
	return t, true
}

// apiThread reports whether id is an API thread that exists.
func (s *Server) apiThread(id string) bool {
	t, err := s.o.Store.Thread(id)
	return err == nil && t.ChatKey == chatKey(id)
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var msgs []*store.Message
	err := s.o.Store.View(func(tx *store.Tx) error {
		var err error
		msgs, err = tx.Messages(t.ID, 0)
		return err
	})
	if err != nil {
		s.log.Error("api: reading messages", "thread", t.ID, "err", err)
		fail(w, http.StatusInternalServerError, "store_error", "The thread's messages could not be read; try again.")
		return
	}
	out := threadJSON{ThreadID: t.ID, Title: t.Title, Model: t.Model, Created: t.Created, Updated: t.Updated,
		Messages: make([]messageJSON, 0, len(msgs)), Busy: s.Busy(t.ID)}
	for _, m := range msgs {
		mj := messageJSON{Seq: m.Seq, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, RunID: m.RunID, Time: m.Time}
		for _, c := range m.ToolCalls {
			mj.ToolCalls = append(mj.ToolCalls, toolCallJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out.Messages = append(out.Messages, mj)
	}
	reply(w, http.StatusOK, out)
}

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
	if status, code, msg := s.forget(t.ID); status != 0 {
		fail(w, status, code, msg)
		return
	}
	// After the thread is gone from the store no run can start in it, so
	// its files are removed without holding the lanes.
	if s.o.RemoveFiles != nil {
		if err := s.o.RemoveFiles(t.ID); err != nil {
			s.log.Error("api: removing a deleted thread's files", "thread", t.ID, "err", err)
			fail(w, http.StatusInternalServerError, "files_not_removed", "The thread was deleted, but some of its files could not be removed from disk.")
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
		return s.o.Store.Update(func(tx *store.Tx) error { return tx.DeleteThread(id) })
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
		fail(w, http.StatusBadRequest, "bad_name", "A file is named by its plain name in the thread's outputs, without a path.")
		return
	}
	if s.o.Files == nil {
		fail(w, http.StatusNotFound, "file_not_found", "This deerflow serves no files.")
		return
	}
	f, err := s.o.Files(t.ID, name)
	if err != nil {
		fail(w, http.StatusNotFound, "file_not_found", fmt.Sprintf("The thread's outputs have no file %q.", name))
		return
	}
	rc, err := f.Open()
	if err != nil {
		fail(w, http.StatusNotFound, "file_not_found", fmt.Sprintf("The thread's outputs have no file %q.", name))
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
