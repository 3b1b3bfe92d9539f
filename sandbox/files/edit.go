package files

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/deerflow/deerflow/sandbox/truncate"
)

// maxEditBytes bounds the files str_replace loads into memory.
const maxEditBytes = 16 << 20

// WriteArgs are write_file's arguments.
type WriteArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are writing the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path (deliverables go under /mnt/user-data/outputs), or a path relative to /mnt/user-data/workspace. Missing parent directories are created."`
	Content     string `json:"content" desc:"The text to write."`
	Append      bool   `json:"append,omitempty" desc:"Add content to the end of the file instead of replacing it. Use it to write a large file in several smaller calls."`
}

// ReplaceArgs are str_replace's arguments.
type ReplaceArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are editing the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path, or a path relative to /mnt/user-data/workspace."`
	OldStr      string `json:"old_str" desc:"The exact text to replace, including whitespace and line breaks. It must occur exactly once unless replace_all is true."`
	NewStr      string `json:"new_str" desc:"The text to put in its place (may be empty to delete)."`
	ReplaceAll  bool   `json:"replace_all,omitempty" desc:"Replace every occurrence instead of requiring exactly one."`
}

// Write writes content to the file at l, or appends it, creating missing
// parent directories, under lk's lock of the file. The caller has checked
// that l may be written.
func Write(lk *Locks, l Loc, content string, appendTo bool) (string, error) {
	if l.Rel == "." {
		return "", fmt.Errorf("%s is a directory; give a file name inside it", l.Path)
	}
	defer lk.Lock(l.HostPath())()
	r, err := l.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	if dir := path.Dir(l.Rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return "", l.Fail(err)
		}
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := r.OpenFile(l.Rel, flag|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return "", l.Fail(err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return "", fmt.Errorf("%s is not a regular file", l.Path)
	}
	_, err = f.WriteString(content)
	var size int64
	if st, serr := f.Stat(); serr == nil {
		size = st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", l.Fail(err)
	}
	if appendTo {
		return fmt.Sprintf("Appended %s bytes to %s (now %s bytes).", truncate.Thousands(len(content)), l.Path, truncate.Thousands(int(size))), nil
	}
	return fmt.Sprintf("Wrote %s bytes to %s.", truncate.Thousands(len(content)), l.Path), nil
}

// Replace replaces old in the file at l with repl, once (old must occur
// exactly once) or everywhere, under lk's lock of the file. The caller has
// checked that l may be written.
func Replace(lk *Locks, l Loc, old, repl string, all bool) (string, error) {
	if old == "" {
		return "", errors.New("old_str is empty; give the exact text to replace (to add text to the end of a file, use write_file with append=true)")
	}
	if old == repl {
		return "", errors.New("old_str and new_str are the same, so there is nothing to change")
	}
	defer lk.Lock(l.HostPath())()
	r, err := l.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.OpenFile(l.Rel, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", l.Fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", l.Fail(err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", l.Path)
	case st.Size() > maxEditBytes:
		return "", fmt.Errorf("%s is too large for str_replace (%s bytes; the limit is %s); edit it with bash, e.g. sed", l.Path, truncate.Thousands(int(st.Size())), truncate.Thousands(maxEditBytes))
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", l.Fail(err)
	}
	text := string(data)
	n := strings.Count(text, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_str was not found in %s. It must match the file exactly, including spaces, indentation and line breaks; read_file the part you want to change and copy it", l.Path)
	case n > 1 && !all:
		return "", fmt.Errorf("old_str occurs %d times in %s (%s); add surrounding lines to old_str so that it matches exactly once, or set replace_all to true to replace every occurrence", n, l.Path, matchLines(text, old))
	}
	if all {
		text = strings.ReplaceAll(text, old, repl)
	} else {
		text = strings.Replace(text, old, repl, 1)
	}
	if err := f.Truncate(0); err != nil {
		return "", l.Fail(err)
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		return "", l.Fail(err)
	}
	if n == 1 {
		return fmt.Sprintf("Replaced 1 occurrence in %s.", l.Path), nil
	}
	return fmt.Sprintf("Replaced %d occurrences in %s.", n, l.Path), nil
}

// matchLines names the lines where old starts, the first ten of them.
func matchLines(text, old string) string {
	var lines []string
	line, from := 1, 0
	for len(lines) < 10 {
		i := strings.Index(text[from:], old)
		if i < 0 {
			break
		}
		line += strings.Count(text[from:from+i], "\n")
		lines = append(lines, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
	return "at lines " + strings.Join(lines, ", ")
}
