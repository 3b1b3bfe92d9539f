package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/deerflow/deerflow/sandbox/files"
	"github.com/deerflow/deerflow/sandbox/truncate"
)

func TestReadFile(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	writeHost(t, filepath.Join(ws, "five.txt"), "one\ntwo\nthree\nfour\nfive\n")
	writeHost(t, filepath.Join(ws, "nonl.txt"), "a\nb")
	writeHost(t, filepath.Join(ws, "empty.txt"), "")
	writeHost(t, filepath.Join(ws, "bin.dat"), "\x7fELF\x00\x01")
	tests := []struct {
		path       string
		start, end int
		want       string
		wantErr    string
	}{
		{path: "five.txt", want: "one\ntwo\nthree\nfour\nfive\n"},
		{path: "/mnt/user-data/workspace/five.txt", start: 2, end: 3, want: "two\nthree\n"},
		{path: "five.txt", start: 4, want: "four\nfive\n"},
		{path: "five.txt", end: 1, want: "one\n"},
		{path: "five.txt", start: 5, end: 99, want: "five\n"},
		{path: "five.txt", start: 6, wantErr: "has 5 lines; start_line 6 is past its end"},
		{path: "nonl.txt", start: 3, wantErr: "has 2 lines"},
		{path: "nonl.txt", start: 2, want: "b"},
		{path: "five.txt", start: 3, end: 2, wantErr: "end_line (2) is before start_line (3)"},
		{path: "five.txt", start: -1, wantErr: "count from 1"},
		{path: "empty.txt", want: "(the file is empty)"},
		{path: "bin.dat", wantErr: "binary file"},
		{path: "missing.txt", wantErr: "/mnt/user-data/workspace/missing.txt does not exist"},
		{path: "/mnt/user-data/outputs", wantErr: "is a directory; use ls"},
	}
	for _, tt := range tests {
		args := map[string]any{"path": tt.path}
		if tt.start != 0 {
			args["start_line"] = tt.start
		}
		if tt.end != 0 {
			args["end_line"] = tt.end
		}
		got, err := call(t, m, "t", "read_file", args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("read %v: err = %v, want %q", args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("read %v = %q, %v; want %q", args, got, err, tt.want)
		}
	}
}

func TestReadFileTruncation(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	var b strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("é", 40)) // 51 characters, 91 bytes
	}
	writeHost(t, filepath.Join(ws, "big.txt"), b.String())

	got := mustCall(t, m, "t", "read_file", map[string]any{"path": "big.txt"})
	body, note, ok := strings.Cut(got, "\n[output truncated")
	if !ok {
		t.Fatalf("no truncation note in %q", got[len(got)-300:])
	}
	if n := len([]rune(body)); n > files.ReadMaxChars || n < files.ReadMaxChars-100 {
		t.Errorf("kept %d characters", n)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	last := len(lines)
	if !strings.HasPrefix(lines[last-1], fmt.Sprintf("line %04d ", last)) || len([]rune(lines[last-1])) != 50 {
		t.Errorf("cut inside a line: %q", lines[last-1])
	}
	wantNote := fmt.Sprintf("showing lines 1-%d; %s more bytes follow. Continue with start_line=%d.]", last, truncate.Thousands((2000-last)*91), last+1)
	if !strings.Contains(note, wantNote) {
		t.Errorf("note = %q, want %q", note, wantNote)
	}
	// Following the note reads on.
	more := mustCall(t, m, "t", "read_file", map[string]any{"path": "big.txt", "start_line": last + 1, "end_line": last + 2})
	if !strings.HasPrefix(more, fmt.Sprintf("line %04d ", last+1)) || strings.Count(more, "\n") != 2 {
		t.Errorf("continuation = %q", more)
	}
	// A range that is too big says which lines were left out.
	got = mustCall(t, m, "t", "read_file", map[string]any{"path": "big.txt", "start_line": 10, "end_line": 1990})
	if !strings.Contains(got, "were not shown. Continue with start_line=") || !strings.HasPrefix(got, "line 0010 ") {
		t.Errorf("range note: %q", got[len(got)-200:])
	}
	// One line longer than the limit is cut inside it.
	writeHost(t, filepath.Join(ws, "long.txt"), strings.Repeat("x", files.ReadMaxChars+10)+"\nnext\n")
	got = mustCall(t, m, "t", "read_file", map[string]any{"path": "long.txt"})
	if !strings.HasPrefix(got, strings.Repeat("x", files.ReadMaxChars)+"\n[output truncated") || !strings.Contains(got, "line 1 is cut short") || !strings.Contains(got, "start_line=2") {
		t.Errorf("long line: %q", got[files.ReadMaxChars-10:])
	}
}

func TestWriteFile(t *testing.T) {
	m := newManager(t, Options{SkillsDir: t.TempDir(), Mounts: []Mount{{HostPath: t.TempDir(), Path: "/mnt/ro", ReadOnly: true}}})
	got := mustCall(t, m, "t", "write_file", map[string]any{"path": "/mnt/user-data/outputs/deep/er/r.md", "content": "# Title\n"})
	if got != "Wrote 8 bytes to /mnt/user-data/outputs/deep/er/r.md." {
		t.Errorf("write = %q", got)
	}
	got = mustCall(t, m, "t", "write_file", map[string]any{"path": "/mnt/user-data/outputs/deep/er/r.md", "content": "more\n", "append": true})
	if got != "Appended 5 bytes to /mnt/user-data/outputs/deep/er/r.md (now 13 bytes)." {
		t.Errorf("append = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(hostDir(t, m, "t", "outputs"), "deep/er/r.md")); string(b) != "# Title\nmore\n" {
		t.Errorf("file = %q", b)
	}
	mustCall(t, m, "t", "write_file", map[string]any{"path": "/mnt/user-data/outputs/deep/er/r.md", "content": "new"})
	if got := mustCall(t, m, "t", "read_file", map[string]any{"path": "/mnt/user-data/outputs/deep/er/r.md"}); got != "new" {
		t.Errorf("overwrite left %q", got)
	}
	for _, p := range []string{"/mnt/skills/x.md", "/mnt/ro/x"} {
		if _, err := call(t, m, "t", "write_file", map[string]any{"path": p, "content": "x"}); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("write %s: err = %v", p, err)
		}
	}
	if _, err := call(t, m, "t", "write_file", map[string]any{"path": "/mnt/user-data/outputs", "content": "x"}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("write to a directory: err = %v", err)
	}
	if _, err := call(t, m, "t", "write_file", map[string]any{"path": "x.txt"}); err == nil || !strings.Contains(err.Error(), "missing required argument(s): content") {
		t.Errorf("missing content: err = %v", err)
	}
}

func TestStrReplace(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	p := filepath.Join(ws, "code.py")
	writeHost(t, p, "a = 1\nb = 2\na = 1\nprint(a)\na = 1\n")
	replace := func(old, repl string, all bool) (string, error) {
		return call(t, m, "t", "str_replace", map[string]any{"path": "code.py", "old_str": old, "new_str": repl, "replace_all": all})
	}
	if _, err := replace("a = 1", "a = 3", false); err == nil || !strings.Contains(err.Error(), "old_str occurs 3 times in /mnt/user-data/workspace/code.py (at lines 1, 3, 5)") {
		t.Errorf("ambiguous: err = %v", err)
	}
	if _, err := replace("c = 9", "x", false); err == nil || !strings.Contains(err.Error(), "old_str was not found in /mnt/user-data/workspace/code.py") {
		t.Errorf("missing: err = %v", err)
	}
	if _, err := replace("", "x", false); err == nil || !strings.Contains(err.Error(), "old_str is empty") {
		t.Errorf("empty: err = %v", err)
	}
	if got, err := replace("b = 2\na = 1\n", "b = 5\n", false); err != nil || got != "Replaced 1 occurrence in /mnt/user-data/workspace/code.py." {
		t.Errorf("unique = %q, %v", got, err)
	}
	if got, err := replace("a = 1", "a = 7", true); err != nil || got != "Replaced 2 occurrences in /mnt/user-data/workspace/code.py." {
		t.Errorf("all = %q, %v", got, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "a = 7\nb = 5\nprint(a)\na = 7\n" {
		t.Errorf("file = %q", b)
	}
	if got, err := replace("print(a)\n", "", false); err != nil || !strings.Contains(got, "Replaced 1") {
		t.Errorf("delete = %q, %v", got, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "a = 7\nb = 5\na = 7\n" {
		t.Errorf("after delete = %q", b)
	}
}

// TestConcurrentEdits appends and edits one file from many goroutines: the
// per-file lock must keep every change.
func TestConcurrentEdits(t *testing.T) {
	m := newManager(t, Options{})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustCall(t, m, "t", "write_file", map[string]any{"path": "log.txt", "content": fmt.Sprintf("line %d\n", i), "append": true})
		}()
	}
	wg.Wait()
	got := mustCall(t, m, "t", "read_file", map[string]any{"path": "log.txt"})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	sort.Strings(lines)
	if len(lines) != 50 {
		t.Fatalf("%d lines: %q", len(lines), got)
	}
	for i := range 50 {
		if !strings.Contains(got, fmt.Sprintf("line %d\n", i)) {
			t.Errorf("line %d missing", i)
		}
	}
	// Read-modify-write: each goroutine turns one marker into its done form.
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "todo-%d;", i)
	}
	writeHost(t, filepath.Join(hostDir(t, m, "t", "workspace"), "todo.txt"), b.String())
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustCall(t, m, "t", "str_replace", map[string]any{"path": "todo.txt", "old_str": fmt.Sprintf("todo-%d;", i), "new_str": fmt.Sprintf("done-%d;", i)})
		}()
	}
	wg.Wait()
	got = mustCall(t, m, "t", "read_file", map[string]any{"path": "todo.txt"})
	if strings.Contains(got, "todo-") || strings.Count(got, "done-") != 50 {
		t.Errorf("lost edits: %q", got)
	}
}

func TestLs(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	writeHost(t, filepath.Join(ws, "a.txt"), "hello")
	writeHost(t, filepath.Join(ws, "src/main.go"), "package main\n")
	writeHost(t, filepath.Join(ws, "src/deep/hidden.go"), "x")
	if err := os.Symlink("src/main.go", filepath.Join(ws, "link.go")); err != nil {
		t.Fatal(err)
	}
	got := mustCall(t, m, "t", "ls", map[string]any{})
	want := "/mnt/user-data/workspace/\n  a.txt (5 B)\n  link.go -> src/main.go\n  src/\n    deep/\n    main.go (13 B)"
	if got != want {
		t.Errorf("ls =\n%s\nwant\n%s", got, want)
	}
	if got := mustCall(t, m, "t", "ls", map[string]any{"path": "/mnt/user-data/uploads"}); got != "/mnt/user-data/uploads/\n  (empty)" {
		t.Errorf("empty ls = %q", got)
	}
	if got := mustCall(t, m, "t", "ls", map[string]any{"path": "a.txt"}); got != "/mnt/user-data/workspace/a.txt (5 B)" {
		t.Errorf("ls file = %q", got)
	}
	for i := range 1500 {
		writeHost(t, filepath.Join(ws, "many", fmt.Sprintf("file-with-a-long-name-%04d.txt", i)), "")
	}
	got = mustCall(t, m, "t", "ls", map[string]any{"path": "many"})
	if n := len([]rune(got)); n > files.LsMaxChars+300 || !strings.Contains(got, "[output truncated: showing the first") || !strings.Contains(got, "use glob") {
		t.Errorf("big ls: %d chars, tail %q", n, got[len(got)-200:])
	}
}

func TestGlob(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	for _, f := range []string{"a.py", "lib/b.py", "lib/sub/c.py", "lib/d.txt", ".hidden/e.py"} {
		writeHost(t, filepath.Join(ws, f), "x")
	}
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "**/*.py"}, "/mnt/user-data/workspace/a.py\n/mnt/user-data/workspace/.hidden/e.py\n/mnt/user-data/workspace/lib/b.py\n/mnt/user-data/workspace/lib/sub/c.py"},
		{map[string]any{"pattern": "*.py", "path": "lib"}, "/mnt/user-data/workspace/lib/b.py"},
		{map[string]any{"pattern": "/mnt/user-data/workspace/lib/**/*.{py,txt}"}, "/mnt/user-data/workspace/lib/b.py\n/mnt/user-data/workspace/lib/d.txt\n/mnt/user-data/workspace/lib/sub/c.py"},
		{map[string]any{"pattern": "lib/*", "include_dirs": true}, "/mnt/user-data/workspace/lib/b.py\n/mnt/user-data/workspace/lib/d.txt\n/mnt/user-data/workspace/lib/sub"},
		{map[string]any{"pattern": "**/*.py", "max_results": 2}, "/mnt/user-data/workspace/a.py\n/mnt/user-data/workspace/.hidden/e.py\n[2 more matches not shown (4 in all); narrow the pattern or raise max_results]"},
		{map[string]any{"pattern": "*.rs"}, "No paths match *.rs in /mnt/user-data/workspace."},
	}
	for _, tt := range tests {
		if got := mustCall(t, m, "t", "glob", tt.args); got != tt.want {
			t.Errorf("glob %v =\n%s\nwant\n%s", tt.args, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "../*", "a/../../*"} {
		if _, err := call(t, m, "t", "glob", map[string]any{"pattern": bad}); err == nil || !strings.Contains(err.Error(), "not a valid glob pattern") {
			t.Errorf("glob %q: err = %v", bad, err)
		}
	}
}

func TestGrep(t *testing.T) {
	m := newManager(t, Options{})
	ws := hostDir(t, m, "t", "workspace")
	writeHost(t, filepath.Join(ws, "a.py"), "import os\nTODO: fix\nx = a.b\n")
	writeHost(t, filepath.Join(ws, "lib/b.go"), "// todo later\nfunc f() {}\n")
	writeHost(t, filepath.Join(ws, ".git/config"), "TODO in git\n")
	writeHost(t, filepath.Join(ws, "bin.dat"), "TODO\x00\x01")
	writeHost(t, filepath.Join(ws, "long.txt"), "TODO "+strings.Repeat("z", 1000)+"\n")
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "todo", "glob": "*.{py,go}"}, "/mnt/user-data/workspace/a.py:2: TODO: fix\n/mnt/user-data/workspace/lib/b.go:1: // todo later"},
		{map[string]any{"pattern": "TODO", "case_sensitive": true, "glob": "*.py"}, "/mnt/user-data/workspace/a.py:2: TODO: fix"},
		{map[string]any{"pattern": "a.b", "literal": true}, "/mnt/user-data/workspace/a.py:3: x = a.b"},
		{map[string]any{"pattern": "func", "path": "lib/b.go"}, "/mnt/user-data/workspace/lib/b.go:2: func f() {}"},
		{map[string]any{"pattern": "todo", "glob": "lib/**"}, "/mnt/user-data/workspace/lib/b.go:1: // todo later"},
		{map[string]any{"pattern": "todo", "max_results": 1, "glob": "*.{py,go}"}, "/mnt/user-data/workspace/a.py:2: TODO: fix\n[more matches exist beyond the first 1; narrow the pattern, path or glob, or raise max_results]"},
		{map[string]any{"pattern": "nothing-like-this"}, `No matches for "nothing-like-this" in /mnt/user-data/workspace.`},
	}
	for _, tt := range tests {
		if got := mustCall(t, m, "t", "grep", tt.args); got != tt.want {
			t.Errorf("grep %v =\n%s\nwant\n%s", tt.args, got, tt.want)
		}
	}
	got := mustCall(t, m, "t", "grep", map[string]any{"pattern": "TODO", "glob": "long.txt"})
	if !strings.HasSuffix(got, " …") || len([]rune(got)) > 400 {
		t.Errorf("long line not cut: %d chars", len(got))
	}
	if _, err := call(t, m, "t", "grep", map[string]any{"pattern": "("}); err == nil || !strings.Contains(err.Error(), "not a valid regular expression") {
		t.Errorf("bad regexp: err = %v", err)
	}
}

// TestSpecialFiles checks that a FIFO the sandbox made cannot hang a tool.
func TestSpecialFiles(t *testing.T) {
	m := newManager(t, Options{})
	for _, dir := range []string{"workspace", "outputs"} {
		if err := syscall.Mkfifo(filepath.Join(hostDir(t, m, "t", dir), "pipe"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "pipe"}},
		{"write_file", map[string]any{"path": "pipe", "content": "x"}},
		{"write_file", map[string]any{"path": "pipe", "content": "x", "append": true}},
		{"str_replace", map[string]any{"path": "pipe", "old_str": "a", "new_str": "b"}},
		{"present_files", map[string]any{"filepaths": []string{"/mnt/user-data/outputs/pipe"}}},
	} {
		if _, err := call(t, m, "t", c.tool, c.args); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s on a FIFO: err = %v", c.tool, err)
		}
	}
	if got := mustCall(t, m, "t", "grep", map[string]any{"pattern": "x"}); !strings.HasPrefix(got, "No matches") {
		t.Errorf("grep = %q", got)
	}
}
