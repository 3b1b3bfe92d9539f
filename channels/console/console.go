// Package console is the terminal channel behind `deerflow chat`: it reads
// a person's messages, publishes them to the bus like any platform would,
// and prints what comes back. It imports bus and nothing else of ours.
//
// On a terminal (Options.Terminal) the line is edited with
// golang.org/x/term in raw mode: arrows, history kept in a file, a
// bracketed multi-line paste sent as one message. Answers stream in above
// the prompt without disturbing what is being typed, with one dim line per
// tool call. Ctrl-C stops the running reply, or leaves when none runs;
// Ctrl-D on an empty line, /exit and /quit leave.
//
// Anywhere else (a script: `echo question | deerflow chat`) every line is
// a question answered before the next one is read. Out gets only the
// answers, each once, as it ended; tool lines, files and failure sentences
// go to Err, and Start returns ErrFailed at the end when a reply failed.
package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/deerflow/deerflow/bus"
)

// Name is the console's channel name.
const Name = "console"

// ChatID is the console's one conversation.
const ChatID = "local"

// Options configures a Console.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Err gets, in script mode, tool lines, files and failure sentences,
	// so Out holds only answers; nil drops them.
	Err  io.Writer
	User string // the user id recorded for typed messages; "" is "local"
	// Terminal says In (an *os.File) and Out are one terminal: line
	// editing, history, ANSI styling. False is script mode.
	Terminal bool
	// History is the file typed lines are kept in on a terminal (0600, the
	// last historyMax lines); "" keeps them for this session only.
	History string
	// Busy reports whether a reply is running: Ctrl-C then sends /stop.
	// nil: Ctrl-C always leaves.
	Busy func() bool
}

// ErrQuit is returned by Start when the person left: /exit, /quit, or
// Ctrl-C with nothing running.
var ErrQuit = errors.New("console: quit")

// ErrFailed is returned by Start in script mode when a reply failed (the
// model could not be reached, the run was stopped…); its sentence went to
// Options.Err.
var ErrFailed = errors.New("console: a reply failed")

// Console is a terminal channel.
type Console struct {
	o Options

	mu     sync.Mutex
	t      *term.Terminal // set by Start on a terminal
	fd     int            // the terminal's file descriptor, with t
	live   live           // terminal: the streamed text a retry erases
	answer strings.Builder
	failed bool // script mode: a reply failed
}

// New returns a Console.
func New(o Options) *Console {
	if o.User == "" {
		o.User = "local"
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	return &Console{o: o, fd: -1}
}

// Name implements bus.Sender.
func (c *Console) Name() string { return Name }

// StreamsDeltas implements bus.DeltaStreamer: the terminal shows text as it
// arrives.
func (c *Console) StreamsDeltas() bool { return true }

// Send implements bus.Sender.
func (c *Console) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	if c.o.Terminal {
		err = c.show(out)
	} else {
		err = c.script(out)
	}
	if err != nil {
		return nil, fmt.Errorf("console: write: %w", err)
	}
	return nil, nil
}

// exitHelp is the console's own command, added under the command list.
const exitHelp = "/exit — leave the chat (or Ctrl-D)"

// withExit adds /exit to a reply listing the commands (/help's).
func withExit(text string) string {
	if strings.Contains(text, "\n/help — ") {
		return text + "\n" + exitHelp
	}
	return text
}

// script shows out in script mode: answers to Out once they end, the rest
// to Err.
func (c *Console) script(out *bus.Outbound) error {
	switch out.Kind {
	case bus.OutDelta:
		c.answer.WriteString(out.Text)
		if out.Final {
			text := strings.TrimSpace(c.answer.String())
			c.answer.Reset()
			if text != "" {
				return writeLine(c.o.Out, text)
			}
		}
	case bus.OutActivity:
		if out.Retry {
			c.answer.Reset()
			return nil
		}
		return writeLine(c.o.Err, "  › "+oneLine(out.Text))
	case bus.OutFile:
		if out.File != nil {
			return writeLine(c.o.Err, fmt.Sprintf("file: %s (%s)", out.File.Path, size(out.File.Size)))
		}
	case bus.OutMessage, bus.OutEdit:
		c.answer.Reset()
		text := withExit(strings.TrimSpace(out.Text))
		if out.Failed {
			c.failed = c.failed || out.Final
			return writeLine(c.o.Err, text)
		}
		return writeLine(c.o.Out, text)
	}
	return nil
}

func writeLine(w io.Writer, s string) error {
	_, err := io.WriteString(w, s+"\n")
	return err
}

func dim(s string) string { return "\x1b[2m" + s + "\x1b[0m" }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
