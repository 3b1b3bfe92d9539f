package doc

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Writer builds Markdown up to max bytes; past that it keeps nothing more
// and reports the cut.
type Writer struct {
	b   strings.Builder
	max int
	cut bool
}

func NewWriter(max int) *Writer { return &Writer{max: max} }

// Full reports whether the limit was reached; converters stop then.
func (w *Writer) Full() bool { return w.cut }

// WriteString appends s, or as much of it as fits (whole runes).
func (w *Writer) WriteString(s string) {
	if w.cut {
		return
	}
	room := w.max - w.b.Len()
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		s, w.cut = s[:room], true
	}
	w.b.WriteString(s)
}

// Block appends a paragraph-level block, separated from the previous one
// by a blank line.
func (w *Writer) Block(s string) {
	s = strings.TrimRight(s, "\n ")
	if s == "" {
		return
	}
	if w.b.Len() > 0 {
		w.WriteString("\n\n")
	}
	w.WriteString(s)
}

// Max is the most bytes the Writer keeps.
func (w *Writer) Max() int { return w.max }

// String is the Markdown so far.
func (w *Writer) String() string { return w.b.String() }

// Table renders rows as a GitHub-flavoured Markdown table, the first row
// as its header; rows are padded to the widest. Cells are made safe for a
// table: pipes escaped, line breaks as <br>.
func Table(rows [][]string) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width == 0 {
		return ""
	}
	var b strings.Builder
	line := func(r []string) {
		b.WriteString("|")
		for i := 0; i < width; i++ {
			c := ""
			if i < len(r) {
				c = Cell(r[i])
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
	for _, r := range rows[1:] {
		line(r)
	}
	return b.String()
}

var cellReplacer = strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>")

// Cell makes s safe for a table cell: trimmed, pipes escaped, line breaks as <br>.
func Cell(s string) string { return cellReplacer.Replace(strings.TrimSpace(s)) }

// Size renders a byte count for a person: "12 MB", "900 KB".
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", (n+1<<19)>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
