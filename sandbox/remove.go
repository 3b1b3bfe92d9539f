package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveThread deletes everything thread id has on disk: its workspace,
// uploads and outputs (<data_dir>/threads/<id>/), for a thread that is
// deleted. No run may be active in it. A thread with nothing on disk is
// not an error. Links the sandbox left inside are removed, never followed.
func (m *Manager) RemoveThread(id string) error {
	if !validThreadID(id) {
		return fmt.Errorf("sandbox: remove thread: invalid thread id %q", id)
	}
	dir := filepath.Join(m.threadsDir, id)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// A command in the sandbox may have left directories without write
	// permission, which would stop RemoveAll: give them back first.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sandbox: remove thread %s: %w", id, err)
	}
	return nil
}
