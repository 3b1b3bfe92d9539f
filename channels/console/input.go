package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/deerflow/deerflow/bus"
)

// Idler is a Publisher that can wait until the work it was given is done
// (the router does).
type Idler interface {
	// WaitIdle blocks until no queued or running work is left, or ctx
	// is done.
	WaitIdle(ctx context.Context) error
}

// Start reads messages until the person leaves, the input ends or ctx is
// done, publishing each to b. On a terminal, Ctrl-D leaves at once (a
// running reply goes on until the app shuts down); the end of other input
// waits for the work it gave (when b is an Idler). In script mode each
// message is answered before the next is read, and at the end of the
// input Start returns ErrFailed if a reply failed.
func (c *Console) Start(ctx context.Context, b bus.Publisher) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next, keys, closeIn, err := c.input()
	if err != nil {
		return err
	}
	defer closeIn()
	done := make(chan struct{})
	defer func() { cancel(nil); <-done }()
	go func() {
		defer close(done)
		c.interrupts(ctx, cancel, b, keys)
	}()

	// The reader is not waited for: a read of a terminal or stdin cannot
	// be interrupted, and ends when the process does.
	lines, errc := make(chan string), make(chan error, 1)
	go func() {
		for {
			text, err := next()
			if err != nil {
				errc <- err
				return
			}
			select {
			case lines <- text:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case err := <-errc:
			return c.ended(ctx, b, err)
		case text := <-lines:
			if err := c.handle(ctx, b, text); err != nil {
				return err
			}
		}
	}
}

// input returns the source of messages, the channel Ctrl-C presses come
// on (a terminal's) and what gives the input back at the end.
func (c *Console) input() (next func() (string, error), keys <-chan struct{}, closeIn func(), err error) {
	if c.o.Terminal {
		e, keys, err := c.openEditor()
		if err != nil {
			return nil, nil, nil, err
		}
		return e.next, keys, e.close, nil
	}
	sc := bufio.NewScanner(c.o.In)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	next = func() (string, error) {
		if sc.Scan() {
			return sc.Text(), nil
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return next, nil, func() {}, nil
}

// handle publishes one message, or leaves on /exit.
func (c *Console) handle(ctx context.Context, b bus.Publisher, text string) error {
	text = strings.TrimSpace(text)
	switch text {
	case "":
		return nil
	case "/exit", "/quit":
		if err := c.outcome(); err != nil {
			return err
		}
		return ErrQuit
	}
	if err := b.Publish(ctx, c.inbound(text)); err != nil {
		return err
	}
	if !c.o.Terminal {
		return c.waitIdle(ctx, b)
	}
	return nil
}

// ended is Start's end when the input ended with err.
func (c *Console) ended(ctx context.Context, b bus.Publisher, err error) error {
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("console: read: %w", err)
	}
	c.mu.Lock()
	raw := c.fd >= 0
	c.mu.Unlock()
	if raw {
		return nil // Ctrl-D: the person leaves
	}
	if err := c.waitIdle(ctx, b); err != nil {
		return err
	}
	return c.outcome()
}

// outcome is ErrFailed when a reply failed in script mode.
func (c *Console) outcome() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return ErrFailed
	}
	return nil
}

func (c *Console) waitIdle(ctx context.Context, b bus.Publisher) error {
	i, ok := b.(Idler)
	if !ok {
		return nil
	}
	if err := i.WaitIdle(ctx); err != nil {
		return context.Cause(ctx)
	}
	return nil
}

// interrupts handles Ctrl-C (a key on the terminal, or SIGINT): it stops
// the running reply, or ends Start with ErrQuit when none runs.
func (c *Console) interrupts(ctx context.Context, cancel context.CancelCauseFunc, b bus.Publisher, keys <-chan struct{}) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
		case <-keys:
		}
		if c.o.Busy == nil || !c.o.Busy() {
			cancel(ErrQuit)
			return
		}
		b.Publish(ctx, c.inbound("/stop"))
	}
}

func (c *Console) inbound(text string) *bus.Inbound {
	return &bus.Inbound{Channel: Name, ChatID: ChatID, UserID: c.o.User, UserName: c.o.User, Text: text}
}
