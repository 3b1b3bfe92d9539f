package sheet

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/deerflow/deerflow/documents/doc"
	"golang.org/x/text/encoding/charmap"
)

// ConvertCSV converts a CSV or TSV file to one table under the file's
// name. The delimiter is guessed from the first line; text that is not
// UTF-8 is read as UTF-16 (with a byte-order mark) or Windows-1252, the
// usual export of Excel on Windows.
func ConvertCSV(ctx context.Context, path string, size int64, lim doc.Limits) (*doc.Doc, error) {
	data, err := doc.ReadCapped(path, lim.MaxInput)
	if err != nil {
		return nil, err
	}
	text := decodeText(data)
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w (the file is empty)", doc.ErrDamaged)
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = csvDelimiter(path, text)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	var c sheetCollector
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := doc.TimedOut(ctx); err != nil {
				return nil, err
			}
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var perr *csv.ParseError
			if errors.As(err, &perr) {
				continue // a malformed line is skipped, the rest is kept
			}
			return nil, fmt.Errorf("%w (%v)", doc.ErrDamaged, err)
		}
		c.add(rec)
	}
	w := doc.NewWriter(lim.MaxOutput)
	c.write(w, filepath.Base(path))
	md := strings.Replace(w.String(), "## Sheet: ", "## ", 1)
	return &doc.Doc{Format: doc.CSV, Markdown: md, Units: 1, Cut: w.Full()}, nil
}

// decodeText turns a text file's bytes into a valid UTF-8 string: the
// UTF-8 byte-order mark is dropped, UTF-16 with a mark is decoded, and
// other non-UTF-8 text is read as Windows-1252.
func decodeText(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data[2:], data[0] == 0xFE)
	}
	if utf8.Valid(data) {
		return string(data)
	}
	if s, err := charmap.Windows1252.NewDecoder().Bytes(data); err == nil {
		return strings.ToValidUTF8(string(s), "\uFFFD")
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// decodeUTF16 decodes UTF-16 text, big- or little-endian.
func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
	}
	return string(utf16.Decode(u))
}

// csvDelimiter picks the delimiter: a tab for .tsv, else whichever of
// comma, semicolon, tab and pipe occurs most in the first line outside
// quotes (comma when none does).
func csvDelimiter(path, text string) rune {
	if strings.EqualFold(filepath.Ext(path), ".tsv") {
		return '\t'
	}
	line, _, _ := strings.Cut(text, "\n")
	counts := map[rune]int{}
	quoted := false
	for _, ch := range line {
		if ch == '"' {
			quoted = !quoted
		} else if !quoted {
			counts[ch]++
		}
	}
	best := ','
	for _, d := range []rune{',', ';', '\t', '|'} {
		if counts[d] > counts[best] {
			best = d
		}
	}
	return best
}
