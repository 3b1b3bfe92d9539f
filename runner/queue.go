package runner

import (
	"encoding/json"

	"github.com/deerflow/deerflow/store"
)

// Queue is the durable side of the lanes: every submitted run is stored
// until the commit that begins it, or until it is cancelled. It is the
// only part of the runner that knows where waiting runs are kept; a queue
// on another engine (see doc.go) implements these four methods.
type Queue interface {
	// Push stores req, with req.Also in the same commit, and returns its
	// sequence number (they grow, so Pending comes back in order).
	Push(req *Request) (seq uint64, err error)
	// Take removes a run inside tx, the commit that records its start.
	Take(tx *store.Tx, seq uint64) error
	// Drop removes a run that will not begin (cancelled, refused).
	Drop(seq uint64) error
	// Pending returns the stored runs, oldest first; an unreadable one
	// comes back as a nil request (to be dropped).
	Pending() (seqs []uint64, reqs []*Request, err error)
}

// BoltQueue is the Queue in the store's bbolt file (its run queue bucket).
func BoltQueue(st *store.Store) Queue { return boltQueue{st} }

type boltQueue struct{ st *store.Store }

func (q boltQueue) Push(req *Request) (uint64, error) {
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

func (q boltQueue) Take(tx *store.Tx, seq uint64) error { return tx.DeleteQueuedRun(seq) }

func (q boltQueue) Drop(seq uint64) error {
	return q.st.Batch(func(tx *store.Tx) error { return tx.DeleteQueuedRun(seq) })
}

func (q boltQueue) Pending() (seqs []uint64, reqs []*Request, err error) {
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

// drop removes a run that will not begin from the queue, logging a failure
// (the run then comes back after a restart and is dropped again).
func (r *Runner) drop(seq uint64) {
	if seq == 0 {
		return
	}
	if err := r.q.Drop(seq); err != nil {
		r.log.Error("runner: removing a run from the queue", "seq", seq, "err", err)
	}
}
