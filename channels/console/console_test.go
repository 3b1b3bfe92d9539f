package console

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
)

// retryNotice is the activity line the progress renderer sends when the
// model's answer was cut off and is being written again (bus.Outbound.Retry).
const retryNotice = "(the answer was cut off; retrying)"

func TestScriptPrintsAnswersOnce(t *testing.T) {
	var out, errb bytes.Buffer
	c := New(Options{Out: &out, Err: &errb})
	for _, o := range []*bus.Outbound{
		{Kind: bus.OutDelta, Text: "The ans"},
		{Kind: bus.OutActivity, Text: retryNotice, Retry: true},
		{Kind: bus.OutDelta, Text: "The answer."},
		{Kind: bus.OutActivity, Text: "weather: Oslo"},
		{Kind: bus.OutDelta, Final: true},
		{Kind: bus.OutMessage, Text: "Commands:\n/help — show this list", Final: true},
		{Kind: bus.OutDelta, Text: "half an ans"},
		{Kind: bus.OutMessage, Text: "Stopped.", Final: true, Failed: true},
	} {
		if _, err := c.Send(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff("The answer.\nCommands:\n/help — show this list\n"+exitHelp+"\n", out.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("  › weather: Oslo\nStopped.\n", errb.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if !c.failed {
		t.Error("the failure was not noted")
	}
}

func TestRowsOf(t *testing.T) {
	for _, tc := range []struct {
		s    string
		cols int
		want int
	}{
		{"", 10, 1},
		{"abc", 10, 1},
		{"abcdefghij", 10, 1},
		{"abcdefghijk", 10, 2},
		{"日本語日本", 10, 1},
		{"日本語日本語", 10, 2},
		{"\tx", 8, 2},
	} {
		if got := rowsOf(tc.s, tc.cols); got != tc.want {
			t.Errorf("rowsOf(%q, %d) = %d, want %d", tc.s, tc.cols, got, tc.want)
		}
	}
}

func TestLiveCountsRows(t *testing.T) {
	var l live
	l.add("hello wor", 5) // 2 rows, unfinished
	l.add("ld\nnext", 5)  // "hello world" 3 rows + "next"
	want := live{line: "next", lineRows: 1, rows: 4}
	if l != want {
		t.Errorf("live = %+v, want %+v", l, want)
	}
}

// Deltas redraw the unfinished line; a retry erases what was streamed.
func TestTerminalRedrawsAndErases(t *testing.T) {
	var out bytes.Buffer
	c := New(Options{Out: &out, Terminal: true})
	for _, o := range []*bus.Outbound{
		{Kind: bus.OutDelta, Text: "one\ntw"},
		{Kind: bus.OutDelta, Text: "o"},
		{Kind: bus.OutActivity, Text: retryNotice, Retry: true},
	} {
		c.Send(context.Background(), o)
	}
	want := "one\ntw\n" + up(1) + "two\n" + up(2) + dim("  › the answer was cut off; writing it again") + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat_history")
	os.WriteFile(path, []byte("a\nb\n\nc\nd\n"), 0o644)
	h := openHistory(path, 3)
	h.Add("d") // a repeat
	h.Add("  ")
	h.Add("e")
	h.close()
	if h.Len() != 3 || h.At(0) != "e" || h.At(2) != "c" {
		t.Errorf("history = %q", h.lines)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "b\nc\nd\ne\n" {
		t.Errorf("file = %q", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v", st.Mode())
	}
	if h := openHistory(path, 3); !cmp.Equal(h.lines, []string{"c", "d", "e"}) {
		t.Errorf("reopened: %q", h.lines)
	}
}

func TestCtrlCIsTakenOut(t *testing.T) {
	keys := make(chan struct{}, 1)
	got, err := io.ReadAll(&ctrlC{r: strings.NewReader("ab\x03c"), keys: keys})
	if err != nil || string(got) != "abc" || len(keys) != 1 {
		t.Errorf("read %q, %v; %d presses", got, err, len(keys))
	}
}

// idler is a Publisher that records messages and is idle once told.
type idler struct {
	mu   sync.Mutex
	got  []string
	pubs chan string   // each message published, when not nil
	busy chan struct{} // received from by WaitIdle
}

func (p *idler) Publish(_ context.Context, in *bus.Inbound) error {
	p.mu.Lock()
	p.got = append(p.got, in.Text)
	p.mu.Unlock()
	if p.pubs != nil {
		p.pubs <- in.Text
	}
	return nil
}

func (p *idler) StartsRun(string) bool { return false }

func (p *idler) WaitIdle(ctx context.Context) error {
	select {
	case <-p.busy:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *idler) published() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// In script mode the next line is published only once the last one's
// work is done.
func TestScriptWaitsForEachAnswer(t *testing.T) {
	p := &idler{pubs: make(chan string, 4), busy: make(chan struct{})}
	c := New(Options{In: strings.NewReader("q1\n\nq2\n"), Out: io.Discard})
	done := make(chan error, 1)
	go func() { done <- c.Start(context.Background(), p) }()
	<-p.pubs
	if got := p.published(); !cmp.Equal(got, []string{"q1"}) {
		t.Errorf("before q1 was answered: %q", got)
	}
	p.busy <- struct{}{} // q1 answered: only now is q2 read
	<-p.pubs
	c.Send(context.Background(), &bus.Outbound{Kind: bus.OutMessage, Text: "no", Failed: true, Final: true})
	p.busy <- struct{}{} // q2 answered
	p.busy <- struct{}{} // the end of the input
	if err := <-done; !errors.Is(err, ErrFailed) {
		t.Errorf("Start = %v", err)
	}
	if got := p.published(); !cmp.Equal(got, []string{"q1", "q2"}) {
		t.Errorf("published %q", got)
	}
}

// The line editor joins a bracketed paste into one message; /exit leaves.
func TestEditorPasteAndExit(t *testing.T) {
	p := &idler{busy: make(chan struct{})}
	in := strings.NewReader("\x1b[200~one\ntwo\x1b[201~\nthree\n/exit\n")
	c := New(Options{In: in, Out: io.Discard, Terminal: true})
	if err := c.Start(context.Background(), p); !errors.Is(err, ErrQuit) {
		t.Fatalf("Start = %v", err)
	}
	if got := p.published(); !cmp.Equal(got, []string{"one\ntwo", "three"}) {
		t.Errorf("published %q", got)
	}
}
