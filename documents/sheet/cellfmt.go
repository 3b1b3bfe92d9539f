package sheet

import (
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/documents/sheet/numfmt"
)

// cellFormats renders cell values as a workbook's styles show them: the
// number format of each cell format (XF), built-in or the workbook's
// own, parsed once. Both the .xlsx and the .xls reader use it.
type cellFormats struct {
	xfFormat []int          // XF index -> number format id
	codes    map[int]string // the workbook's own format codes by id
	date1904 bool
	parsed   map[int]*numfmt.Format // by XF index
}

// newCellFormats returns an empty set: every cell General.
func newCellFormats() *cellFormats {
	return &cellFormats{codes: map[int]string{}, parsed: map[int]*numfmt.Format{}}
}

// format returns the parsed number format of XF xf.
func (c *cellFormats) format(xf int) *numfmt.Format {
	if f, ok := c.parsed[xf]; ok {
		return f
	}
	id := 0
	if xf >= 0 && xf < len(c.xfFormat) {
		id = c.xfFormat[xf]
	}
	code, ok := c.codes[id]
	if !ok {
		code = numfmt.Builtin(id)
	}
	f := numfmt.Parse(code)
	c.parsed[xf] = f
	return f
}

// number renders a number in XF xf's format.
func (c *cellFormats) number(xf int, v float64) string {
	return c.format(xf).Number(v, c.date1904)
}

// text renders a text in XF xf's format (its text section, if any).
func (c *cellFormats) text(xf int, s string) string { return c.format(xf).Text(s) }

// boolText is how Excel shows a logical value.
func boolText(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// isoDate renders an ISO 8601 date cell (t="d") in XF xf's format when
// that is a date format, else as written.
func (c *cellFormats) isoDate(xf int, s string) string {
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02", "15:04:05"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	f := c.format(xf)
	if err != nil || !f.IsDate() {
		return s
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if c.date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if t.Year() == 0 { // a time of day only
		t = t.AddDate(1899, 11, 29)
	}
	serial := float64(t.Sub(base)) / float64(24*time.Hour)
	if !c.date1904 && serial < 61 && serial >= 1 {
		serial-- // before Excel's fictitious 29 February 1900
	}
	return f.Number(serial, c.date1904)
}

// parseNumber reads a cell's number; ok is false for text that is none.
func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}
