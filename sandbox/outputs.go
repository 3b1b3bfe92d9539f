package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/deerflow/deerflow/event"
)

// SaveOutput writes data as name (a base name) in thread id's outputs,
// replacing any file of that name, and returns it ready to deliver (as
// Reopen would). The data goes to a temporary file first, renamed over
// name, so a reader never sees half of it and a symlink at name is
// replaced, not written through.
func (m *Manager) SaveOutput(id, name string, data []byte) (event.File, error) {
	if !plainName(name) {
		return event.File{}, fmt.Errorf("sandbox: save output: %q is not a plain file name", name)
	}
	t, err := m.thread(id)
	if err != nil {
		return event.File{}, fmt.Errorf("sandbox: save output: invalid thread id %q", id)
	}
	defer m.locks.Lock(filepath.Join(t.userData, "outputs", name))()
	root, err := openSub(t.userData, "outputs")
	if err != nil {
		return event.File{}, fmt.Errorf("sandbox: save output: %w", err)
	}
	defer root.Close()
	f, tmp, err := tempFile(root)
	if err != nil {
		return event.File{}, fmt.Errorf("sandbox: save output %q: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return event.File{}, fmt.Errorf("sandbox: save output %q: %w", name, err)
	}
	files, err := t.present([]string{Outputs + "/" + name})
	if err != nil {
		return event.File{}, fmt.Errorf("sandbox: save output %q: %w", name, err)
	}
	p := files[0]
	return event.File{Name: p.Name, Path: p.VirtualPath, Size: p.Size,
		Open: func() (io.ReadCloser, error) { return p.Open() }}, nil
}

// plainName reports whether name is a file name with no directory in it.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// tempFile creates a new, hidden file in root for SaveOutput.
func tempFile(root *os.Root) (*os.File, string, error) {
	for range 100 {
		name := fmt.Sprintf(".deerflow-save-%016x.tmp", rand.Uint64())
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("could not create a temporary file")
}
