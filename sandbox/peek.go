package sandbox

import (
	"context"

	"github.com/deerflow/deerflow/sandbox/files"
)

// Peek describes the file at path (as a tool call of ctx's thread would
// name it) as it is now: whether it exists, its size, first lines and a
// sum of its content. The read-before-write guard compares the sums it
// saw when the run read or wrote the file with the one now.
func (m *Manager) Peek(ctx context.Context, path string) (files.Snapshot, error) {
	t, err := m.threadFrom(ctx)
	if err != nil {
		return files.Snapshot{}, err
	}
	l, err := t.resolve(path)
	if err != nil {
		return files.Snapshot{}, t.hideErr(err)
	}
	s, err := files.Peek(l.files())
	s.Head = t.hide(s.Head)
	return s, t.hideErr(err)
}
