package sheet

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf16"

	"github.com/deerflow/deerflow/documents/doc"
)

// BIFF8 record types read from an Excel 97-2003 workbook stream.
const (
	biffFormula    = 0x0006
	biffEOF        = 0x000A
	biffFilePass   = 0x002F
	biffDateMode   = 0x0022
	biffContinue   = 0x003C
	biffBoundSheet = 0x0085
	biffMulRK      = 0x00BD
	biffRString    = 0x00D6
	biffXF         = 0x00E0
	biffSST        = 0x00FC
	biffLabelSST   = 0x00FD
	biffNumber     = 0x0203
	biffLabel      = 0x0204
	biffBoolErr    = 0x0205
	biffString     = 0x0207
	biffRK         = 0x027E
	biffFormat     = 0x041E
	biffBOF        = 0x0809
)

// biffRecord is one record of the stream: its type and body.
type biffRecord struct {
	typ  uint16
	data []byte
}

// biffRecords splits stream from offset off into records, up to and
// including the first EOF record; a record running past the end stops the
// list (a damaged tail loses only what is damaged).
func biffRecords(stream []byte, off int) []biffRecord {
	var out []biffRecord
	for off >= 0 && off+4 <= len(stream) {
		typ := binary.LittleEndian.Uint16(stream[off:])
		n := int(binary.LittleEndian.Uint16(stream[off+2:]))
		if off+4+n > len(stream) {
			break
		}
		out = append(out, biffRecord{typ, stream[off+4 : off+4+n]})
		off += 4 + n
		if typ == biffEOF {
			break
		}
	}
	return out
}

// xlsBook is what the workbook globals say: sheets, shared strings,
// number formats per cell format (XF) and the date system.
type xlsBook struct {
	sheets   []xlsSheetRef
	sst      []string
	xfFormat []uint16          // XF index -> number format id
	formats  map[uint16]string // custom number format id -> format code
	date1904 bool
}

// xlsSheetRef is a worksheet's name and where its records start.
type xlsSheetRef struct {
	name string
	off  int
}

// parseXLSGlobals reads the workbook globals substream; a FILEPASS record
// means the workbook is encrypted.
func parseXLSGlobals(stream []byte) (*xlsBook, error) {
	recs := biffRecords(stream, 0)
	if len(recs) == 0 || recs[0].typ != biffBOF || len(recs[0].data) < 2 ||
		binary.LittleEndian.Uint16(recs[0].data) != 0x0600 {
		return nil, fmt.Errorf("%w (not an Excel 97-2003 workbook)", doc.ErrDamaged)
	}
	b := &xlsBook{formats: map[uint16]string{}}
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		switch r.typ {
		case biffFilePass:
			return nil, fmt.Errorf("%w (the workbook is encrypted)", doc.ErrEncrypted)
		case biffDateMode:
			b.date1904 = len(r.data) >= 2 && r.data[0] == 1
		case biffXF:
			if len(r.data) >= 4 {
				b.xfFormat = append(b.xfFormat, binary.LittleEndian.Uint16(r.data[2:]))
			}
		case biffFormat:
			if len(r.data) >= 2 {
				s, _ := biffString16(r.data[2:])
				b.formats[binary.LittleEndian.Uint16(r.data)] = s
			}
		case biffBoundSheet:
			if len(r.data) >= 8 && r.data[5] == 0 { // worksheets only, not charts or macros
				name, _ := biffString8(r.data[6:])
				b.sheets = append(b.sheets, xlsSheetRef{name, int(binary.LittleEndian.Uint32(r.data))})
			}
		case biffSST:
			segs := [][]byte{r.data}
			for i+1 < len(recs) && recs[i+1].typ == biffContinue {
				i++
				segs = append(segs, recs[i].data)
			}
			b.sst = parseSST(segs)
		}
	}
	return b, nil
}

// biffString16 decodes an XLUnicodeString (16-bit length) and returns the
// bytes it used.
func biffString16(p []byte) (string, int) {
	if len(p) < 3 {
		return "", len(p)
	}
	r := &sstReader{segs: [][]byte{p[2:]}}
	s := r.chars(int(binary.LittleEndian.Uint16(p)), r.byte()&1 == 1)
	return s, 2 + r.pos
}

// biffString8 decodes a ShortXLUnicodeString (8-bit length).
func biffString8(p []byte) (string, int) {
	if len(p) < 2 {
		return "", len(p)
	}
	r := &sstReader{segs: [][]byte{p[1:]}}
	s := r.chars(int(p[0]), r.byte()&1 == 1)
	return s, 1 + r.pos
}

// parseSST reads the shared string table, whose strings may run on across
// CONTINUE records (each continuation of characters restarts with a flags
// byte saying whether they are 8- or 16-bit).
func parseSST(segs [][]byte) []string {
	r := &sstReader{segs: segs}
	n := int(r.u32(4)) // skip cstTotal, read cstUnique
	out := make([]string, 0, min(n, 1<<16))
	for i := 0; i < n && !r.done(); i++ {
		cch := int(r.u16())
		flags := r.byte()
		runs, ext := 0, 0
		if flags&8 != 0 {
			runs = int(r.u16())
		}
		if flags&4 != 0 {
			ext = int(r.u32(0))
		}
		out = append(out, r.chars(cch, flags&1 == 1))
		r.skip(4*runs + ext)
	}
	return out
}

// sstReader reads across record segments.
type sstReader struct {
	segs [][]byte
	si   int // current segment
	pos  int // offset in it
}

// done reports whether everything was read.
func (r *sstReader) done() bool {
	for r.si < len(r.segs) && r.pos >= len(r.segs[r.si]) {
		r.si, r.pos = r.si+1, 0
	}
	return r.si >= len(r.segs)
}

// byte reads one byte, 0 past the end.
func (r *sstReader) byte() byte {
	if r.done() {
		return 0
	}
	b := r.segs[r.si][r.pos]
	r.pos++
	return b
}

// u16 reads a little-endian 16-bit number.
func (r *sstReader) u16() uint16 { return uint16(r.byte()) | uint16(r.byte())<<8 }

// u32 skips skip bytes then reads a little-endian 32-bit number.
func (r *sstReader) u32(skip int) uint32 {
	r.skip(skip)
	return uint32(r.u16()) | uint32(r.u16())<<16
}

// skip passes over n bytes.
func (r *sstReader) skip(n int) {
	for n > 0 && !r.done() {
		k := min(n, len(r.segs[r.si])-r.pos)
		r.pos += k
		n -= k
	}
}

// chars reads cch characters, 16-bit when high is set, else 8-bit
// (Latin-1); at a segment boundary a new flags byte says which.
func (r *sstReader) chars(cch int, high bool) string {
	u := make([]uint16, 0, min(cch, 4096))
	for len(u) < cch && !r.done() {
		if r.pos == 0 && r.si > 0 && len(u) > 0 {
			high = r.byte()&1 == 1
			continue
		}
		seg := r.segs[r.si]
		for len(u) < cch && r.pos < len(seg) {
			if high {
				if r.pos+1 >= len(seg) {
					r.pos = len(seg)
					break
				}
				u = append(u, uint16(seg[r.pos])|uint16(seg[r.pos+1])<<8)
				r.pos += 2
			} else {
				u = append(u, uint16(seg[r.pos]))
				r.pos++
			}
		}
	}
	return string(utf16.Decode(u))
}

// rkNumber decodes an RK value: a 30-bit integer or the top 30 bits of
// a float, optionally divided by 100.
func rkNumber(rk uint32) float64 {
	var v float64
	if rk&2 != 0 {
		v = float64(int32(rk) >> 2)
	} else {
		v = math.Float64frombits(uint64(rk&0xFFFFFFFC) << 32)
	}
	if rk&1 != 0 {
		v /= 100
	}
	return v
}
