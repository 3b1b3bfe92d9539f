package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/sandbox/truncate"
)

// ReadMaxChars is the most characters read_file returns at once
// (head-truncated, as in DeerFlow).
const ReadMaxChars = 50_000

// sniffBytes is how much of a file is checked for NUL bytes to call it
// binary.
const sniffBytes = 8000

// ReadArgs are read_file's arguments.
type ReadArgs struct {
	Description string `json:"description,omitempty" desc:"Why you are reading the file, in a few words."`
	Path        string `json:"path" desc:"Absolute virtual path such as /mnt/user-data/uploads/notes.md, or a path relative to /mnt/user-data/workspace."`
	StartLine   int    `json:"start_line,omitempty" desc:"First line to return, counting from 1. Default: 1."`
	EndLine     int    `json:"end_line,omitempty" desc:"Last line to return, inclusive. Default: the end of the file."`
}

// Read returns lines start to end (1-based, inclusive; 0 means the first
// or the last) of the text file at l. It streams them, stopping at
// ReadMaxChars, so a huge file costs no more than the part that is shown.
func Read(l Loc, start, end int) (string, error) {
	switch {
	case start < 0 || end < 0:
		return "", errors.New("start_line and end_line count from 1")
	case end > 0 && end < max(start, 1):
		return "", fmt.Errorf("end_line (%d) is before start_line (%d)", end, start)
	}
	start = max(start, 1)
	f, st, err := l.OpenFile()
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffBytes); bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("%s looks like a binary file (%s bytes); read_file shows text only. Inspect it with bash (file, xxd | head, or a converter)", l.Path, truncate.Thousands(int(st.Size())))
	}
	rs := &readState{line: 1}
	if err := rs.scan(br, start, end); err != nil {
		return "", l.Fail(err)
	}
	if rs.cutAt > 0 {
		return string(rs.out) + readNote(rs.cutAt, rs.cutInLine, st.Size()-rs.consumed, start, end), nil
	}
	if len(rs.out) == 0 {
		if st.Size() == 0 {
			return "(the file is empty)", nil
		}
		lines := rs.line
		if rs.lastNL {
			lines--
		}
		return "", fmt.Errorf("%s has %d lines; start_line %d is past its end", l.Path, lines, start)
	}
	return string(rs.out), nil
}

// readState is how far Read got.
type readState struct {
	out       []byte
	chars     int
	line      int // line of the next byte read
	consumed  int64
	cutAt     int  // first line not (fully) shown, when truncated
	cutInLine bool // the cut fell inside line cutAt
	lastNL    bool // the last byte read was a newline
}

// scan reads lines start to end (0: the last) of br into rs.out, stopping
// at ReadMaxChars.
func (rs *readState) scan(br *bufio.Reader, start, end int) error {
	for rs.cutAt == 0 {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && rs.line >= start && (end == 0 || rs.line <= end) {
			n := utf8.RuneCount(chunk)
			if rs.chars+n > ReadMaxChars {
				rs.cutAt = rs.line
				if atLineStart(rs.out) && rs.chars >= ReadMaxChars/2 {
					return nil
				}
				part := truncate.Prefix(string(chunk), ReadMaxChars-rs.chars)
				rs.out, rs.consumed, rs.cutInLine = append(rs.out, part...), rs.consumed+int64(len(part)), true
				return nil
			}
			rs.out, rs.chars = append(rs.out, chunk...), rs.chars+n
		}
		rs.consumed += int64(len(chunk))
		if len(chunk) > 0 {
			rs.lastNL = chunk[len(chunk)-1] == '\n'
		}
		if rs.lastNL && len(chunk) > 0 {
			rs.line++
			if end > 0 && rs.line > end {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return err
		}
	}
	return nil
}

func atLineStart(b []byte) bool { return len(b) == 0 || b[len(b)-1] == '\n' }

// readNote tells the model what read_file left out and how to get it.
func readNote(cutAt int, inLine bool, restBytes int64, start, end int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[output truncated at the %s-character limit: ", truncate.Thousands(ReadMaxChars))
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
		fmt.Fprintf(&b, "; %s more bytes follow", truncate.Thousands(int(restBytes)))
	}
	fmt.Fprintf(&b, ". Continue with start_line=%d.]", next)
	return b.String()
}
