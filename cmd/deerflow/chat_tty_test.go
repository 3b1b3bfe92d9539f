package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

const ptyCols = 100

// ttySession is `deerflow chat` on a real pseudo-terminal: keys go in raw,
// as a person types them, and the screen gets what the terminal would
// draw.
type ttySession struct {
	t      *testing.T
	app    *app
	keys   *os.File // the pty's master side
	screen *screen
	done   chan error
	close  func() // leaves if still there and shuts the app down; once
}

func startTTY(t *testing.T, cfg *config.Config) *ttySession {
	t.Helper()
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: ptyCols}); err != nil {
		t.Fatal(err)
	}
	ptmx = pollable(t, ptmx)
	s := &ttySession{t: t, app: a, keys: ptmx, screen: newScreen(), done: make(chan error, 1)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(s.screen, ptmx)
	}()
	go func() { s.done <- converse(context.Background(), a, tty, tty, io.Discard, true) }()
	s.close = sync.OnceFunc(func() {
		io.WriteString(ptmx, "\x04") // Ctrl-D, in case the test did not leave
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("the console did not end")
		}
		a.shutdown(5 * time.Second)
		ptmx.Close() // ends the copy, and the console's read of tty
		<-copied
		tty.Close()
	})
	t.Cleanup(s.close)
	s.screen.waitFor(t, "›", 1) // raw mode is on once the prompt shows
	return s
}

// pollable returns f reopened so that Close ends a Read under way (Fd,
// which pty.Open calls, leaves a file blocking).
func pollable(t *testing.T, f *os.File) *os.File {
	t.Helper()
	fd, err := syscall.Dup(int(f.Fd()))
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// typ sends key presses.
func (s *ttySession) typ(keys string) {
	s.t.Helper()
	if _, err := io.WriteString(s.keys, keys); err != nil {
		s.t.Fatal(err)
	}
}

// left waits until the console has ended, by itself.
func (s *ttySession) left() {
	s.t.Helper()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("console: %v", err)
		}
		s.done <- nil
	case <-time.After(30 * time.Second):
		s.t.Fatalf("the console did not leave; the screen shows:\n%s", s.shown())
	}
}

// shown is what the terminal shows.
func (s *ttySession) shown() string { return render(s.screen.String(), ptyCols) }

const (
	keyLeft = "\x1b[D"
	keyUp   = "\x1b[A"
)

func TestChatTerminalEditingAndHistory(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "first reply"}, fakeopenai.Turn{Text: "second reply"})
	dir := t.TempDir()
	s := startTTY(t, testConfig(t, fake, dir))
	s.typ("helo" + keyLeft + "l\r")
	s.screen.waitFor(t, "first reply", 1)
	s.typ(keyUp + "\r") // the previous question again
	s.screen.waitFor(t, "second reply", 1)
	s.typ("\x04") // Ctrl-D
	s.left()

	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Last().Content != "hello" || reqs[1].Last().Content != "hello" {
		t.Fatalf("the model got %d requests; the first ends with %q", len(reqs), reqs[0].Last().Content)
	}
	path := filepath.Join(dir, "chat_history")
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "hello\n" {
		t.Errorf("history file = %q, %v", data, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("history file mode = %v, %v", st.Mode(), err)
	}

	// The next session recalls it too.
	s.close()
	fake.Script(fakeopenai.Turn{Text: "third reply"})
	s = startTTY(t, testConfig(t, fake, dir))
	s.typ(keyUp + "\r")
	s.screen.waitFor(t, "third reply", 1)
	if got := fake.Requests()[2].Last().Content; got != "hello" {
		t.Errorf("recalled %q", got)
	}
	s.typ("/exit\r")
	s.left()
}

func TestChatTerminalPasteIsOneMessage(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "got both lines"})
	s := startTTY(t, testConfig(t, fake, t.TempDir()))
	s.typ("\x1b[200~line one\rline two\x1b[201~\r")
	s.screen.waitFor(t, "got both lines", 1)
	s.typ("/quit\r")
	s.left()
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Last().Content != "line one\nline two" {
		t.Fatalf("the model got %d requests, the first ending %q", len(reqs), reqs[0].Last().Content)
	}
}

func TestChatTerminalCtrlC(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(fakeopenai.Turn{Text: "This answer is very slow and will never finish", Chunk: 4, Delay: time.Hour, HoldAfter: 1})
	s := startTTY(t, testConfig(t, fake, t.TempDir()))
	s.typ("write slowly\r")
	fake.WaitRequests(1)
	s.typ("\x03") // stops the reply
	fake.WaitCancelled(1)
	s.screen.waitFor(t, "Stopped.", 1)
	if err := s.app.router.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.typ("\x03") // nothing runs: leaves
	s.left()
}

func TestChatTerminalHelpListsExit(t *testing.T) {
	fake := fakeopenai.New(t)
	s := startTTY(t, testConfig(t, fake, t.TempDir()))
	s.typ("/help\r")
	s.screen.waitFor(t, "/exit — leave the chat", 1)
	s.typ("\x04")
	s.left()
	if got := s.shown(); strings.Index(got, "/stop") > strings.Index(got, "/exit") {
		t.Errorf("/exit is not under the list:\n%s", got)
	}
}

// A stream cut off after part of the answer is retried; the terminal
// then shows the answer once, not the cut part and then the whole.
func TestChatTerminalRetryShowsAnswerOnce(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{Text: "The answer is forty-two, said the model.", CutAfter: 3},
		fakeopenai.Turn{Text: "The answer is forty-two, said the model."},
	)
	s := startTTY(t, testConfig(t, fake, t.TempDir()))
	s.typ("what is the answer?\r")
	s.screen.waitFor(t, "said the model.", 1)
	s.typ("\x04")
	s.left()
	if raw := s.screen.String(); strings.Count(raw, "The answer is") < 2 {
		t.Fatalf("the cut answer never showed; the test proves nothing:\n%q", raw)
	}
	got := s.shown()
	if n := strings.Count(got, "The answer is"); n != 1 {
		t.Errorf("the answer shows %d times:\n%s", n, got)
	}
	if !strings.Contains(got, "The answer is forty-two, said the model.") {
		t.Errorf("the whole answer is not shown:\n%s", got)
	}
}
