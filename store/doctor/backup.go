package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/deerflow/deerflow/store/boltfile"
)

// backupAttempts bounds Backup's copies: each is retried when a commit
// lands while it reads.
const backupAttempts = 20

// ErrBusy is wrapped by Backup's error when a commit landed during every
// attempt to copy.
var ErrBusy = errors.New("store: the database kept changing")

// Backup writes to out (replaced atomically if it exists) a consistent
// copy of the database at path, also while a deerflow has it open.
//
// A running deerflow holds bbolt's exclusive lock, so the copy is taken
// through the file, without bbolt: bbolt never overwrites a page the newest
// committed meta page can reach, and every commit ends by writing a meta
// page. So the copy reads the two meta pages, then every page up to the
// newest meta's high-water mark, then the meta pages again: unchanged, no
// commit landed meanwhile and the copy is the database as of that commit;
// changed, it tries again.
func Backup(path, out string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	if fi, err := os.Stat(out); err == nil {
		if src, err := f.Stat(); err == nil && os.SameFile(src, fi) {
			return fmt.Errorf("store: backup %s: that is the database itself", out)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+".tmp*")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	for range backupAttempts {
		done, err := copyOnce(f, tmp)
		if err != nil {
			return fmt.Errorf("store: backup %s: %w", path, err)
		}
		if done {
			if err := tmp.Sync(); err != nil {
				return fmt.Errorf("store: %w", err)
			}
			if err := tmp.Close(); err != nil {
				return fmt.Errorf("store: %w", err)
			}
			return os.Rename(tmp.Name(), out)
		}
	}
	return fmt.Errorf("%w during %d attempts to copy %s; try again when it is quieter", ErrBusy, backupAttempts, path)
}

// copyOnce copies f into w and reports whether no commit landed meanwhile.
func copyOnce(f *os.File, w *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	m, why := boltfile.FindMeta(f, fi.Size())
	if why != "" {
		return false, fmt.Errorf("not a readable database: %s", why)
	}
	metas := 2 * int64(m.PageSize)
	before := make([]byte, metas)
	if _, err := f.ReadAt(before, 0); err != nil {
		return false, err
	}
	// The meta as of the pages read, not as of findMeta.
	if m, why = boltfile.FindMeta(bytes.NewReader(before), metas); why != "" {
		return false, fmt.Errorf("not a readable database: %s", why)
	}
	if err := w.Truncate(0); err != nil {
		return false, err
	}
	if _, err := w.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	size := int64(m.PGID) * int64(m.PageSize)
	if n, err := io.Copy(w, io.NewSectionReader(f, 0, size)); err != nil {
		return false, err
	} else if n != size {
		return false, fmt.Errorf("truncated: %d bytes, meta says %d", n, size)
	}
	after := make([]byte, metas)
	if _, err := f.ReadAt(after, 0); err != nil {
		return false, err
	}
	if !bytes.Equal(before, after) {
		return false, nil
	}
	_, err = w.WriteAt(before, 0)
	return err == nil, err
}
