package event

// The runner's own events, around the agent's: every run's journal starts
// with Began and ends with Ended, whatever started it.

// Began: the run left its queue and starts.
type Began struct{}

// RolledBack: the run was stopped by a later run (multitask strategy
// rollback) and its thread put back as it was before it; Err is set when
// the thread could not be restored.
type RolledBack struct{ Err error }

// Ended is the last event of every run: Status is one of the runner's
// statuses (success, error, interrupted), Error says why when not success.
type Ended struct {
	Status string
	Error  string
}

func (Began) event()      {}
func (RolledBack) event() {}
func (Ended) event()      {}
