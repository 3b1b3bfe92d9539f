package sheet

import (
	"context"
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
)

// xlsxSheetReader takes the tokens of one worksheet part, row by row,
// and hands each row's displayed values to the collector: the sheet is
// never held whole, only its first maxSheetRows rows are kept.
type xlsxSheetReader struct {
	ctx  context.Context
	book *xlsxBook
	c    *sheetCollector

	row   int      // 1-based number of the current row, 0 before the first
	cells []string // the current row's values, at most maxSheetCols
	width int      // 1 + the last column of the row with a value

	col        int    // 0-based column of the current cell
	nextCol    int    // the column a cell without r= has
	typ, style string // the current cell's t= and s=
	val        strings.Builder
	inV, inT   bool // inside <v>, or <t> of an inline string
	phonetic   int  // depth of rPh, whose text is left out
}

// token handles one token of the worksheet.
func (r *xlsxSheetReader) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		return r.start(t)
	case xml.EndElement:
		switch t.Name.Local {
		case "c":
			r.endCell()
		case "row":
			r.c.addRow(r.cells, r.width)
		case "v":
			r.inV = false
		case "t":
			r.inT = false
		case "rPh":
			r.phonetic--
		}
	case xml.CharData:
		if r.inV || r.inT {
			r.val.Write(t)
		}
	}
	return nil
}

// start handles a start element: a row (rows left out before it count
// as empty), a cell, or a value.
func (r *xlsxSheetReader) start(t xml.StartElement) error {
	switch t.Name.Local {
	case "row":
		n := r.row + 1
		if v, err := strconv.Atoi(doc.Xattr(t, "r")); err == nil && v > r.row {
			n = v
		}
		for r.row+1 < n {
			r.row++
			r.c.addRow(nil, 0)
			if r.row%256 == 0 {
				if err := doc.TimedOut(r.ctx); err != nil {
					return err
				}
			}
		}
		r.row = n
		if n%256 == 0 {
			if err := doc.TimedOut(r.ctx); err != nil {
				return err
			}
		}
		r.cells, r.width, r.nextCol = r.cells[:0], 0, 0
	case "c":
		r.col = r.nextCol
		if c, ok := columnOf(doc.Xattr(t, "r")); ok {
			r.col = c
		}
		r.nextCol = r.col + 1
		r.typ, r.style = doc.Xattr(t, "t"), doc.Xattr(t, "s")
		r.val.Reset()
	case "v":
		r.inV = true
	case "t":
		r.inT = r.typ == "inlineStr" && r.phonetic == 0
	case "rPh":
		r.phonetic++
	}
	return nil
}

// endCell renders the finished cell and places it in the row.
func (r *xlsxSheetReader) endCell() {
	s := r.display()
	if strings.TrimSpace(s) == "" {
		return
	}
	r.width = max(r.width, r.col+1)
	if r.col >= maxSheetCols {
		return
	}
	for len(r.cells) <= r.col {
		r.cells = append(r.cells, "")
	}
	r.cells[r.col] = s
}

// display is the current cell's value as Excel shows it.
func (r *xlsxSheetReader) display() string {
	raw := r.val.String()
	xf, _ := strconv.Atoi(r.style)
	f := r.book.formats
	switch r.typ {
	case "s":
		if k, err := strconv.Atoi(strings.TrimSpace(raw)); err == nil && k >= 0 && k < len(r.book.strings) {
			return f.text(xf, r.book.strings[k])
		}
		return ""
	case "str", "inlineStr":
		return f.text(xf, unescapeOOXML(raw))
	case "b":
		return boolText(strings.TrimSpace(raw) == "1" || strings.TrimSpace(raw) == "true")
	case "e":
		return raw
	case "d":
		return f.isoDate(xf, strings.TrimSpace(raw))
	}
	if raw == "" {
		return ""
	}
	v, ok := parseNumber(raw)
	if !ok {
		return raw
	}
	return f.number(xf, v)
}

// columnOf returns the 0-based column of a cell reference such as "AB12".
func columnOf(ref string) (int, bool) {
	col, i := 0, 0
	for ; i < len(ref) && i < 4; i++ {
		c := ref[i] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		col = col*26 + int(c-'a'+1)
	}
	if i == 0 {
		return 0, false
	}
	return col - 1, true
}
