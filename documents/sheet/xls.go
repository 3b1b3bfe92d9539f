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
)

// ConvertXLS converts an Excel 97-2003 (BIFF8) workbook. The records are
// read here (github.com/shakinm/xlsReader was tried and gave wrong
// negative numbers, no formula results, broken date formats and invalid
// UTF-8 on LibreOffice's files); the values are then rendered with the
// number formats of their XF records by the same renderer as an .xlsx's.
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
	formats := book.cellFormats()
	w := doc.NewWriter(lim.MaxOutput)
	for _, sh := range book.sheets {
		if w.Full() {
			break
		}
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		c, err := xlsSheet(ctx, formats, book, stream, sh)
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

// xlsCells holds one sheet's displayed values, keeping only the rows and
// columns that are shown; the extent of the rest is recorded.
type xlsCells struct {
	formats *cellFormats
	book    *xlsBook
	rows    [][]string // by row, each at most maxSheetCols wide
	lastRow int        // 1 + the last row with a value
	lastCol int        // 1 + the last column with a value
	pending *[2]int    // the cell of a string formula, for its STRING
}

// xlsSheet reads one sheet's records and collects its displayed rows.
func xlsSheet(ctx context.Context, formats *cellFormats, book *xlsBook, stream []byte, ref xlsSheetRef) (*sheetCollector, error) {
	x := &xlsCells{formats: formats, book: book}
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
	for _, row := range x.rows {
		c.add(row)
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

// set stores a value's displayed text when its cell is shown, numbers in
// the number format of their XF.
func (x *xlsCells) set(row, col int, xf uint16, v any) {
	var s string
	switch v := v.(type) {
	case string:
		s = x.formats.text(int(xf), v)
	case bool:
		s = boolText(v)
	case float64:
		s = x.formats.number(int(xf), v)
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	x.lastRow, x.lastCol = max(x.lastRow, row+1), max(x.lastCol, col+1)
	if row >= maxSheetRows || col >= maxSheetCols {
		return
	}
	for len(x.rows) <= row {
		x.rows = append(x.rows, nil)
	}
	for len(x.rows[row]) <= col {
		x.rows[row] = append(x.rows[row], "")
	}
	x.rows[row][col] = s
}

// cellFormats returns the renderer of the workbook's number formats.
func (b *xlsBook) cellFormats() *cellFormats {
	f := newCellFormats()
	f.date1904 = b.date1904
	for _, id := range b.xfFormat {
		f.xfFormat = append(f.xfFormat, int(id))
	}
	for id, code := range b.formats {
		if id >= 50 || id >= 5 && id <= 8 || id >= 23 && id <= 36 || id >= 41 && id <= 44 {
			f.codes[int(id)] = code
		}
	}
	return f
}
