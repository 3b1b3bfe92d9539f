package files

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/deerflow/deerflow/sandbox/truncate"
)

// Snapshot is what a file looks like now: enough to tell whether it
// changed since it was last seen, and to describe it in a few lines.
type Snapshot struct {
	Path   string // the virtual path, cleaned
	Exists bool   // a regular file is there
	Size   int64
	Lines  int // lines in the file (a last line without a newline counts)
	// Sum identifies the content: its SHA-256, or, for a file too large to
	// hash on every look, its size and modification time.
	Sum  [32]byte
	Head string // the first lines, at most peekLines and peekChars
}

const (
	peekLines = 10
	peekChars = 1000
	// hashMax is the largest file whose content is hashed; a larger one
	// is told apart by size and modification time.
	hashMax = 16 << 20
)

// Peek takes a snapshot of the file at l. A missing file is a snapshot
// with Exists false, not an error.
func Peek(l Loc) (Snapshot, error) {
	s := Snapshot{Path: l.Path}
	r, err := l.Open()
	if err != nil {
		return s, err
	}
	_, err = r.Stat(l.Rel)
	r.Close()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return s, nil
	}
	f, st, err := l.OpenFile()
	if err != nil {
		return s, err
	}
	defer f.Close()
	s.Exists, s.Size = true, st.Size()
	h := sha256.New()
	var in io.Reader = f
	if st.Size() > hashMax {
		in = io.LimitReader(f, peekChars)
		binary.Write(h, binary.LittleEndian, [2]int64{st.Size(), st.ModTime().UnixNano()})
	}
	var head strings.Builder
	br := bufio.NewReader(io.TeeReader(in, h))
	last := byte('\n')
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if s.Lines < peekLines && head.Len() < peekChars {
				head.WriteString(truncate.Prefix(string(line), peekChars-utf8.RuneCountInString(head.String())))
			}
			if last == '\n' {
				s.Lines++
			}
			last = line[len(line)-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return s, l.Fail(err)
		}
	}
	copy(s.Sum[:], h.Sum(nil))
	s.Head = head.String()
	return s, nil
}
