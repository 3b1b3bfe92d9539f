package sse

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func readEvents(t testing.TB, stream string, oneByte bool) ([]Event, error) {
	r := strings.NewReader(stream)
	st := NewReader(r)
	if oneByte {
		st = NewReader(iotest.OneByteReader(r))
	}
	var evs []Event
	for st.Next() {
		evs = append(evs, st.Event())
	}
	return evs, st.Err()
}

// TestSSEReader follows the examples of the WHATWG spec's "event stream
// interpretation".
func TestSSEReader(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []Event
	}{
		{"data lines joined", "data: YHOO\ndata: +2\ndata: 10\n\n", []Event{{Data: []byte("YHOO\n+2\n10")}}},
		{"comment, id, named event", ": test stream\n\ndata: first event\nid: 1\n\nevent: error\ndata:second\n\n",
			[]Event{{Data: []byte("first event"), ID: "1"}, {Type: "error", Data: []byte("second"), ID: "1"}}},
		{"empty data dispatches, no data does not", "data\n\ndata\ndata\n\ndata:\n\nevent: x\n\n", []Event{
			{Data: []byte("")}, {Data: []byte("\n")}, {Data: []byte("")},
		}},
		{"one space stripped", "data:test\n\ndata:  test\n\n", []Event{{Data: []byte("test")}, {Data: []byte(" test")}}},
		{"CRLF and CR line ends", "data: a\r\n\r\ndata: b\r\rdata: c\r\n\r\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}, {Data: []byte("c")}}},
		{"event cut by the end is dropped", "data: whole\n\ndata: half", []Event{{Data: []byte("whole")}}},
		{"event type does not carry over", "event: error\ndata: a\n\ndata: b\n\n", []Event{{Type: "error", Data: []byte("a")}, {Data: []byte("b")}}},
		{"retry and unknown fields ignored", "retry: 10\nfoo: bar\ndata: x\n\n", []Event{{Data: []byte("x")}}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			got, err := readEvents(t, tt.stream, oneByte)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("%s (one byte at a time: %v) (-want +got):\n%s", tt.name, oneByte, diff)
			}
		}
	}
	if _, err := readEvents(t, "data: "+strings.Repeat("x", MaxLine+1)+"\n\n", false); err != ErrLineTooLong {
		t.Errorf("an endless line: %v", err)
	}
}

// FuzzSSEReader: no input makes the reader panic, and reading a byte at a
// time gives the same events.
func FuzzSSEReader(f *testing.F) {
	f.Add("data: a\r\ndata: b\r\n\r\n: c\rid: 1\revent: e\rdata\r\r")
	f.Add("data: {\"choices\":[]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		whole, err1 := readEvents(t, s, false)
		bytewise, err2 := readEvents(t, s, true)
		if err1 != nil || err2 != nil {
			return
		}
		if diff := cmp.Diff(whole, bytewise, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
			t.Errorf("%q (-whole +bytewise):\n%s", s, diff)
		}
	})
}
