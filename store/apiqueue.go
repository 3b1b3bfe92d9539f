package store

import "github.com/deerflow/deerflow/store/internal/schema"

// PutQueuedRun stores an accepted run (the runner's queue) and returns its sequence number
// (they grow, so the queue comes back in order).
func (tx *Tx) PutQueuedRun(data []byte) (uint64, error) { return tx.putSeq(schema.APIQueue, data) }

// DeleteQueuedRun removes a run that started or was cancelled.
func (tx *Tx) DeleteQueuedRun(seq uint64) error { return tx.deleteSeq(schema.APIQueue, seq) }

// QueuedRuns calls fn for every waiting run, oldest first. data is
// only valid during the call.
func (tx *Tx) QueuedRuns(fn func(seq uint64, data []byte) error) error {
	return tx.forEachSeq(schema.APIQueue, fn)
}
