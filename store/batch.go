package store

import (
	"fmt"
	"sync"
)

// Batch coalesces concurrent writers into shared commits, so many chats
// appending at once pay for one fsync instead of one each.
//
// bbolt's own db.Batch waits up to 10 ms (MaxBatchDelay) for company before
// committing, which a lone writer always pays. This is group commit instead:
// a writer who finds no commit under way commits at once, with whatever is
// queued; writers arriving meanwhile queue up, and the first of them leads
// the next commit. A lone writer waits for nothing, and under load each
// writer waits for at most the commit in progress and its own.

// maxBatch bounds one commit, so a leader holding the write lock for a
// backlog still finishes in reasonable time.
const maxBatch = 1000

type batcher struct {
	mu         sync.Mutex
	pending    []*batchCall
	committing bool // a leader is committing; pending calls will be picked up
}

type batchCall struct {
	fn   func(*Tx) error
	done chan batchResult // buffered: the sender never waits
}

type batchResult struct {
	err  error
	lead bool // the caller now leads: commit what is pending
	solo bool // fn failed inside the batch: run it alone for its own result
}

// Batch runs fn in a write transaction shared with concurrent Batch calls.
// If another call's fn fails, the transaction is rolled back and retried
// without it, so fn may run more than once: it must be idempotent and must
// not keep state from one run to the next. fn's own error (or panic) comes
// from running it alone, as with Update.
func (s *Store) Batch(fn func(*Tx) error) error {
	c := &batchCall{fn: fn, done: make(chan batchResult, 1)}
	b := &s.batch
	b.mu.Lock()
	b.pending = append(b.pending, c)
	lead := !b.committing
	b.committing = true
	b.mu.Unlock()

	var r batchResult
	if !lead {
		r = <-c.done
	}
	if lead || r.lead {
		s.commitPending()
		r = <-c.done // commitPending included c
	}
	if r.solo {
		return s.Update(fn)
	}
	return r.err
}

// commitPending commits the queued calls, then hands the lead to the first
// call queued meanwhile, or stands down.
func (s *Store) commitPending() {
	b := &s.batch
	b.mu.Lock()
	n := min(len(b.pending), maxBatch)
	calls := b.pending[:n:n]
	b.pending = b.pending[n:]
	b.mu.Unlock()

	s.commitCalls(calls)

	b.mu.Lock()
	if len(b.pending) == 0 {
		b.committing = false
		b.pending = nil
	} else {
		b.pending[0].done <- batchResult{lead: true}
	}
	b.mu.Unlock()
}

// commitCalls runs calls in one transaction, dropping each failing call
// (told to retry alone) and retrying the rest, and reports the outcome.
func (s *Store) commitCalls(calls []*batchCall) {
	for len(calls) > 0 {
		failed := -1
		err := s.txGuard(true, func(t *Tx) error {
			failed = -1
			for i, c := range calls {
				if err := runSafe(c.fn, t); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			calls[failed].done <- batchResult{solo: true}
			calls = append(calls[:failed:failed], calls[failed+1:]...)
			continue
		}
		for _, c := range calls {
			c.done <- batchResult{err: err}
		}
		return
	}
}

// runSafe turns a panic in fn into an error, so that one caller's bug does
// not strand the others in the batch; running alone, it panics again in the
// caller's own goroutine.
func runSafe(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: batch function panicked: %v", r)
		}
	}()
	return fn(tx)
}
