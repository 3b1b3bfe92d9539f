package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/event"
)

func readOutput(t *testing.T, f event.File) string {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveOutput(t *testing.T) {
	m := newManager(t, Options{})
	// A new thread: its outputs do not exist yet.
	f, err := m.SaveOutput("t", "report.md", []byte("# Report\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "report.md" || f.Path != "/mnt/user-data/outputs/report.md" || f.Size != 9 {
		t.Errorf("file = %+v", f)
	}
	if got := readOutput(t, f); got != "# Report\n" {
		t.Errorf("read %q", got)
	}

	f, err = m.SaveOutput("t", "report.md", []byte("v2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := readOutput(t, f); got != "v2" || f.Size != 2 {
		t.Errorf("after replacing: %q, size %d", got, f.Size)
	}
	out := hostDir(t, m, "t", "outputs")
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("outputs holds %d entries, want only report.md: %v", len(entries), entries)
	}
}

func TestSaveOutputReplacesSymlink(t *testing.T) {
	m := newManager(t, Options{})
	outside := filepath.Join(t.TempDir(), "victim.txt")
	writeHost(t, outside, "untouched")
	out := hostDir(t, m, "t", "outputs")
	if err := os.Symlink(outside, filepath.Join(out, "report.md")); err != nil {
		t.Fatal(err)
	}
	f, err := m.SaveOutput("t", "report.md", []byte("report"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "untouched" {
		t.Errorf("wrote through the link: the outside file holds %q", b)
	}
	st, err := os.Lstat(filepath.Join(out, "report.md"))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("report.md is not a regular file: %v, %v", st, err)
	}
	if got := readOutput(t, f); got != "report" {
		t.Errorf("read %q", got)
	}
}

func TestSaveOutputRefusesLinkedOutputs(t *testing.T) {
	m := newManager(t, Options{})
	out := hostDir(t, m, "t", "outputs")
	elsewhere := t.TempDir()
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, out); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SaveOutput("t", "report.md", []byte("x")); err == nil {
		t.Error("saved through an outputs directory that is a link")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote outside: %v", entries)
	}
}

func TestSaveOutputBadNames(t *testing.T) {
	m := newManager(t, Options{})
	for _, name := range []string{"", ".", "..", "a/b", "/etc/passwd", "../x", "a\x00b"} {
		if _, err := m.SaveOutput("t", name, []byte("x")); err == nil || !strings.Contains(err.Error(), "not a plain file name") {
			t.Errorf("%q: got %v", name, err)
		}
	}
	if _, err := m.SaveOutput("../t", "report.md", []byte("x")); err == nil {
		t.Error("saved for an invalid thread id")
	}
	// A directory of that name is not replaced.
	writeHost(t, filepath.Join(hostDir(t, m, "t", "outputs"), "dir", "keep.txt"), "kept")
	if _, err := m.SaveOutput("t", "dir", []byte("x")); err == nil {
		t.Error("replaced a directory")
	}
	entries, _ := os.ReadDir(hostDir(t, m, "t", "outputs"))
	if len(entries) != 1 || entries[0].Name() != "dir" {
		t.Errorf("outputs = %v, want only dir (no temporary file left)", entries)
	}
}
