package console

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/deerflow/deerflow/bus"
)

// live is the streamed text on screen since the last line that was not
// part of the answer: what a retry erases. Every write ends with a
// newline, so the prompt (and what is being typed) always sits on its own
// line below; the unfinished last line is redrawn as deltas extend it.
type live struct {
	line     string // the last line, not ended yet
	lineRows int    // rows line takes on screen; 0 when empty
	rows     int    // rows of all the text, lineRows included
}

// add records text as written after what is shown, at cols columns.
func (l *live) add(text string, cols int) {
	parts := strings.Split(l.line+text, "\n")
	l.rows -= l.lineRows
	for _, p := range parts[:len(parts)-1] {
		l.rows += rowsOf(p, cols)
	}
	l.line = parts[len(parts)-1]
	l.lineRows = 0
	if l.line != "" {
		l.lineRows = rowsOf(l.line, cols)
	}
	l.rows += l.lineRows
}

// rowsOf is how many rows s takes on a screen cols wide.
func rowsOf(s string, cols int) int {
	w := 0
	for _, r := range s {
		switch k := width.LookupRune(r).Kind(); {
		case r == '\t':
			w += 8 - w%8
		case r < ' ':
		case k == width.EastAsianWide || k == width.EastAsianFullwidth:
			w += 2
		default:
			w++
		}
	}
	if w == 0 {
		return 1
	}
	return (w + cols - 1) / cols
}

// up moves the cursor up n rows to the start of the line and clears
// everything below it.
func up(n int) string { return fmt.Sprintf("\x1b[%dA\r\x1b[J", n) }

// show shows out on the terminal. c.mu is held.
func (c *Console) show(out *bus.Outbound) error {
	var err error
	switch out.Kind {
	case bus.OutDelta:
		err = c.delta(out.Text)
	case bus.OutActivity:
		if out.Retry {
			err = c.retry()
			break
		}
		err = c.line(dim("  › " + oneLine(out.Text)))
	case bus.OutFile:
		if out.File != nil {
			err = c.line(fmt.Sprintf("file: %s (%s)", out.File.Path, size(out.File.Size)))
		}
	case bus.OutMessage, bus.OutEdit:
		text := withExit(strings.TrimRight(out.Text, "\n"))
		if out.Failed {
			text = "\x1b[33m" + text + "\x1b[0m"
		}
		err = c.line(text)
	}
	if out.Final {
		c.live = live{}
	}
	return err
}

// delta extends the streamed answer by text, redrawing its last line.
func (c *Console) delta(text string) error {
	if text == "" {
		return nil
	}
	var b strings.Builder
	if c.live.lineRows > 0 {
		b.WriteString(up(c.live.lineRows))
	}
	shown := c.live.line + text
	b.WriteString(shown)
	if !strings.HasSuffix(shown, "\n") {
		b.WriteString("\n")
	}
	cols, _ := c.size()
	c.live.add(text, cols)
	_, err := io.WriteString(c.w(), b.String())
	return err
}

// retry erases the text streamed since the last tool line, which the
// model is writing again, and says so. Text that scrolled off the top
// cannot be erased; then only the note shows where the new text starts.
func (c *Console) retry() error {
	var b strings.Builder
	if _, rows := c.size(); c.live.rows > 0 && c.live.rows < rows {
		b.WriteString(up(c.live.rows))
	}
	b.WriteString(dim("  › the answer was cut off; writing it again") + "\n")
	c.live = live{}
	_, err := io.WriteString(c.w(), b.String())
	return err
}

// line shows s on lines of its own, after the streamed text.
func (c *Console) line(s string) error {
	c.live = live{}
	_, err := io.WriteString(c.w(), s+"\n")
	return err
}

// w is where terminal output goes: through the line editor once Start
// has set it up, so the prompt and the typed line are redrawn below.
func (c *Console) w() io.Writer {
	if c.t != nil {
		return c.t
	}
	return c.o.Out
}

// size is the terminal's width and height, kept in step with the line
// editor; 80×24 when it cannot be read.
func (c *Console) size() (cols, rows int) {
	cols, rows = 80, 24
	if c.fd < 0 {
		return cols, rows
	}
	if w, h, err := term.GetSize(c.fd); err == nil && w > 0 && h > 0 {
		cols, rows = w, h
		c.t.SetSize(w, h)
	}
	return cols, rows
}
