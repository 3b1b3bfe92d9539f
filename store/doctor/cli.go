package doctor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/deerflow/deerflow/store"
)

// Run is `deerflow doctor`: it checks the database at path and prints
// what is damaged; with repair, it then salvages it. It returns the exit
// code: 0 when the database is (now) sound, 1 when it is damaged or could
// not be checked.
func Run(path string, repair bool, stdout, stderr io.Writer) int {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "No database at %s: nothing to check.\n", path)
		return 0
	}
	r, err := Check(path)
	if errors.Is(err, store.ErrLocked) {
		if repair {
			fmt.Fprintf(stderr, "deerflow doctor: deerflow is running on %s; stop it before --repair\n", path)
			return 1
		}
		fmt.Fprintln(stdout, "deerflow is running: checking a copy taken now.")
		r, err = checkCopy(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "deerflow doctor: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: schema version %d, %d threads with a history.\n", path, r.SchemaVersion, r.Threads)
	if len(r.Problems) == 0 {
		fmt.Fprintln(stdout, "No damage found.")
		return 0
	}
	fmt.Fprintf(stdout, "Damaged (%d):\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintf(stdout, "  %s\n", p)
	}
	if !repair {
		fmt.Fprintln(stdout, "Stop deerflow and run `deerflow doctor --repair` to keep this file as a dated backup and write a new one holding everything still readable.")
		return 1
	}
	return repairDB(path, stdout, stderr)
}

// checkCopy checks a consistent copy of a database in use.
func checkCopy(path string) (*Report, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), "doctor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, store.FileName)
	if err := Backup(path, cp); err != nil {
		return nil, err
	}
	return Check(cp)
}

// repairDB salvages the database at path into a new file, checks it, and
// puts it in place, keeping the old one as path.damaged-<UTC time>.
func repairDB(path string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "deerflow doctor: repair: %v (the database was left as it was)\n", err)
		return 1
	}
	tmp := path + ".repair"
	os.Remove(tmp) // a previous attempt's
	lost, err := Salvage(path, tmp)
	if err != nil {
		return fail(err)
	}
	r, err := Check(tmp)
	if err == nil && len(r.Problems) > 0 {
		err = fmt.Errorf("the salvaged copy still has damage: %s", r.Problems[0])
	}
	if err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	old := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
	if err := os.Rename(path, old); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		fmt.Fprintf(stderr, "deerflow doctor: repair: %v; the damaged database is at %s, the salvaged one at %s\n", err, old, tmp)
		return 1
	}
	fmt.Fprintf(stdout, "Repaired. The damaged file is kept as %s.\n", old)
	if len(lost) == 0 {
		fmt.Fprintln(stdout, "Nothing was lost.")
	} else {
		fmt.Fprintf(stdout, "Lost (%d):\n", len(lost))
		for _, p := range lost {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	return 0
}

// BackupCLI is `deerflow backup`: it writes a consistent copy of the
// database at path to out, while deerflow runs or not, and checks the
// copy.
func BackupCLI(path, out string, stdout, stderr io.Writer) int {
	if err := Backup(path, out); err != nil {
		fmt.Fprintf(stderr, "deerflow backup: %v\n", err)
		return 1
	}
	r, err := Check(out)
	if err != nil {
		fmt.Fprintf(stderr, "deerflow backup: wrote %s, but it cannot be read back: %v\n", out, err)
		return 1
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (schema version %d, %d threads with a history).\n", path, out, r.SchemaVersion, r.Threads)
	if len(r.Problems) > 0 {
		fmt.Fprintf(stdout, "The database (and so the copy) is damaged; see `deerflow doctor`:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		return 1
	}
	return 0
}
