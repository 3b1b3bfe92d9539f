package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/deerflow/deerflow/store/boltfile"
)

// checkFile reports whether path, if it exists and is not empty, looks like
// a whole bbolt file: a valid meta page whose pages all lie inside the file.
// It only reads.
func checkFile(path string) error { return checkFileLayout(path, true) }

// checkFileLayout is checkFile, checking the freelist only if freelist is
// set: a read-only bbolt never reads it.
func checkFileLayout(path string, freelist bool) error {
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
		return corrupt(path, why)
	}
	return nil
}
