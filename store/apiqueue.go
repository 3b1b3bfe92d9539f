package store

import "go.etcd.io/bbolt"

// bucketAPIQueue holds the HTTP API's runs that are accepted but not yet
// started: bigEndian(seq) → a run, encoded by the api package. A run
// leaves it in the transaction that starts it, so after a restart each
// one either runs then or is known to have started.
var bucketAPIQueue = []byte("apiqueue")

// migrateTo4 adds the API's run queue.
func migrateTo4(tx *bbolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists(bucketAPIQueue)
	return err
}

// PutQueuedRun stores an accepted API run and returns its sequence number
// (they grow, so the queue comes back in order).
func (tx *Tx) PutQueuedRun(data []byte) (uint64, error) { return tx.putSeq(bucketAPIQueue, data) }

// DeleteQueuedRun removes a run that started or was cancelled.
func (tx *Tx) DeleteQueuedRun(seq uint64) error { return tx.deleteSeq(bucketAPIQueue, seq) }

// QueuedRuns calls fn for every waiting API run, oldest first. data is
// only valid during the call.
func (tx *Tx) QueuedRuns(fn func(seq uint64, data []byte) error) error {
	return tx.forEachSeq(bucketAPIQueue, fn)
}
