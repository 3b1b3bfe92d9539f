package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPeek(t *testing.T) {
	dir := t.TempDir()
	loc := func(rel string) Loc { return Loc{Virtual: "/w", Host: dir, Rel: rel, Path: "/w/" + rel} }
	if s, err := Peek(loc("missing.txt")); err != nil || s.Exists {
		t.Fatalf("missing file: %+v, %v", s, err)
	}
	if s, err := Peek(loc("missing/under.txt")); err != nil || s.Exists {
		t.Fatalf("missing directory: %+v, %v", s, err)
	}
	body := strings.Repeat("a line\n", 30) + "no newline"
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte(body), 0o644)
	s, err := Peek(loc("a.txt"))
	if err != nil || !s.Exists || s.Size != int64(len(body)) || s.Lines != 31 || s.Head != strings.Repeat("a line\n", peekLines) || s.Path != "/w/a.txt" {
		t.Fatalf("%+v, %v", s, err)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte(body+"!"), 0o644)
	if s2, _ := Peek(loc("a.txt")); s2.Sum == s.Sum {
		t.Error("the sum did not change with the content")
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if _, err := Peek(loc("d")); err == nil {
		t.Error("a directory peeked as a file")
	}
}
