package sandbox

import (
	"os/exec"

	"github.com/deerflow/deerflow/sandbox/bwrap"
)

// Isolate returns cmd prepared to run inside bubblewrap, in a sandbox
// like bash's (see bwrap.Jail.Isolate). ok is false when bubblewrap is
// not available; nothing is then prepared.
func (m *Manager) Isolate(cmd *exec.Cmd, o bwrap.IsolateOptions) (iso *bwrap.Isolated, ok bool, err error) {
	r := m.runner()
	if r.mode != bashBwrap {
		return nil, false, nil
	}
	if iso, err = r.jail.Isolate(cmd, o); err != nil {
		return nil, false, err
	}
	return iso, true, nil
}
