package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveThread(t *testing.T) {
	m := newManager(t, Options{})
	outside := t.TempDir()
	writeHost(t, filepath.Join(outside, "keep.txt"), "keep")
	for _, d := range []string{"workspace", "uploads", "outputs"} {
		writeHost(t, filepath.Join(hostDir(t, m, "t1", d), "f.txt"), d)
	}
	locked := filepath.Join(hostDir(t, m, "t1", "workspace"), "locked")
	writeHost(t, filepath.Join(locked, "x"), "x")
	os.Chmod(locked, 0o500)
	os.Symlink(outside, filepath.Join(hostDir(t, m, "t1", "outputs"), "out-link"))
	writeHost(t, filepath.Join(hostDir(t, m, "t2", "outputs"), "other.txt"), "other")

	if err := m.RemoveThread("t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(m.threadsDir, "t1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the thread's directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Errorf("a link was followed out of the thread: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hostDir(t, m, "t2", "outputs"), "other.txt")); err != nil {
		t.Errorf("another thread's file went too: %v", err)
	}
	if err := m.RemoveThread("t1"); err != nil {
		t.Errorf("removing it again: %v", err)
	}
	for _, bad := range []string{"", "..", "../t2", "a/b"} {
		if err := m.RemoveThread(bad); err == nil {
			t.Errorf("RemoveThread(%q) was accepted", bad)
		}
	}
}
