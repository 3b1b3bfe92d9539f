// Package sheet converts spreadsheets to Markdown: Excel workbooks (.xlsx
// and the older .xls) as one table per sheet under its name, with values
// as Excel displays them, and CSV/TSV files as one table.
//
// It imports documents/doc (Doc, Limits, the errors, the Markdown writer
// and the zip guard that refuses zip bombs).
package sheet

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
)

// Per-sheet caps: a sheet's table keeps at most this many rows and
// columns; the model gets the shape of a big sheet, not all of it.
const (
	maxSheetRows = 1000
	maxSheetCols = 100
)

// ConvertXLSX converts an Excel workbook: each sheet under "## Sheet:
// name" as a table of its values as Excel displays them (number and date
// formats applied). The package is read here, part by part through the
// zip guard, rather than with a spreadsheet library, whose start-up cost
// every process linking this package would pay.
func ConvertXLSX(ctx context.Context, path string, size int64, lim doc.Limits) (out *doc.Doc, err error) {
	z, err := doc.OpenZip(path, lim)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w (the workbook could not be read)", doc.ErrDamaged)
		}
	}()
	book, err := readXLSXBook(z)
	if err != nil {
		return nil, err
	}
	w := doc.NewWriter(lim.MaxOutput)
	for _, sh := range book.sheets {
		if w.Full() {
			break
		}
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		var c sheetCollector
		if sh.part != "" {
			r := &xlsxSheetReader{ctx: ctx, book: book, c: &c}
			if err := streamXML(z, sh.part, r.token); err != nil {
				return nil, err
			}
		}
		c.write(w, sh.name)
	}
	return &doc.Doc{Format: doc.XLSX, Markdown: w.String(), Units: len(book.sheets), Cut: w.Full()}, nil
}

// sheetCollector gathers a sheet's rows for a Markdown table: trailing
// empty cells and rows dropped, at most maxSheetRows rows and maxSheetCols
// columns kept, the rest counted.
type sheetCollector struct {
	rows     [][]string
	seen     int // rows added, empty ones included
	lastFull int // 1 + index of the last row with a value
	wideCols int // the most columns of any row, before the cap
}

// add takes the next row's cells.
func (c *sheetCollector) add(cells []string) {
	end := len(cells)
	for end > 0 && strings.TrimSpace(cells[end-1]) == "" {
		end--
	}
	c.addRow(cells, end)
}

// addRow takes the next row's cells, of which the first end columns hold
// the values (cells may be cut at maxSheetCols, end need not be).
func (c *sheetCollector) addRow(cells []string, end int) {
	c.seen++
	if end == 0 {
		if len(c.rows) < maxSheetRows {
			c.rows = append(c.rows, nil)
		}
		return
	}
	c.lastFull = c.seen
	c.wideCols = max(c.wideCols, end)
	if len(c.rows) < maxSheetRows {
		keep := min(end, maxSheetCols, len(cells))
		for keep > 0 && strings.TrimSpace(cells[keep-1]) == "" {
			keep--
		}
		c.rows = append(c.rows, append([]string(nil), cells[:keep]...))
	}
}

// write writes the sheet's heading and table, with a note on what was
// left out.
func (c *sheetCollector) write(w *doc.Writer, name string) {
	w.Block("## Sheet: " + strings.Join(strings.Fields(name), " "))
	rows := c.rows[:min(len(c.rows), c.lastFull)]
	if len(rows) == 0 {
		w.Block("(empty sheet)")
		return
	}
	w.Block(doc.Table(rows))
	var notes []string
	if more := c.lastFull - len(rows); more > 0 {
		notes = append(notes, strconv.Itoa(more)+" more rows not shown")
	}
	if more := c.wideCols - maxSheetCols; more > 0 {
		notes = append(notes, strconv.Itoa(more)+" more columns not shown")
	}
	if len(notes) > 0 {
		w.Block("(" + strings.Join(notes, "; ") + ")")
	}
}
