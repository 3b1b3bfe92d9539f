package tgmd

import (
	"strings"
	"unicode"

	east "github.com/yuin/goldmark/extension/ast"
)

// table renders a GFM table as aligned monospace text (Telegram has no
// tables).
func (r *mdRenderer) table(t *east.Table) string {
	rows, header := r.tableCells(t)
	ncol := 0
	for _, row := range rows {
		ncol = max(ncol, len(row))
	}
	if ncol == 0 {
		return ""
	}
	widths := make([]int, ncol)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], mdStringWidth(c))
		}
	}
	var lines []string
	for ri, row := range rows {
		lines = append(lines, tableRow(t, row, widths))
		if ri == 0 && header {
			var sep []string
			for _, w := range widths {
				sep = append(sep, strings.Repeat("-", max(w, 1)))
			}
			lines = append(lines, strings.Join(sep, "-+-"))
		}
	}
	body := strings.Join(lines, "\n")
	if strings.TrimSpace(body) == "" {
		return ""
	}
	return "<pre>" + mdEscape(body) + "</pre>"
}

// tableCells is the plain text of every cell, row by row, and whether the
// first row is a header.
func (r *mdRenderer) tableCells(t *east.Table) (rows [][]string, header bool) {
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok && len(rows) == 0 {
			header = true
		}
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.TrimSpace(r.plainString(cell)))
		}
		rows = append(rows, cells)
	}
	return rows, header
}

// tableRow lays out one row: each cell padded to its column's width and
// aligned as the table says, columns separated by " | ".
func tableRow(t *east.Table, row []string, widths []int) string {
	var b strings.Builder
	for i := range widths {
		if i > 0 {
			b.WriteString(" | ")
		}
		cell := ""
		if i < len(row) {
			cell = row[i]
		}
		align := east.AlignNone
		if i < len(t.Alignments) {
			align = t.Alignments[i]
		}
		pad := widths[i] - mdStringWidth(cell)
		left := 0
		switch align {
		case east.AlignRight:
			left = pad
		case east.AlignCenter:
			left = pad / 2
		}
		b.WriteString(strings.Repeat(" ", left))
		b.WriteString(cell)
		b.WriteString(strings.Repeat(" ", pad-left))
	}
	return strings.TrimRight(b.String(), " ")
}

// mdStringWidth approximates the monospace display width of s.
func mdStringWidth(s string) int {
	w := 0
	for _, c := range s {
		w += mdRuneWidth(c)
	}
	return w
}

func mdRuneWidth(c rune) int {
	switch {
	case c == 0x200D || c >= 0xFE00 && c <= 0xFE0F || c >= 0x1F3FB && c <= 0x1F3FF || c >= 0xE0000 && c <= 0xE007F:
		return 0 // joiners, variation selectors, skin tones, tags
	case unicode.In(c, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case c >= 0x1100 && c <= 0x115F, c >= 0x2E80 && c <= 0x303E, c >= 0x3041 && c <= 0x33FF,
		c >= 0x3400 && c <= 0x4DBF, c >= 0x4E00 && c <= 0x9FFF, c >= 0xA000 && c <= 0xA4CF,
		c >= 0xAC00 && c <= 0xD7A3, c >= 0xF900 && c <= 0xFAFF, c >= 0xFE30 && c <= 0xFE4F,
		c >= 0xFF00 && c <= 0xFF60, c >= 0xFFE0 && c <= 0xFFE6, c >= 0x1F300 && c <= 0x1F64F,
		c >= 0x1F900 && c <= 0x1F9FF, c >= 0x1F680 && c <= 0x1F6FF, c >= 0x20000 && c <= 0x3FFFD:
		return 2
	}
	return 1
}
