// Package dbfile opens deerflow's database file safely: it checks the
// file's layout and the disk's free space before bbolt maps the file,
// contains the panics and memory faults bbolt raises on a damaged file, and
// names the errors that say the file is not ours, is in use, or lies on a
// full disk. It is shared by package store and store/doctor; nothing else
// may import it (store re-exports its errors).
package dbfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/deerflow/deerflow/store/boltfile"
)

var (
	// ErrLocked is store.ErrLocked.
	ErrLocked = errors.New("store: database is locked")
	// ErrCorrupt is store.ErrCorrupt.
	ErrCorrupt = errors.New("store: not a deerflow database")
	// ErrNoSpace is store.ErrNoSpace.
	ErrNoSpace = errors.New("store: no space left")
)

// OpenError carries an exact message while still matching a sentinel (and
// the underlying cause) with errors.Is.
type OpenError struct {
	Msg  string
	Kind error
	Err  error
}

func (e *OpenError) Error() string { return e.Msg }
func (e *OpenError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Corrupt says that the file at path is not a deerflow database, and why.
func Corrupt(path, why string) error {
	return &OpenError{Msg: fmt.Sprintf("store: %s is not a deerflow database (%s)", path, why), Kind: ErrCorrupt}
}

// Locked says that another deerflow holds the file at path; err is
// bbolt's timeout.
func Locked(path string, err error) error {
	return &OpenError{Msg: "another deerflow is using " + path, Kind: ErrLocked, Err: err}
}

// Guard runs fn, turning a panic or memory fault (bbolt reading a damaged
// file) into a corrupt-file error.
func Guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = Corrupt(path, fmt.Sprintf("reading it panicked: %v", r))
		}
	}()
	return fn()
}

// IsDamage, called by a deferred function that recovered r, reports whether
// the panic marks a damaged page: raised in bbolt's code, or a memory fault
// at an address (reading past the mapped file; SetPanicOnFault makes it a
// panic). A panic in a caller's function is a bug to pass on.
func IsDamage(r any) bool {
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		return true
	}
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	panicking := false
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			panicking = true
		} else if panicking {
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// Check reports whether path, if it exists and is not empty, looks like a
// whole bbolt file: a valid meta page whose pages all lie inside the file.
// It checks the free page list only if freelist is set (a read-only bbolt
// never reads it). It only reads.
func Check(path string, freelist bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if fi.Size() == 0 {
		return nil // bbolt initializes an empty file
	}
	if why := boltfile.Check(f, fi.Size(), freelist); why != "" {
		return Corrupt(path, why)
	}
	return nil
}

// CheckSpace reports a disk under path's directory with less than min
// bytes free as ErrNoSpace.
func CheckSpace(path string, min uint64) error {
	dir := filepath.Dir(path)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // unknown: the writes will tell
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	if free < min {
		return fmt.Errorf("%w on the disk holding %s (%d KiB free)", ErrNoSpace, dir, free>>10)
	}
	return nil
}
