// Package files does the work of the sandbox's file tools (ls, read_file,
// write_file, str_replace, glob, grep) on locations already resolved
// inside one thread's trees. Every file is opened through its tree's
// os.Root, so no symbolic link leads out, and errors name virtual paths
// only.
//
// It imports only sandbox/truncate of ours; package sandbox resolves the
// model's paths and decides which trees may be written.
package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Loc is a resolved virtual path: a file or directory inside one tree the
// sandbox exposes, a virtual directory backed by a host directory.
type Loc struct {
	Virtual string // the tree's virtual directory
	Host    string // the tree's host directory
	Rel     string // slash-separated path inside Host, "." for its top
	Path    string // the cleaned virtual path
}

// HostPath is where l is on the host.
func (l Loc) HostPath() string { return filepath.Join(l.Host, filepath.FromSlash(l.Rel)) }

// Open opens the os.Root of l's tree. The caller closes it.
func (l Loc) Open() (*os.Root, error) {
	r, err := os.OpenRoot(l.Host)
	if err != nil {
		return nil, fmt.Errorf("%s is not available right now", l.Virtual)
	}
	return r, nil
}

// Child is the location of a name inside directory l.
func (l Loc) Child(name string) Loc {
	c := l
	c.Rel = path.Join(l.Rel, name)
	c.Path = path.Join(l.Path, name)
	return c
}

// Fail turns a filesystem error into a sentence for the model, naming only
// the virtual path.
func (l Loc) Fail(err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case isEscape(err):
		return fmt.Errorf("%s leads outside the sandbox through a symbolic link; only files inside %s and the other sandbox directories can be used", l.Path, l.Virtual)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", l.Path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied for %s", l.Path)
	case errno == syscall.ENAMETOOLONG:
		return fmt.Errorf("a name in %s is too long", l.Path)
	case errno == syscall.ENOTDIR:
		return fmt.Errorf("part of %s is not a directory", l.Path)
	case errno == syscall.EISDIR:
		return fmt.Errorf("%s is a directory", l.Path)
	case errno == syscall.ELOOP:
		return fmt.Errorf("%s has too many levels of symbolic links", l.Path)
	case errno == syscall.ENOSPC:
		return errors.New("no space left on the sandbox disk")
	case errno == syscall.ENXIO: // a FIFO without reader, a device
		return fmt.Errorf("%s is not a regular file", l.Path)
	case errno == syscall.EROFS:
		return fmt.Errorf("%s is read-only", l.Path)
	case errno != 0:
		return fmt.Errorf("%s: %s", l.Path, errno.Error())
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s", l.Path, pe.Err.Error())
	}
	return fmt.Errorf("%s: the operation failed", l.Path)
}

// isEscape reports os.Root's refusal to leave the root (its sentinel is
// not exported).
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// OpenRead opens a file for reading without blocking on a FIFO the
// sandbox may have put in its place; callers check that it is regular.
func OpenRead(r *os.Root, rel string) (*os.File, error) {
	return r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// OpenFile opens the regular file at l for reading (through its tree's
// os.Root, so no link leads out). The caller closes the file.
func (l Loc) OpenFile() (*os.File, os.FileInfo, error) {
	r, err := l.Open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	f, err := OpenRead(r, l.Rel)
	if err != nil {
		return nil, nil, l.Fail(err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		err = l.Fail(err)
	case st.IsDir():
		err = fmt.Errorf("%s is a directory; use ls to see what it holds", l.Path)
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", l.Path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// Locks serialises read-modify-write of one file across tool calls.
// Entries live only while someone holds or waits for them. The zero value
// is ready to use.
type Locks struct {
	mu sync.Mutex
	m  map[string]*fileLock
}

type fileLock struct {
	mu    sync.Mutex
	users int
}

// Lock locks key and returns its unlock func.
func (fl *Locks) Lock(key string) (unlock func()) {
	fl.mu.Lock()
	if fl.m == nil {
		fl.m = map[string]*fileLock{}
	}
	e := fl.m[key]
	if e == nil {
		e = &fileLock{}
		fl.m[key] = e
	}
	e.users++
	fl.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		fl.mu.Lock()
		if e.users--; e.users == 0 {
			delete(fl.m, key)
		}
		fl.mu.Unlock()
	}
}
