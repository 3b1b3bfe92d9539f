package runner

import (
	"context"
	"time"

	"github.com/deerflow/deerflow/agent"
)

// lane is one conversation: the run in progress and those waiting for it.
// Guarded by Runner.mu.
type lane struct {
	conv   string
	active *Run
	queue  []*Run
	// pending: runs admitted and being stored, not yet in queue.
	pending int
	// answered: the active run has ended its answer; a run submitted now
	// waits behind nothing the person can still see.
	answered bool
	working  bool // a worker goroutine owns the lane
	closing  bool // Quiet is removing the conversation
}

// laneLocked returns the conversation's lane, creating it. Callers hold
// r.mu.
func (r *Runner) laneLocked(conv string) *lane {
	l := r.convs[conv]
	if l == nil {
		l = &lane{conv: conv}
		r.convs[conv] = l
	}
	return l
}

// Quiet runs fn (which deletes the conversation, say) only while the
// conversation has no run active, waiting or being submitted, and keeps
// new runs out meanwhile (ErrBusy); no lock is held while fn runs. It
// returns ErrBusy when the conversation is not idle, else fn's error.
func (r *Runner) Quiet(conv string, fn func() error) error {
	r.mu.Lock()
	l := r.laneLocked(conv)
	if l.active != nil || len(l.queue) > 0 || l.pending > 0 || l.closing || l.working {
		r.mu.Unlock()
		return ErrBusy
	}
	l.closing = true
	r.mu.Unlock()
	err := fn()
	r.mu.Lock()
	l.closing = false
	if err == nil && r.convs[conv] == l {
		delete(r.convs, conv)
	}
	r.mu.Unlock()
	return err
}

// enqueue adds a stored run to its lane, stopping the active run first
// when the strategy says so, and returns how many runs it waits for.
func (r *Runner) enqueue(l *lane, run *Run, st Strategy, reserved bool) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		if reserved {
			l.pending--
			r.waiting--
		}
		return 0, ErrClosed
	}
	if prev := l.active; prev != nil && (st == Interrupt || st == Rollback) {
		prev.mu.Lock()
		prev.rollback = prev.rollback || st == Rollback
		prev.mu.Unlock()
		prev.interrupt(agent.ErrStopped)
	}
	r.runs[run.Req.ID] = run
	l.queue = append(l.queue, run)
	if reserved {
		l.pending--
	} else {
		r.waiting++
	}
	ahead := len(l.queue)
	if l.active != nil && !l.answered {
		ahead++ // the active run's answer is still to come
	}
	return ahead - 1, nil
}

// Start lets runs start: the ones Recover queued again and the ones
// submitted meanwhile, then every later one. Call it once the front ends
// can show what runs (the channels' senders are registered).
func (r *Runner) Start() {
	r.mu.Lock()
	r.started = true
	lanes := make([]*lane, 0, len(r.convs))
	for _, l := range r.convs {
		lanes = append(lanes, l)
	}
	r.mu.Unlock()
	for _, l := range lanes {
		r.start(l)
	}
}

// start gives the lane a worker if it has none and a run waits.
func (r *Runner) start(l *lane) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l.working || len(l.queue) == 0 || r.closed || !r.started {
		return
	}
	l.working = true
	r.nworkers++
	r.workers.Add(1)
	go r.work(l)
}

// work runs the lane's runs, in order, until none waits. A run's Ended
// event comes once the lane has moved on from it, so a follower that saw
// it finds the conversation free (or on to its next run).
func (r *Runner) work(l *lane) {
	defer r.workers.Done()
	for {
		r.mu.Lock()
		if len(l.queue) == 0 || r.closed {
			l.working, l.active, l.answered = false, nil, false
			if l.pending == 0 && len(l.queue) == 0 && !l.closing && r.convs[l.conv] == l {
				delete(r.convs, l.conv)
			}
			r.nworkers--
			r.idle.Broadcast()
			r.mu.Unlock()
			return
		}
		run := l.queue[0]
		l.queue = l.queue[1:]
		r.waiting--
		l.active, l.answered = run, false
		r.mu.Unlock()

		status, errText := r.execute(run)

		r.mu.Lock()
		l.active, l.answered = nil, false
		r.mu.Unlock()
		if status != "" {
			run.finish(status, errText)
		}
		r.expire(run)
	}
}

// answered notes that run's answer has been given.
func (r *Runner) answered(run *Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.convs[run.Req.Conv]; l != nil && l.active == run {
		l.answered = true
	}
}

// expire forgets a finished run after its origin's Keep.
func (r *Runner) expire(run *Run) {
	forget := func() {
		r.mu.Lock()
		if r.runs[run.Req.ID] == run {
			delete(r.runs, run.Req.ID)
		}
		r.mu.Unlock()
	}
	if run.h.Keep <= 0 {
		forget()
		return
	}
	time.AfterFunc(run.h.Keep, forget)
}

// Lookup returns a run the runner keeps (waiting, active, or finished
// within its origin's Keep).
func (r *Runner) Lookup(id string) (*Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[id]
	return run, ok
}

// Cancel stops a run: a waiting one leaves its queue (and the store) at
// once, an active one is cancelled with cause (ErrCancelled when nil).
// It reports whether the run was found.
func (r *Runner) Cancel(id string, cause error) bool {
	if cause == nil {
		cause = ErrCancelled
	}
	r.mu.Lock()
	run, ok := r.runs[id]
	if !ok {
		r.mu.Unlock()
		return false
	}
	if l := r.convs[run.Req.Conv]; l != nil {
		for i, q := range l.queue {
			if q == run {
				l.queue = append(l.queue[:i:i], l.queue[i+1:]...)
				r.waiting--
				r.idle.Broadcast()
				r.mu.Unlock()
				r.drop(run.seq)
				run.finish(StatusInterrupted, "cancelled before it started")
				r.expire(run)
				return true
			}
		}
	}
	r.mu.Unlock()
	run.interrupt(cause)
	return true
}

// Stop is /stop: the conversation's active run is cancelled (cause
// agent.ErrStopped) and every waiting run dropped. It reports whether a
// run was active and how many were dropped.
func (r *Runner) Stop(conv string) (stopped bool, dropped int) {
	r.mu.Lock()
	l := r.convs[conv]
	if l == nil {
		r.mu.Unlock()
		return false, 0
	}
	gone := l.queue
	l.queue = nil
	r.waiting -= len(gone)
	r.idle.Broadcast()
	active := l.active
	r.mu.Unlock()
	for _, run := range gone {
		r.drop(run.seq)
		run.finish(StatusInterrupted, "dropped by /stop")
		r.expire(run)
	}
	if active != nil {
		active.interrupt(agent.ErrStopped)
	}
	return active != nil, len(gone)
}

// Conv is a conversation's state, for /status.
type Conv struct {
	Active   *Run // nil when idle
	Answered bool // the active run has given its answer (it is recording its end)
	Waiting  int
}

// Conv returns the conversation's state.
func (r *Runner) Conv(conv string) Conv {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.convs[conv]
	if l == nil {
		return Conv{}
	}
	return Conv{Active: l.active, Answered: l.answered, Waiting: len(l.queue)}
}

// Depth returns how many runs wait and how many conversations have one
// running.
func (r *Runner) Depth() (waiting, running int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.convs {
		if l.active != nil {
			running++
		}
	}
	return r.waiting, running
}

// WaitIdle blocks until no conversation has a run active or waiting (once
// closed: active), or ctx is done.
func (r *Runner) WaitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.idle.Broadcast()
		r.mu.Unlock()
	})
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.nworkers > 0 || r.waiting > 0 && !r.closed {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.idle.Wait()
	}
	return nil
}

// Refuse makes Submit fail with ErrClosed from now on; what runs goes on.
// The waiting runs stay stored and start after a restart, under their ids;
// their followers are told so now (Ended with status pending).
func (r *Runner) Refuse() {
	r.mu.Lock()
	r.closed = true
	r.idle.Broadcast()
	var held []*Run
	for _, l := range r.convs {
		held = append(held, l.queue...)
	}
	r.mu.Unlock()
	for _, run := range held {
		run.finish(StatusPending, "deerflow is shutting down; the run starts once it is back")
	}
}

// Closed reports whether the runner takes no more runs.
func (r *Runner) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Close stops taking runs and lets the active ones finish for up to grace;
// then it cancels the rest with cause and waits for them to record their
// state (or ctx to end). Waiting runs stay stored: Recover runs them
// after a restart.
func (r *Runner) Close(ctx context.Context, grace time.Duration, cause error) {
	r.Refuse()
	r.mu.Lock()
	waiting := r.waiting
	running := r.nworkers
	r.mu.Unlock()
	if running > 0 && grace > 0 {
		r.log.Info("letting running replies finish", "running", running, "grace", grace.String(), "queued_for_restart", waiting)
		gctx, cancel := context.WithTimeout(ctx, grace)
		r.WaitIdle(gctx)
		cancel()
	}
	r.stopBase(cause)
	if r.opts.Stop != nil {
		r.opts.Stop(ctx, cause)
	}
	r.WaitIdle(ctx)
	done := make(chan struct{})
	go func() { r.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
