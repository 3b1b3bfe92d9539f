package agent

import "sync"

// RunScope is one run as its model wrappers see it: their per-run memory
// and the run's stream. The run owns it and hands it to every wrapper
// explicitly; nothing about the run travels in the context.
type RunScope struct {
	reset func() // tells the run's watchers to discard streamed text

	mu    sync.Mutex
	state map[string]any // middlewares' per-run values (RunValue)
}

// ResetText tells the run's watchers to discard the text streamed since
// the last tool round: the model call is about to be retried. On a nil
// RunScope (a call outside a run) it does nothing.
func (s *RunScope) ResetText() {
	if s != nil && s.reset != nil {
		s.reset()
	}
}

// RunValue returns the value kept under key for the run of s, creating it
// with init on first use: the per-run memory of a middleware. With a nil
// RunScope (a call outside a run) it returns a fresh value.
func RunValue[T any](s *RunScope, key string, init func() *T) *T {
	if s == nil {
		return init()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.state[key].(*T); ok {
		return v
	}
	if s.state == nil {
		s.state = map[string]any{}
	}
	v := init()
	s.state[key] = v
	return v
}
