package documents

import (
	"strings"
	"unicode/utf8"
)

// writer builds Markdown up to max bytes; past that it keeps nothing more
// and reports the cut.
type writer struct {
	b   strings.Builder
	max int
	cut bool
}

func newWriter(max int) *writer { return &writer{max: max} }

// full reports whether the limit was reached; converters stop then.
func (w *writer) full() bool { return w.cut }

// WriteString appends s, or as much of it as fits (whole runes).
func (w *writer) WriteString(s string) {
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

// block appends a paragraph-level block, separated from the previous one
// by a blank line.
func (w *writer) block(s string) {
	s = strings.TrimRight(s, "\n ")
	if s == "" {
		return
	}
	if w.b.Len() > 0 {
		w.WriteString("\n\n")
	}
	w.WriteString(s)
}

// String is the Markdown so far.
func (w *writer) String() string { return w.b.String() }

// table renders rows as a GitHub-flavoured Markdown table, the first row
// as its header; rows are padded to the widest. Cells are made safe for a
// table: pipes escaped, line breaks as <br>.
func table(rows [][]string) string {
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
				c = cell(r[i])
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

func cell(s string) string { return cellReplacer.Replace(strings.TrimSpace(s)) }
