package sandbox

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/deerflow/deerflow/sandbox/files"
)

// maxText bounds what ReadText returns.
const maxText = 10 << 20

// UserDataDir is the host directory shown at /mnt/user-data to thread id,
// with its workspace, uploads and outputs made if needed. It is for
// programs started in the thread's sandbox (bwrap.IsolateOptions.WorkDir).
func (m *Manager) UserDataDir(id string) (string, error) {
	t, err := m.thread(id)
	if err != nil {
		return "", err
	}
	return t.userData, nil
}

// WorkspaceDir is the host directory shown at /mnt/user-data/workspace to
// thread id: the working directory of a program that runs on the host
// because bubblewrap is not available.
func (m *Manager) WorkspaceDir(id string) (string, error) {
	ud, err := m.UserDataDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(ud, "workspace"), nil
}

// ReadText reads the text file at virtual path p (absolute, under the
// thread's trees) for a program acting in thread id, such as an external
// agent. It resolves p exactly as read_file does, opens it through the
// tree's os.Root, and reads at most 10 MiB. Errors name virtual paths only.
func (m *Manager) ReadText(id, p string) (string, error) {
	t, err := m.thread(id)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(strings.TrimSpace(p), "/") {
		return "", errors.New("the path must be absolute")
	}
	l, err := t.at(p)
	if err != nil {
		return "", t.hideErr(err)
	}
	f, _, err := l.OpenFile()
	if err != nil {
		return "", t.hideErr(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxText+1))
	switch {
	case err != nil:
		return "", t.hideErr(l.Fail(err))
	case len(b) > maxText:
		return "", fmt.Errorf("%s is larger than %d MiB", l.Path, maxText>>20)
	}
	return string(b), nil
}

// WriteText writes content to the file at virtual path p (absolute, in a
// writable tree of thread id), as write_file does: missing parent
// directories are made, read-only trees refused, and the file is written
// through its tree's os.Root under the same lock as the file tools.
func (m *Manager) WriteText(id, p, content string) error {
	t, err := m.thread(id)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(strings.TrimSpace(p), "/") {
		return errors.New("the path must be absolute")
	}
	l, err := t.writableAt(p)
	if err != nil {
		return t.hideErr(err)
	}
	_, err = files.Write(&m.locks, l, content, false)
	return t.hideErr(err)
}
