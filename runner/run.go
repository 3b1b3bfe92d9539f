package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// Run is one run while the runner keeps it.
type Run struct {
	Req Request

	r     *Runner
	h     Handler
	seq   uint64      // its record in the queue until it begins; 0 once taken
	began atomic.Bool // Begin ran: the queue record went with the run's first commit
	j     Journal

	// A run started at once (Request.BeginsAtOnce) is stored by its begin
	// commit: intake is the request's Also, and accepted gets the outcome
	// Submit waits for (see submitAtOnce).
	intake   func(*store.Tx) error
	accepted chan error
	stored   atomic.Bool // the begin commit that stored it landed

	mu       sync.Mutex
	status   string
	errText  string
	started  time.Time
	ended    time.Time
	rollback bool                  // undo the run once it has stopped
	rolled   bool                  // it was undone
	snap     *store.ThreadSnapshot // the thread before the run (Undoable)
	cancel   context.CancelCauseFunc
	stop     error // a cancellation asked for before cancel was set
	done     bool
}

func (r *Runner) newRun(req Request, h Handler) *Run {
	return &Run{Req: req, r: r, h: h, status: StatusPending, j: r.opts.Journal(req.ID)}
}

// ID is the run's id.
func (run *Run) ID() string { return run.Req.ID }

// Begin takes the run off the durable queue inside tx, the commit that
// records its start: after a crash it either runs again or is known to
// have started. Engines pass it as agent.Input.OnBegin.
func (run *Run) Begin(tx *store.Tx) error {
	if run.accepted != nil {
		return run.beginAtOnce(tx)
	}
	if run.seq == 0 {
		return nil
	}
	run.began.Store(true)
	return run.r.q.Take(tx, run.seq)
}

// Input is the run as the agent's input, with Begin as its OnBegin.
func (run *Run) Input() agent.Input {
	q := &run.Req
	return agent.Input{
		RunID: q.ID, ThreadID: q.ThreadID, ChatKey: q.ChatKey, UserID: q.User,
		Text: q.Text, Model: q.Model, Skill: q.Skill, MessageID: q.MessageID,
		OnBegin: run.Begin,
	}
}

// Info is a run's state.
type Info struct {
	ID, ThreadID, Origin string
	Status               string
	Error                string
	Created              time.Time
	Started, Ended       time.Time
	RolledBack           bool
}

// Info returns the run's state now.
func (run *Run) Info() Info {
	run.mu.Lock()
	defer run.mu.Unlock()
	return Info{ID: run.Req.ID, ThreadID: run.Req.ThreadID, Origin: run.Req.Origin,
		Status: run.status, Error: run.errText, Created: run.Req.Created,
		Started: run.started, Ended: run.ended, RolledBack: run.rolled}
}

// Events follows the run's journal from after seq (0: from the start)
// until the run's Ended event, or ctx ends. Records the journal no longer
// keeps are skipped (their Seq shows the gap).
func (run *Run) Events(ctx context.Context, after int) func(yield func(Record) bool) {
	return follow(run.j, ctx, after)
}

// interrupt cancels the run with cause, now if it runs, else as soon as it
// starts.
func (run *Run) interrupt(cause error) {
	run.mu.Lock()
	cancel := run.cancel
	if cancel == nil && run.stop == nil {
		run.stop = cause
	}
	run.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// ErrCancelled is the cause of a run cancelled through Cancel.
var ErrCancelled = errors.New("runner: run cancelled")

// execute runs one run through its engine, journaling its events, and
// returns its outcome. A run cancelled for a rollback is undone before the
// next one starts. It returns "" when the run had already finished
// (cancelled while it waited).
func (r *Runner) execute(run *Run) (status, errText string) {
	ctx, cancel := context.WithCancelCause(r.base)
	defer cancel(nil)
	snap, err := r.snapshot(run)
	run.mu.Lock()
	if run.done {
		run.mu.Unlock()
		return "", ""
	}
	run.cancel, run.snap = cancel, snap
	run.status, run.started = StatusRunning, r.opts.Now()
	if run.stop != nil {
		cancel(run.stop)
	}
	run.mu.Unlock()
	run.emit(event.Began{})
	if err != nil {
		r.drop(run.seq)
		r.log.Error("runner: reading the thread before a run", "thread", run.Req.ThreadID, "err", err)
		run.emit(event.Error{Text: "The thread could not be read; try again.", Err: err})
		return StatusError, err.Error()
	}
	status, errText = StatusError, "the run ended without an answer"
	for ev := range run.h.Engine.Run(ctx, run) {
		switch ev := ev.(type) {
		case event.Answer:
			status, errText = StatusSuccess, ""
		case event.Error:
			status, errText = StatusError, ev.Text
		case event.Stopped:
			status, errText = StatusInterrupted, stopText(ev.Err, context.Cause(ctx))
		}
		if event.Final(ev) {
			r.answered(run)
		}
		run.emit(ev)
	}
	if !run.began.Load() {
		r.drop(run.seq) // it never began (refused): not again after a restart
	}
	return r.undo(run, status, errText)
}

// snapshot saves the run's thread when its origin's runs can be undone.
func (r *Runner) snapshot(run *Run) (*store.ThreadSnapshot, error) {
	if !run.h.Undoable {
		return nil, nil
	}
	var snap *store.ThreadSnapshot
	err := r.opts.Store.View(func(tx *store.Tx) error {
		var err error
		snap, err = tx.SnapshotThread(run.Req.ThreadID)
		return err
	})
	return snap, err
}

// undo puts a run stopped for a rollback's sake back as it was before it.
func (r *Runner) undo(run *Run, status, errText string) (string, string) {
	run.mu.Lock()
	rollback, snap := run.rollback, run.snap
	run.mu.Unlock()
	if !rollback {
		return status, errText
	}
	err := errors.New("no snapshot was taken")
	if snap != nil {
		err = r.opts.Store.Update(func(tx *store.Tx) error { return tx.RestoreThread(snap) })
	}
	if r.opts.Forget != nil {
		r.opts.Forget(run.Req.ThreadID)
	}
	if err != nil {
		r.log.Error("runner: rolling back a run", "thread", run.Req.ThreadID, "run", run.Req.ID, "err", err)
		run.emit(event.RolledBack{Err: err})
		return status, errText
	}
	run.mu.Lock()
	run.rolled = true
	run.mu.Unlock()
	run.emit(event.RolledBack{})
	return StatusInterrupted, "rolled back by a later run (multitask_strategy rollback)"
}

func stopText(evErr, cause error) string {
	switch {
	case errors.Is(cause, ErrCancelled):
		return "cancelled"
	case errors.Is(evErr, agent.ErrStopped), errors.Is(cause, agent.ErrStopped):
		return "interrupted by a later run"
	}
	return "interrupted: deerflow is shutting down"
}

// finish ends the run with status (once): its journal gets Ended.
func (run *Run) finish(status, errText string) {
	run.settle(status)
	run.mu.Lock()
	if run.done {
		run.mu.Unlock()
		return
	}
	run.status, run.errText, run.ended, run.done = status, errText, run.r.opts.Now(), true
	run.mu.Unlock()
	run.emit(event.Ended{Status: status, Error: errText})
	run.j.Close()
}

// emit journals ev and gives it to the origin's Observe.
func (run *Run) emit(ev event.Event) {
	run.j.Add(ev)
	if run.h.Observe != nil {
		run.h.Observe(run, ev)
	}
}

// Read returns the journaled records after seq, whether the run has ended
// (no more will come once these are read), and a channel closed when
// there is more: for a front end that waits on other things too (a
// stream's heartbeat).
func (run *Run) Read(after int) ([]Record, bool, <-chan struct{}) { return run.j.Read(after) }
