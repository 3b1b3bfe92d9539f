package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

// state is thread t's state; false when it was answered (an error).
func (s *Server) state(w http.ResponseWriter, t *store.Thread) (lgwire.State, bool) {
	v, err := s.values(t.ID)
	if err != nil {
		s.log.Error("api: reading a thread's state", "thread", t.ID, "err", err)
		fail(w, http.StatusInternalServerError, "The thread's state could not be read; try again.")
		return lgwire.State{}, false
	}
	return lgwire.State{Values: v, Next: []string{}, Tasks: []any{}, Checkpoint: lgwire.Checkpoint(t.ID, checkpointID(t)),
		Metadata: lgwire.ThreadMetadata(t), Created: t.Updated, Interrupts: []any{}}, true
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	if st, ok := s.state(w, t); ok {
		reply(w, http.StatusOK, st)
	}
}

// updateState sets what of the values a client may set: the title, and
// messages to add to the thread (while no run is active in it).
func (s *Server) updateState(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var req struct {
		Values struct {
			Title    *string         `json:"title"`
			Messages json.RawMessage `json:"messages"`
		} `json:"values"`
	}
	if !decode(w, r, &req) {
		return
	}
	var add []lgwire.Parsed
	if len(req.Values.Messages) > 0 && string(req.Values.Messages) != "null" {
		var err error
		if add, err = lgwire.ParseMessages(req.Values.Messages); err != nil {
			fail(w, http.StatusUnprocessableEntity, err.Error()+".")
			return
		}
	}
	err := s.o.Runner.Quiet(chatKey(t.ID), func() error {
		return s.o.Store.Update(func(tx *store.Tx) error { return s.putState(tx, t.ID, req.Values.Title, add) })
	})
	if errors.Is(err, runner.ErrBusy) {
		fail(w, http.StatusConflict, "The thread has a run active or waiting; its state changes once it is idle.")
		return
	} else if err != nil {
		s.log.Error("api: updating a thread's state", "thread", t.ID, "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be updated; try again.")
		return
	}
	s.o.Agent.ForgetHistory(t.ID)
	t, _ = s.o.Store.Thread(t.ID)
	reply(w, http.StatusOK, map[string]any{"checkpoint": lgwire.Checkpoint(t.ID, checkpointID(t))})
}

// putState sets thread id's title (when given) and appends msgs.
func (s *Server) putState(tx *store.Tx, id string, title *string, msgs []lgwire.Parsed) error {
	t, err := tx.Thread(id)
	if err != nil {
		return err
	}
	now := s.o.Now()
	for _, m := range msgs {
		if err := tx.AppendMessages(id, &store.Message{Role: m.Role, Content: m.Content, Time: now}); err != nil {
			return err
		}
	}
	if title != nil {
		t.Title = strings.TrimSpace(*title)
	}
	t.Updated = now
	return tx.PutThread(t)
}

// history answers the thread's states, newest first: the state now, then
// the state after each earlier run (its messages up to the next run's
// first), as LangGraph's checkpoints (?limit or the body's limit, 10 by
// default).
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	t, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	var q struct {
		Limit int `json:"limit"`
	}
	if r.Method == http.MethodPost && !decode(w, r, &q) {
		return
	}
	now, ok := s.state(w, t)
	if !ok {
		return
	}
	var msgs []*store.Message
	s.o.Store.View(func(tx *store.Tx) error {
		msgs, _ = tx.Messages(t.ID, 0)
		return nil
	})
	var firsts []int // where each run's messages begin
	for i, m := range msgs {
		if m.RunID != "" && (i == 0 || msgs[i-1].RunID != m.RunID) {
			firsts = append(firsts, i)
		}
	}
	out := []lgwire.State{now}
	for i := len(firsts) - 1; i > 0; i-- {
		n, cut := firsts[i], msgs[firsts[i]].Seq
		st := now
		st.Values = map[string]any{"messages": lgwire.FromStore(msgs[:n]), "title": t.Title, "artifacts": lgwire.Artifacts(msgs[:n])}
		st.Checkpoint = lgwire.Checkpoint(t.ID, "cp-"+strconv.FormatUint(cut, 36))
		out[len(out)-1].Parent = st.Checkpoint
		out = append(out, st)
	}
	reply(w, http.StatusOK, lgwire.Page(out, 0, q.Limit))
}

type searchBody struct {
	Metadata  map[string]any `json:"metadata"`
	IDs       []string       `json:"ids"`
	Status    string         `json:"status"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`    // thread_id, created_at, updated_at (default), status
	SortOrder string         `json:"sort_order"` // asc or desc (default)
	Select    []string       `json:"select"`
}

func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request) {
	var q searchBody
	if !decode(w, r, &q) {
		return
	}
	var matched []*store.Thread
	ids := map[string]bool{}
	for _, id := range q.IDs {
		ids[id] = true
	}
	err := s.o.Store.View(func(tx *store.Tx) error {
		return tx.Threads(func(t *store.Thread) bool {
			if t.ChatKey == chatKey(t.ID) && (len(ids) == 0 || ids[t.ID]) && lgwire.MetaMatch(lgwire.ThreadMetadata(t), q.Metadata) {
				matched = append(matched, t)
			}
			return true
		})
	})
	if err != nil {
		s.log.Error("api: searching threads", "err", err)
		fail(w, http.StatusInternalServerError, "The threads could not be read; try again.")
		return
	}
	out := []lgwire.Thread{}
	for _, t := range matched { // outside the transaction: the status reads the store
		if j := s.threadOut(t, false); q.Status == "" || q.Status == j.Status {
			out = append(out, j)
		}
	}
	lgwire.SortThreads(out, q.SortBy, q.SortOrder)
	out = lgwire.Page(out, q.Offset, q.Limit)
	if len(q.Select) == 0 {
		reply(w, http.StatusOK, out)
		return
	}
	reply(w, http.StatusOK, lgwire.Select(out, q.Select, func(id string) any {
		v, _ := s.values(id)
		return v
	}))
}

// copyThread copies a thread: its messages, title, model and metadata,
// under a new id (not its runs or files).
func (s *Server) copyThread(w http.ResponseWriter, r *http.Request) {
	src, ok := s.thread(w, r.PathValue("id"))
	if !ok {
		return
	}
	now := s.o.Now()
	t := &store.Thread{ID: agent.NewID("th_"), Title: src.Title, Model: src.Model, Created: now, Updated: now,
		Summary: src.Summary}
	t.ChatKey = chatKey(t.ID)
	lgwire.SetThreadMetadata(t, lgwire.ThreadMetadata(src))
	err := s.o.Store.Update(func(tx *store.Tx) error {
		msgs, err := tx.Messages(src.ID, 0)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			c := *m
			c.Seq = 0
			if err := tx.AppendMessages(t.ID, &c); err != nil {
				return err
			}
			if m.Seq == src.SummarySeq {
				t.SummarySeq = c.Seq // seqs of the copy start again at 1
			}
		}
		return tx.PutThread(t)
	})
	if err != nil {
		s.log.Error("api: copying a thread", "thread", src.ID, "err", err)
		fail(w, http.StatusInternalServerError, "The thread could not be copied; try again.")
		return
	}
	reply(w, http.StatusOK, s.threadOut(t, false))
}
