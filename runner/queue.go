package runner

import (
	"encoding/json"
	"log/slog"

	"github.com/deerflow/deerflow/store"
)

// queue is the durable side of the lanes: every submitted run is stored
// (bbolt, the store's run queue) until the commit that begins it, or until
// it is cancelled. It is the only part of the runner that knows where
// waiting runs are kept; a queue on another engine (a JetStream stream per
// conversation subject, acknowledged by the begin commit's outbox) would
// replace these four methods.
type queue struct{ st *store.Store }

// push stores req, with req.Also in the same commit, and returns its
// sequence number (they grow, so the queue comes back in order).
func (q *queue) push(req *Request) (uint64, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	var seq uint64
	err = q.st.Batch(func(tx *store.Tx) error {
		if req.Also != nil {
			if err := req.Also(tx); err != nil {
				return err
			}
		}
		var err error
		seq, err = tx.PutQueuedRun(data)
		return err
	})
	return seq, err
}

// drop removes a run that will not begin (cancelled, refused).
func (q *queue) drop(seq uint64, log *slog.Logger) {
	if seq == 0 {
		return
	}
	if err := q.st.Batch(func(tx *store.Tx) error { return tx.DeleteQueuedRun(seq) }); err != nil {
		log.Error("runner: removing a run from the queue", "seq", seq, "err", err)
	}
}

// pending returns the stored runs, oldest first; an unreadable one comes
// back with a nil request (to be dropped).
func (q *queue) pending() (seqs []uint64, reqs []*Request, err error) {
	err = q.st.View(func(tx *store.Tx) error {
		return tx.QueuedRuns(func(seq uint64, data []byte) error {
			req := new(Request)
			if json.Unmarshal(data, req) != nil || req.ID == "" || req.ThreadID == "" {
				req = nil
			} else {
				req.normalize()
			}
			seqs, reqs = append(seqs, seq), append(reqs, req)
			return nil
		})
	})
	return seqs, reqs, err
}
