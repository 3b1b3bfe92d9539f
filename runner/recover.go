package runner

import (
	"strings"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// Recover is the one recovery pass after a restart, for every origin: the
// runs a previous process left running are marked interrupted, with their
// unfinished subagent tasks, and their origin records (in the same
// commit) what its people will be told; then the runs it had accepted but
// not begun are queued again, in the order they came, with their ids.
// Call it once, after every Handler is registered and before anything is
// submitted (a run of this process found running would be taken for one a
// crash cut short); the runs it queues start with Start.
func (r *Runner) Recover() (resumed, interrupted int, err error) {
	if interrupted, err = r.interrupted(); err != nil {
		return 0, 0, err
	}
	seqs, reqs, err := r.q.Pending()
	if err != nil {
		return 0, interrupted, err
	}
	for i, req := range reqs {
		if r.resume(seqs[i], req) {
			resumed++
		}
	}
	if resumed > 0 {
		r.log.Info("resuming runs accepted before the restart", "runs", resumed)
	}
	return resumed, interrupted, nil
}

// resume queues one stored run again; false when it is dropped (unreadable,
// or its origin no longer wants it) or left for a later process (its
// origin is not served now).
func (r *Runner) resume(seq uint64, req *Request) bool {
	if req == nil {
		r.log.Error("runner: a stored run is unreadable; dropping it", "seq", seq)
		r.drop(seq)
		return false
	}
	h, ok := r.handler(req.Origin)
	if !ok {
		r.log.Warn("runner: a stored run's origin is not served now; keeping it for later", "run", req.ID, "origin", req.Origin)
		return false
	}
	if h.Resumable != nil && !h.Resumable(req) {
		r.drop(seq)
		return false
	}
	run := r.newRun(*req, h)
	run.seq = seq
	r.mu.Lock()
	if _, dup := r.runs[req.ID]; dup || r.closed {
		r.mu.Unlock()
		return false
	}
	l := r.laneLocked(req.Conv)
	r.mu.Unlock()
	if _, err := r.enqueue(l, run, Enqueue, false); err != nil {
		return false
	}
	r.start(l)
	return true
}

// interrupted marks the runs found running as interrupted, in one commit
// with what each origin records about them.
func (r *Runner) interrupted() (int, error) {
	if running, err := r.anyRunning(); err != nil || !running {
		return 0, err // after a clean stop: no commit (two fsyncs) on the way to starting
	}
	now := r.opts.Now()
	n := 0
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		n = 0
		runs, err := tx.RunsWithStatus(store.RunRunning)
		if err != nil {
			return err
		}
		for _, rec := range runs {
			rec.Status, rec.Ended = store.RunInterrupted, now
			if err := tx.PutRun(rec); err != nil {
				return err
			}
			r.log.Warn("run was interrupted by a restart", "run", rec.ID, "thread", rec.ThreadID)
			tasks, err := stopTasks(tx, rec, now)
			if err != nil {
				return err
			}
			for _, t := range tasks {
				r.log.Warn("subagent task was interrupted by a restart", "task", t.ID, "run", rec.ID, "description", t.Description)
			}
			if h, ok := r.handler(originOf(rec)); ok && h.Interrupted != nil {
				if err := h.Interrupted(tx, rec, tasks); err != nil {
					return err
				}
			}
			n++
		}
		return nil
	})
	return n, err
}

// anyRunning reports whether a run is recorded as running.
func (r *Runner) anyRunning() (bool, error) {
	var running bool
	err := r.opts.Store.View(func(tx *store.Tx) error {
		runs, err := tx.RunsWithStatus(store.RunRunning)
		running = len(runs) > 0
		return err
	})
	return running, err
}

// stopTasks marks a run's unfinished subagent tasks interrupted.
func stopTasks(tx *store.Tx, rec *store.Run, now time.Time) ([]*store.Task, error) {
	tasks, err := tx.Tasks(rec.ID)
	if err != nil {
		return nil, err
	}
	var stopped []*store.Task
	for _, t := range tasks {
		if t.Status != event.TaskPending && t.Status != event.TaskRunning {
			continue
		}
		if err := tx.UpdateTask(rec.ID, t.ID, func(t *store.Task) { t.Status, t.Ended = event.TaskInterrupted, now }); err != nil {
			return nil, err
		}
		t.Status, t.Ended = event.TaskInterrupted, now
		stopped = append(stopped, t)
	}
	return stopped, nil
}

// originOf is the origin of a run record: scheduled runs' ids begin with
// ScheduledRunPrefix, API threads' conversations are "api:<thread>",
// every other one is a chat's.
func originOf(rec *store.Run) string {
	if strings.HasPrefix(rec.ID, ScheduledRunPrefix) {
		return OriginSchedule
	}
	if strings.HasPrefix(rec.ChatKey, "api:") {
		return OriginAPI
	}
	return OriginChat
}
