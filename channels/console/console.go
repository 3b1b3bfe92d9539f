// Package console is the terminal channel behind `deerflow chat`: it reads
// lines from a reader, publishes them to the bus like any platform would,
// and prints answers as they stream in, with one dim line per tool call.
package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/deerflow/deerflow/bus"
)

// Name is the console's channel name.
const Name = "console"

// ChatID is the console's one conversation.
const ChatID = "local"

// Options configures a Console.
type Options struct {
	In     io.Reader
	Out    io.Writer
	User   string // the user id recorded for typed messages
	Color  bool   // ANSI styling (dim tool lines); set when Out is a terminal
	Prompt string // printed when ready for input; "" prints none
}

// Console is a terminal channel.
type Console struct {
	o Options

	mu      sync.Mutex
	midLine bool // the cursor is not at the start of a line
}

// New returns a Console.
func New(o Options) *Console {
	if o.User == "" {
		o.User = "local"
	}
	return &Console{o: o}
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
	var b strings.Builder
	switch out.Kind {
	case bus.OutDelta:
		b.WriteString(out.Text)
		if out.Text != "" {
			c.midLine = !strings.HasSuffix(out.Text, "\n")
		}
	case bus.OutActivity:
		c.newline(&b)
		b.WriteString(c.dim("  › " + oneLine(out.Text)))
		b.WriteString("\n")
	case bus.OutFile:
		c.newline(&b)
		if out.File != nil {
			fmt.Fprintf(&b, "file: %s (%s)\n", out.File.Path, size(out.File.Size))
		}
	case bus.OutMessage, bus.OutEdit:
		c.newline(&b)
		text := strings.TrimRight(out.Text, "\n")
		if out.Failed && c.o.Color {
			text = "\x1b[33m" + text + "\x1b[0m"
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	if out.Final {
		c.newline(&b)
		b.WriteString(c.o.Prompt)
	}
	if _, err := io.WriteString(c.o.Out, b.String()); err != nil {
		return nil, fmt.Errorf("console: write: %w", err)
	}
	return nil, nil
}

func (c *Console) newline(b *strings.Builder) {
	if c.midLine {
		b.WriteString("\n")
		c.midLine = false
	}
}

func (c *Console) dim(s string) string {
	if c.o.Color {
		return "\x1b[2m" + s + "\x1b[0m"
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// ErrQuit is returned by Start when the user typed /exit or /quit.
var ErrQuit = errors.New("console: quit")

// Idler is a Publisher that can wait until the work it was given is done
// (the router does).
type Idler interface {
	// WaitIdle blocks until no queued or running work is left, or ctx
	// is done.
	WaitIdle(ctx context.Context) error
}

// Start reads lines until EOF, /exit or ctx is done, publishing each to b.
// At EOF it waits for queued work to finish when b is an Idler, so piped
// input gets its answers before Start returns.
func (c *Console) Start(ctx context.Context, b bus.Publisher) error {
	c.mu.Lock()
	io.WriteString(c.o.Out, c.o.Prompt)
	c.mu.Unlock()
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(c.o.In)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		errc <- sc.Err()
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if i, ok := b.(Idler); ok {
				if werr := i.WaitIdle(ctx); werr != nil {
					return werr
				}
			}
			return err
		case line := <-lines:
			text := strings.TrimSpace(line)
			switch text {
			case "":
				c.mu.Lock()
				io.WriteString(c.o.Out, c.o.Prompt)
				c.mu.Unlock()
				continue
			case "/exit", "/quit":
				return ErrQuit
			}
			if err := b.Publish(ctx, &bus.Inbound{Channel: Name, ChatID: ChatID, UserID: c.o.User, UserName: c.o.User, Text: text}); err != nil {
				return err
			}
		}
	}
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
