// Package sse reads server-sent events as the WHATWG specification says
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): the
// framing of OpenAI-compatible streaming APIs, which providers vary (event
// types, comments, CR line ends, data split over lines).
//
// It imports no package of ours.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// MaxLine bounds one line of the event stream; a whole tool call's
// arguments may come in one data line.
const MaxLine = 4 << 20

// ErrLineTooLong ends a stream with a line longer than MaxLine.
var ErrLineTooLong = errors.New("event stream line too long")

// Event is one dispatched server-sent event.
type Event struct {
	Type string // the event: field; "" means "message"
	Data []byte // the data: lines joined by "\n"
	ID   string // the last event ID seen
}

// Reader reads server-sent events as the WHATWG spec says: lines end
// in CRLF, LF or CR; ":" lines are comments; a field's value follows the
// colon and one optional space; data lines are joined with "\n"; a blank
// line dispatches the event, unless it has no data. An event cut by the
// end of the stream is not dispatched. It is used like bufio.Scanner.
type Reader struct {
	sc    *bufio.Scanner
	ev    Event
	data  bytes.Buffer
	typ   string
	id    string
	retry int // the reconnection time the server asked for, in ms; kept, unused
	err   error
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	sc.Split(scanLine)
	return &Reader{sc: sc}
}

// Next reads up to the next event, reporting false at the end of the
// stream or on an error (see Err).
func (s *Reader) Next() bool {
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(line) == 0 {
			if s.dispatch() {
				return true
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alives, ": OPENROUTER PROCESSING"
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		s.field(string(name), value)
	}
	s.err = s.sc.Err()
	if errors.Is(s.err, bufio.ErrTooLong) {
		s.err = ErrLineTooLong
	}
	return false
}

func (s *Reader) field(name string, value []byte) {
	switch name {
	case "data":
		s.data.Write(value)
		s.data.WriteByte('\n')
	case "event":
		s.typ = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.id = string(value)
		}
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
			s.retry = n
		}
	}
}

// dispatch ends the event being read, reporting whether it has data.
func (s *Reader) dispatch() bool {
	typ := s.typ
	s.typ = ""
	if s.data.Len() == 0 {
		return false
	}
	data := s.data.Bytes()
	s.ev = Event{Type: typ, Data: bytes.Clone(data[:len(data)-1]), ID: s.id}
	s.data.Reset()
	return true
}

// Event is the event Next read.
func (s *Reader) Event() Event { return s.ev }

// Err is the error that ended the stream, nil at its normal end.
func (s *Reader) Err() error { return s.err }

// scanLine splits at CRLF, LF or CR, returning the line without them.
func scanLine(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil // a last line without its end
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a CR at the end: wait to see whether LF follows
}
