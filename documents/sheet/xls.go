package sheet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/richardlehane/mscfb"
	"github.com/xuri/excelize/v2"
)

// ConvertXLS converts an Excel 97-2003 (BIFF8) workbook. The records are
// read here (github.com/shakinm/xlsReader was tried and gave wrong
// negative numbers, no formula results, broken date formats and invalid
// UTF-8 on LibreOffice's files); the values are then put in an in-memory
// excelize workbook with their number formats so that they are displayed
// exactly as an .xlsx's would be, and rendered the same way.
func ConvertXLS(ctx context.Context, path string, size int64, lim doc.Limits) (out *doc.Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w (the workbook could not be read)", doc.ErrDamaged)
		}
	}()
	stream, err := readXLSStream(ctx, path, lim)
	if err != nil {
		return nil, err
	}
	book, err := parseXLSGlobals(stream)
	if err != nil {
		return nil, err
	}
	f := excelize.NewFile()
	defer f.Close()
	if book.date1904 {
		yes := true
		_ = f.SetWorkbookProps(&excelize.WorkbookPropsOptions{Date1904: &yes})
	}
	w := doc.NewWriter(lim.MaxOutput)
	for i, sh := range book.sheets {
		if w.Full() {
			break
		}
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		c, err := xlsSheet(ctx, f, book, stream, i, sh)
		if err != nil {
			return nil, err
		}
		c.write(w, sh.name)
	}
	return &doc.Doc{Format: doc.XLS, Markdown: w.String(), Units: len(book.sheets), Cut: w.Full()}, nil
}

// readXLSStream returns the "Workbook" stream of the compound file at
// path. A zip is an .xlsx misnamed (ErrUnsupported would be unhelpful, so
// it is said), an encrypted OOXML package is ErrEncrypted, text and other
// files are ErrDamaged, an Excel 5 "Book" stream is ErrUnsupported.
func readXLSStream(ctx context.Context, path string, lim doc.Limits) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(fh, head)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w (the file is empty)", doc.ErrDamaged)
	case bytes.HasPrefix(head[:n], []byte("PK\x03\x04")):
		return nil, fmt.Errorf("%w (it is a newer .xlsx workbook named .xls)", doc.ErrDamaged)
	case !bytes.Equal(head[:n], doc.CFBMagic):
		return nil, fmt.Errorf("%w (not an Excel 97-2003 workbook)", doc.ErrDamaged)
	}
	cf, err := mscfb.New(fh)
	if err != nil {
		return nil, fmt.Errorf("%w (broken compound file: %v)", doc.ErrDamaged, err)
	}
	for e, err := cf.Next(); err == nil; e, err = cf.Next() {
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		switch e.Name {
		case "EncryptedPackage", "EncryptionInfo":
			return nil, fmt.Errorf("%w (the workbook is encrypted)", doc.ErrEncrypted)
		case "Book":
			return nil, fmt.Errorf("%w (Excel 5.0/95 workbooks are not supported)", doc.ErrUnsupported)
		case "Workbook":
			if st, err := fh.Stat(); err == nil && e.Size > st.Size() {
				return nil, fmt.Errorf("%w (the workbook stream is larger than the file)", doc.ErrDamaged)
			}
			if e.Size > lim.MaxUnpacked {
				return nil, fmt.Errorf("%w (the workbook is more than %d MB)", doc.ErrTooLarge, lim.MaxUnpacked>>20)
			}
			data, err := io.ReadAll(io.LimitReader(e, e.Size))
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%w (cannot read the workbook stream)", doc.ErrDamaged)
			}
			return data, nil
		}
	}
	return nil, fmt.Errorf("%w (no workbook stream)", doc.ErrDamaged)
}

// xlsCells puts one sheet's cell values into an excelize sheet, with the
// number format of each cell's XF, keeping only the rows and columns that
// are shown; the extent of the rest is recorded.
type xlsCells struct {
	f       *excelize.File
	book    *xlsBook
	sheet   string
	styles  map[uint16]int // XF index -> excelize style id
	lastRow int            // 1 + the last row with a value
	lastCol int            // 1 + the last column with a value
	pending *[2]int        // the cell of a string formula, for its STRING
}

// xlsSheet reads sheet i's records into f and collects its displayed rows.
func xlsSheet(ctx context.Context, f *excelize.File, book *xlsBook, stream []byte, i int, ref xlsSheetRef) (*sheetCollector, error) {
	name := fmt.Sprintf("S%d", i+1) // the real name may not suit excelize; it is only a key
	if i == 0 {
		if err := f.SetSheetName("Sheet1", name); err != nil {
			return nil, fmt.Errorf("%w (%v)", doc.ErrDamaged, err)
		}
	} else if _, err := f.NewSheet(name); err != nil {
		return nil, fmt.Errorf("%w (%v)", doc.ErrDamaged, err)
	}
	x := &xlsCells{f: f, book: book, sheet: name, styles: map[uint16]int{}}
	recs := biffRecords(stream, ref.off)
	for n, r := range recs {
		if n%1024 == 0 {
			if err := doc.TimedOut(ctx); err != nil {
				return nil, err
			}
		}
		x.record(r)
	}
	c := &sheetCollector{}
	if err := xlsxSheet(ctx, f, name, c); err != nil {
		return nil, err
	}
	c.lastFull = max(c.lastFull, x.lastRow)
	c.wideCols = max(c.wideCols, x.lastCol)
	return c, nil
}

// record stores the value of one cell record.
func (x *xlsCells) record(r biffRecord) {
	d := r.data
	if len(d) < 6 {
		return
	}
	row, col, xf := int(binary.LittleEndian.Uint16(d)), int(binary.LittleEndian.Uint16(d[2:])), binary.LittleEndian.Uint16(d[4:])
	switch r.typ {
	case biffNumber:
		if len(d) >= 14 {
			x.set(row, col, xf, math.Float64frombits(binary.LittleEndian.Uint64(d[6:])))
		}
	case biffRK:
		if len(d) >= 10 {
			x.set(row, col, xf, rkNumber(binary.LittleEndian.Uint32(d[6:])))
		}
	case biffMulRK:
		for p := 4; p+6 <= len(d)-2; p += 6 {
			x.set(row, col, binary.LittleEndian.Uint16(d[p:]), rkNumber(binary.LittleEndian.Uint32(d[p+2:])))
			col++
		}
	case biffLabelSST:
		if len(d) >= 10 {
			if k := int(binary.LittleEndian.Uint32(d[6:])); k < len(x.book.sst) {
				x.set(row, col, xf, x.book.sst[k])
			}
		}
	case biffLabel, biffRString:
		s, _ := biffString16(d[6:])
		x.set(row, col, xf, s)
	case biffBoolErr:
		if len(d) >= 8 {
			x.set(row, col, xf, boolErr(d[6], d[7] == 1))
		}
	case biffFormula:
		x.formula(row, col, xf, d)
	case biffString:
		if x.pending != nil {
			s, _ := biffString16(d)
			x.set(x.pending[0], x.pending[1], 0, s)
			x.pending = nil
		}
	}
}

// formula stores a formula's cached result; a string result follows in
// the next STRING record.
func (x *xlsCells) formula(row, col int, xf uint16, d []byte) {
	if len(d) < 14 {
		return
	}
	res := d[6:14]
	if res[6] != 0xFF || res[7] != 0xFF {
		x.set(row, col, xf, math.Float64frombits(binary.LittleEndian.Uint64(res)))
		return
	}
	switch res[0] {
	case 0:
		x.pending = &[2]int{row, col}
	case 1:
		x.set(row, col, xf, res[2] != 0)
	case 2:
		x.set(row, col, xf, boolErr(res[2], true))
	}
}

// boolErr is the value of a BOOLERR cell: TRUE/FALSE or an error text.
func boolErr(v byte, isErr bool) any {
	if !isErr {
		return v != 0
	}
	errs := map[byte]string{0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!", 0x2A: "#N/A"}
	if s, ok := errs[v]; ok {
		return s
	}
	return "#ERROR!"
}

// set stores a value in the excelize sheet when its cell is shown, with
// the number format of its XF for numbers.
func (x *xlsCells) set(row, col int, xf uint16, v any) {
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return
	}
	x.lastRow, x.lastCol = max(x.lastRow, row+1), max(x.lastCol, col+1)
	if row >= maxSheetRows || col >= maxSheetCols {
		return
	}
	cell, err := excelize.CoordinatesToCellName(col+1, row+1)
	if err != nil {
		return
	}
	if err := x.f.SetCellValue(x.sheet, cell, v); err != nil {
		return
	}
	if _, ok := v.(float64); ok {
		if st := x.style(xf); st != 0 {
			_ = x.f.SetCellStyle(x.sheet, cell, cell, st)
		}
	}
}

// style returns the excelize style for an XF's number format, 0 for
// General.
func (x *xlsCells) style(xf uint16) int {
	if st, ok := x.styles[xf]; ok {
		return st
	}
	var fmtID uint16
	if int(xf) < len(x.book.xfFormat) {
		fmtID = x.book.xfFormat[xf]
	}
	var style excelize.Style
	if code, ok := x.book.formats[fmtID]; ok && fmtID >= 50 {
		style.CustomNumFmt = &code
	} else if fmtID > 0 && fmtID < 50 {
		style.NumFmt = int(fmtID)
	}
	st := 0
	if style.CustomNumFmt != nil || style.NumFmt != 0 {
		st, _ = x.f.NewStyle(&style)
	}
	x.styles[xf] = st
	return st
}
