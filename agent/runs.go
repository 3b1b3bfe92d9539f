package agent

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

// activeRun is the run manager's record of a running run.
type activeRun struct {
	id      string
	model   string
	started time.Time
	cancel  context.CancelCauseFunc
	done    chan struct{}
}

// RunInfo describes an active run.
type RunInfo struct {
	ID      string
	Model   string
	Started time.Time
}

func (a *Agent) acquire(threadID string, r *activeRun) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, busy := a.active[threadID]; busy {
		return false
	}
	a.active[threadID] = r
	return true
}

func (a *Agent) release(threadID string, r *activeRun) {
	a.mu.Lock()
	if a.active[threadID] == r {
		delete(a.active, threadID)
	}
	a.mu.Unlock()
	close(r.done)
}

// Active returns the thread's running run, if any.
func (a *Agent) Active(threadID string) (RunInfo, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.active[threadID]
	if !ok {
		return RunInfo{}, false
	}
	return RunInfo{ID: r.id, Model: r.model, Started: r.started}, true
}

// Stop cancels the thread's running run: its model stream and tool calls
// stop at once. It reports whether a run was active. The run's events end
// with event.Stopped.
func (a *Agent) Stop(threadID string) bool {
	a.mu.Lock()
	r, ok := a.active[threadID]
	a.mu.Unlock()
	if ok {
		r.cancel(ErrStopped)
	}
	return ok
}

// StopAll cancels every running run and the background work of finished
// ones (titles) with cause, and waits until they have persisted their
// state and ended, or ctx is done.
func (a *Agent) StopAll(ctx context.Context, cause error) {
	a.mu.Lock()
	a.stopping = true
	a.bgStop(cause)
	runs := make([]*activeRun, 0, len(a.active))
	for _, r := range a.active {
		runs = append(runs, r)
	}
	a.mu.Unlock()
	for _, r := range runs {
		r.cancel(cause)
	}
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return
		}
	}
	bg := make(chan struct{})
	go func() { a.bg.Wait(); close(bg) }()
	select {
	case <-bg:
	case <-ctx.Done():
	}
}

// Running returns the number of active runs.
func (a *Agent) Running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.active)
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a new unique id that sorts by creation time, with prefix.
func NewID(prefix string) string {
	var b [15]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	rand.Read(b[6:])
	var sb strings.Builder
	sb.WriteString(prefix)
	sb.WriteString(idEncoding.EncodeToString(b[:]))
	return sb.String()
}

// Hold makes work other than Run (a research, say) the thread's active
// run, so that Active, Stop and StopAll treat it as one: the returned
// context is cancelled by Stop (cause ErrStopped) and by StopAll. Call
// release once the work has ended and recorded its state. ok is false,
// and nothing is held, when the thread already has an active run.
func (a *Agent) Hold(ctx context.Context, threadID, runID, model string) (_ context.Context, release func(), ok bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &activeRun{id: runID, model: model, started: a.opts.Now(), cancel: cancel, done: make(chan struct{})}
	if !a.acquire(threadID, r) {
		cancel(nil)
		return nil, nil, false
	}
	return ctx, func() {
		cancel(nil)
		a.release(threadID, r)
	}, true
}

// ForgetHistory drops the thread's cached history, for a caller that
// appended messages to the thread in the store itself.
func (a *Agent) ForgetHistory(threadID string) { a.history.Forget(threadID) }

// Forget drops what the agent remembers of a thread's messages. Call it
// after changing a thread's messages outside a run.
func (a *Agent) Forget(threadID string) { a.history.Forget(threadID) }
