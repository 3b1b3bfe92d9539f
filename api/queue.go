package api

import (
	"encoding/json"
	"time"

	"github.com/deerflow/deerflow/store"
)

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
