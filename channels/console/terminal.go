package console

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

const (
	prompt     = "\x1b[1m›\x1b[0m "
	morePrompt = "\x1b[2m…\x1b[0m " // the lines of a paste after the first
)

// editor reads messages from a terminal in raw mode with x/term's line
// editor.
type editor struct {
	t     *term.Terminal
	fd    int         // the terminal in raw mode, with state
	state *term.State // nil when In is not a terminal
	hist  *history
}

// openEditor sets up the line editor on In and Out, putting In into raw
// mode when it is a terminal (a test may hand it a pipe of key presses).
// Ctrl-C presses arrive on the returned channel.
func (c *Console) openEditor() (*editor, <-chan struct{}, error) {
	e := &editor{hist: openHistory(c.o.History, historyMax)}
	in, fd := c.o.In, -1
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fd = int(f.Fd())
		state, err := term.MakeRaw(fd)
		if err != nil {
			e.hist.close()
			return nil, nil, fmt.Errorf("console: raw mode: %w", err)
		}
		e.fd, e.state = fd, state
	}
	keys := make(chan struct{}, 1)
	e.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{&ctrlC{r: in, keys: keys}, c.o.Out}, prompt)
	e.t.History = e.hist
	e.t.SetBracketedPasteMode(true)
	c.mu.Lock()
	c.t, c.fd = e.t, fd
	c.size() // tells the editor the width
	c.mu.Unlock()
	return e, keys, nil
}

// next returns the next message: a typed line, or the lines of a
// bracketed paste and the line they end on. io.EOF is Ctrl-D on an empty
// line.
func (e *editor) next() (string, error) {
	var pasted []string
	for {
		line, err := e.t.ReadLine()
		if errors.Is(err, term.ErrPasteIndicator) {
			pasted = append(pasted, line)
			e.t.SetPrompt(morePrompt)
			continue
		}
		e.t.SetPrompt(prompt)
		if err != nil {
			return "", err
		}
		return strings.Join(append(pasted, line), "\n"), nil
	}
}

// close gives the terminal back as it was.
func (e *editor) close() {
	e.t.SetBracketedPasteMode(false)
	if e.state != nil {
		term.Restore(e.fd, e.state)
	}
	e.hist.close()
}

// ctrlC passes a raw terminal's input on without its Ctrl-C presses,
// which it reports on keys instead: x/term's line editor reads Ctrl-C as
// the end of input, and raw mode raises no SIGINT.
type ctrlC struct {
	r    io.Reader
	keys chan<- struct{}
}

func (k *ctrlC) Read(p []byte) (int, error) {
	for {
		n, err := k.r.Read(p)
		m := 0
		for _, ch := range p[:n] {
			if ch == 3 {
				select {
				case k.keys <- struct{}{}:
				default:
				}
				continue
			}
			p[m] = ch
			m++
		}
		if m > 0 || n == 0 || err != nil {
			return m, err
		}
	}
}
