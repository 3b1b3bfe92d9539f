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
	"github.com/xuri/excelize/v2"
)

// Per-sheet caps: a sheet's table keeps at most this many rows and
// columns; the model gets the shape of a big sheet, not all of it.
const (
	maxSheetRows = 1000
	maxSheetCols = 100
)

// ConvertXLSX converts an Excel workbook: each sheet under "## Sheet:
// name" as a table of its values as Excel displays them (number and date
// formats applied), which is why excelize is used.
func ConvertXLSX(ctx context.Context, path string, size int64, lim doc.Limits) (out *doc.Doc, err error) {
	z, err := doc.OpenZip(path, lim)
	if err != nil {
		return nil, err
	}
	z.Close()
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w (the workbook could not be read)", doc.ErrDamaged)
		}
	}()
	f, err := excelize.OpenFile(path, excelize.Options{
		UnzipSizeLimit:    lim.MaxUnpacked,
		UnzipXMLSizeLimit: min(lim.MaxUnpacked, 16<<20),
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", doc.ErrDamaged, err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	w := doc.NewWriter(lim.MaxOutput)
	for _, name := range sheets {
		if w.Full() {
			break
		}
		var c sheetCollector
		if err := xlsxSheet(ctx, f, name, &c); err != nil {
			return nil, err
		}
		c.write(w, name)
	}
	return &doc.Doc{Format: doc.XLSX, Markdown: w.String(), Units: len(sheets), Cut: w.Full()}, nil
}

// xlsxSheet reads the displayed values of one sheet's rows into c.
func xlsxSheet(ctx context.Context, f *excelize.File, name string, c *sheetCollector) error {
	rows, err := f.Rows(name)
	if err != nil {
		return fmt.Errorf("%w (sheet %q: %v)", doc.ErrDamaged, name, err)
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		if n%256 == 0 {
			if err := doc.TimedOut(ctx); err != nil {
				return err
			}
		}
		cols, err := rows.Columns()
		if err != nil {
			return fmt.Errorf("%w (sheet %q: %v)", doc.ErrDamaged, name, err)
		}
		c.add(cols)
	}
	if err := rows.Error(); err != nil {
		return fmt.Errorf("%w (sheet %q: %v)", doc.ErrDamaged, name, err)
	}
	return nil
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
		c.rows = append(c.rows, append([]string(nil), cells[:min(end, maxSheetCols)]...))
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
