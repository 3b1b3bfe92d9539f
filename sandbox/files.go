package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/deerflow/deerflow/tools"
)

// maxEditBytes bounds the files str_replace loads into memory.
const maxEditBytes = 16 << 20

// sniffBytes is how much of a file is checked for NUL bytes to call it
// binary.
const sniffBytes = 8000

type readArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are reading the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path such as /mnt/user-data/uploads/notes.md, or a path relative to /mnt/user-data/workspace."`
	StartLine   int    `json:"start_line,omitempty" desc:"First line to return, counting from 1. Default: 1."`
	EndLine     int    `json:"end_line,omitempty" desc:"Last line to return, inclusive. Default: the end of the file."`
}

func (m *Manager) readFileTool() tools.Tool {
	return tool(m, "read_file",
		"Read a text file. Returns its content, or the lines from start_line to end_line (1-based, inclusive). Output stops at 50,000 characters with a note saying where to continue.",
		func(ctx context.Context, t *thread, in readArgs) (string, error) {
			l, err := t.resolve(in.Path)
			if err != nil {
				return "", err
			}
			return readFile(l, in.StartLine, in.EndLine)
		})
}

// readFile streams the wanted lines of l, stopping at readMaxChars, so a
// huge file costs no more than the part that is shown.
func readFile(l loc, start, end int) (string, error) {
	switch {
	case start < 0 || end < 0:
		return "", errors.New("start_line and end_line count from 1")
	case end > 0 && end < max(start, 1):
		return "", fmt.Errorf("end_line (%d) is before start_line (%d)", end, start)
	}
	start = max(start, 1)
	f, st, err := l.openFile()
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffBytes); bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("%s looks like a binary file (%s bytes); read_file shows text only. Inspect it with bash (file, xxd | head, or a converter)", l.path, thousands(int(st.Size())))
	}
	var (
		out       []byte
		chars     int
		line      = 1 // line of the next byte read
		consumed  int64
		cutAt     int  // first line not (fully) shown, when truncated
		cutInLine bool // the cut fell inside line cutAt
		lastNL    bool // the last byte read was a newline
	)
	for cutAt == 0 {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && line >= start && (end == 0 || line <= end) {
			n := utf8.RuneCount(chunk)
			if chars+n > readMaxChars {
				cutAt = line
				if atLineStart(out) && chars >= readMaxChars/2 {
					break
				}
				part := prefixRunes(string(chunk), readMaxChars-chars)
				out, consumed, cutInLine = append(out, part...), consumed+int64(len(part)), true
				break
			}
			out, chars = append(out, chunk...), chars+n
		}
		consumed += int64(len(chunk))
		if len(chunk) > 0 {
			lastNL = chunk[len(chunk)-1] == '\n'
		}
		if lastNL && len(chunk) > 0 {
			line++
			if end > 0 && line > end {
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return "", l.fail(err)
		}
	}
	if cutAt > 0 {
		return string(out) + readNote(cutAt, cutInLine, st.Size()-consumed, start, end), nil
	}
	if len(out) == 0 {
		if st.Size() == 0 {
			return "(the file is empty)", nil
		}
		lines := line
		if lastNL {
			lines--
		}
		return "", fmt.Errorf("%s has %d lines; start_line %d is past its end", l.path, lines, start)
	}
	return string(out), nil
}

func atLineStart(b []byte) bool { return len(b) == 0 || b[len(b)-1] == '\n' }

// readNote tells the model what read_file left out and how to get it.
func readNote(cutAt int, inLine bool, restBytes int64, start, end int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[output truncated at the %s-character limit: ", thousands(readMaxChars))
	last := cutAt - 1
	if inLine {
		last = cutAt
	}
	if last >= start {
		fmt.Fprintf(&b, "showing lines %d-%d", start, last)
		if inLine {
			fmt.Fprintf(&b, " (line %d is cut short; use bash, e.g. cut or fold, to see all of it)", cutAt)
		}
	} else {
		fmt.Fprintf(&b, "line %d alone is longer than the limit and was cut short; use bash, e.g. cut or fold, to see all of it", cutAt)
	}
	next := last + 1
	if end > 0 {
		fmt.Fprintf(&b, "; lines %d-%d were not shown", next, end)
	} else {
		fmt.Fprintf(&b, "; %s more bytes follow", thousands(int(restBytes)))
	}
	fmt.Fprintf(&b, ". Continue with start_line=%d.]", next)
	return b.String()
}

type writeArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are writing the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path (deliverables go under /mnt/user-data/outputs), or a path relative to /mnt/user-data/workspace. Missing parent directories are created."`
	Content     string `json:"content" desc:"The text to write."`
	Append      bool   `json:"append,omitempty" desc:"Add content to the end of the file instead of replacing it. Use it to write a large file in several smaller calls."`
}

func (m *Manager) writeFileTool() tools.Tool {
	return tool(m, "write_file",
		"Create or overwrite a text file, or append to it. To change part of an existing file, prefer str_replace. Write large files in chunks: the first call without append, the rest with append=true.",
		func(ctx context.Context, t *thread, in writeArgs) (string, error) {
			l, err := t.resolve(in.Path)
			if err != nil {
				return "", err
			}
			return m.writeFile(l, in.Content, in.Append)
		})
}

func (m *Manager) writeFile(l loc, content string, appendTo bool) (string, error) {
	if err := l.writable(); err != nil {
		return "", err
	}
	if l.rel == "." {
		return "", fmt.Errorf("%s is a directory; give a file name inside it", l.path)
	}
	defer m.locks.lock(l.hostPath())()
	r, err := l.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	if dir := path.Dir(l.rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return "", l.fail(err)
		}
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := r.OpenFile(l.rel, flag|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return "", l.fail(err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return "", fmt.Errorf("%s is not a regular file", l.path)
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
		return "", l.fail(err)
	}
	if appendTo {
		return fmt.Sprintf("Appended %s bytes to %s (now %s bytes).", thousands(len(content)), l.path, thousands(int(size))), nil
	}
	return fmt.Sprintf("Wrote %s bytes to %s.", thousands(len(content)), l.path), nil
}

type replaceArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are editing the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path, or a path relative to /mnt/user-data/workspace."`
	OldStr      string `json:"old_str" desc:"The exact text to replace, including whitespace and line breaks. It must occur exactly once unless replace_all is true."`
	NewStr      string `json:"new_str" desc:"The text to put in its place (may be empty to delete)."`
	ReplaceAll  bool   `json:"replace_all,omitempty" desc:"Replace every occurrence instead of requiring exactly one."`
}

func (m *Manager) strReplaceTool() tools.Tool {
	return tool(m, "str_replace",
		"Edit a text file by replacing an exact piece of text (old_str) with new text (new_str). Prefer this over rewriting a whole file. old_str must match exactly once unless replace_all is true; include a few surrounding lines to make it unique.",
		func(ctx context.Context, t *thread, in replaceArgs) (string, error) {
			l, err := t.resolve(in.Path)
			if err != nil {
				return "", err
			}
			return m.strReplace(l, in.OldStr, in.NewStr, in.ReplaceAll)
		})
}

func (m *Manager) strReplace(l loc, old, repl string, all bool) (string, error) {
	if err := l.writable(); err != nil {
		return "", err
	}
	if old == "" {
		return "", errors.New("old_str is empty; give the exact text to replace (to add text to the end of a file, use write_file with append=true)")
	}
	if old == repl {
		return "", errors.New("old_str and new_str are the same, so there is nothing to change")
	}
	defer m.locks.lock(l.hostPath())()
	r, err := l.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.OpenFile(l.rel, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", l.fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", l.fail(err)
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", l.path)
	case st.Size() > maxEditBytes:
		return "", fmt.Errorf("%s is too large for str_replace (%s bytes; the limit is %s); edit it with bash, e.g. sed", l.path, thousands(int(st.Size())), thousands(maxEditBytes))
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", l.fail(err)
	}
	text := string(data)
	n := strings.Count(text, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_str was not found in %s. It must match the file exactly, including spaces, indentation and line breaks; read_file the part you want to change and copy it", l.path)
	case n > 1 && !all:
		return "", fmt.Errorf("old_str occurs %d times in %s (%s); add surrounding lines to old_str so that it matches exactly once, or set replace_all to true to replace every occurrence", n, l.path, matchLines(text, old))
	}
	if all {
		text = strings.ReplaceAll(text, old, repl)
	} else {
		text = strings.Replace(text, old, repl, 1)
	}
	if err := f.Truncate(0); err != nil {
		return "", l.fail(err)
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		return "", l.fail(err)
	}
	if n == 1 {
		return fmt.Sprintf("Replaced 1 occurrence in %s.", l.path), nil
	}
	return fmt.Sprintf("Replaced %d occurrences in %s.", n, l.path), nil
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

// openRead opens a file for reading without blocking on a FIFO the
// sandbox may have put in its place; callers check that it is regular.
func openRead(r *os.Root, rel string) (*os.File, error) {
	return r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// fileLocks serialises read-modify-write of one file across tool calls.
// Entries live only while someone holds or waits for them.
type fileLocks struct {
	mu sync.Mutex
	m  map[string]*fileLock
}

type fileLock struct {
	mu    sync.Mutex
	users int
}

// lock locks key and returns its unlock func.
func (fl *fileLocks) lock(key string) (unlock func()) {
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

// openFile opens the regular file at l for reading (through its area's
// os.Root, so no link leads out). The caller closes the file.
func (l loc) openFile() (*os.File, os.FileInfo, error) {
	r, err := l.open()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	f, err := openRead(r, l.rel)
	if err != nil {
		return nil, nil, l.fail(err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		err = l.fail(err)
	case st.IsDir():
		err = fmt.Errorf("%s is a directory; use ls to see what it holds", l.path)
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", l.path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
