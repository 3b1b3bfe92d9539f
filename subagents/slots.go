package subagents

import (
	"context"
	"sync"
)

// slots is a counting semaphore whose waiters are served first come, first
// served: the cap on subagents running at once across all conversations.
type slots struct {
	mu      sync.Mutex
	free    int
	waiters []chan struct{} // closed when given a slot
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire takes a slot, waiting in line when none is free. wait, when the
// task has to queue, is told how many tasks are in line in front of it.
// It fails only when ctx ends first.
func (s *slots) acquire(ctx context.Context, wait func(ahead int)) error {
	s.mu.Lock()
	if s.free > 0 && len(s.waiters) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	ahead := len(s.waiters) - 1
	s.mu.Unlock()
	if wait != nil {
		wait(ahead)
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for i, w := range s.waiters {
		if w == ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			s.mu.Unlock()
			return context.Cause(ctx)
		}
	}
	s.mu.Unlock()
	// The slot was handed over just as ctx ended: pass it on.
	s.release()
	return context.Cause(ctx)
}

// release gives a slot back, to the longest waiter if there is one.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) > 0 {
		close(s.waiters[0])
		s.waiters = s.waiters[1:]
		return
	}
	s.free++
}
