package runner

import (
	"github.com/deerflow/deerflow/store"
)

// atOnce reports whether req, admitted to l, starts at once and is stored
// by its begin commit: its engine begins at once, runs are starting, and
// nothing else is active, waiting or being stored in the conversation.
func (r *Runner) atOnce(l *lane, req *Request) bool {
	if !req.BeginsAtOnce {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started && !r.closed && l.active == nil && !l.working && len(l.queue) == 0 && l.pending == 1
}

// submitAtOnce starts run without storing it first and waits until its
// begin commit has stored it (or, if it ended without beginning, until
// settle has). The commit that records the run's start is then also the
// one that accepts the message, so the platform is acknowledged only once
// it is durable, as on the queued path.
func (r *Runner) submitAtOnce(l *lane, run *Run) (Ticket, error) {
	run.intake = run.Req.Also
	run.accepted = make(chan error, 1)
	if _, err := r.enqueue(l, run, Enqueue, true); err != nil {
		// Shutdown began meanwhile: stored to run after the restart.
		run.finish(StatusPending, "deerflow is shutting down; the run starts once it is back")
	} else {
		r.start(l)
	}
	if err := <-run.accepted; err != nil {
		return Ticket{}, err
	}
	return Ticket{Run: run}, nil
}

// beginAtOnce is Begin for a run started at once: the request's Also goes
// into the begin commit, and Submit learns when that commit lands. The
// transaction may be retried (store.Batch), so this may run more than once.
func (run *Run) beginAtOnce(tx *store.Tx) error {
	if run.stored.Load() {
		return nil // a later begin (a research resumed, say)
	}
	if run.intake != nil {
		if err := run.intake(tx); err != nil {
			return err
		}
	}
	tx.OnCommit(func() {
		if !run.stored.Swap(true) {
			run.began.Store(true)
			run.accepted <- nil
		}
	})
	return nil
}

// settle stores a run started at once that ends without its begin commit
// having landed (it failed or was stopped before it began, or shutdown
// held it): the request's Also, so the platform's event counts as handled,
// and, when it is to run after a restart (status pending), the request in
// the queue. Submit gets the outcome.
func (run *Run) settle(status string) {
	if run.accepted == nil || run.stored.Load() {
		return
	}
	var err error
	switch {
	case status == StatusPending:
		_, err = run.r.q.Push(&run.Req) // with Also, as any waiting run
	case run.intake != nil:
		err = run.r.opts.Store.Batch(run.intake)
	}
	if !run.stored.Swap(true) {
		run.accepted <- err
	}
}
