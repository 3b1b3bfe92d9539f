package sheet

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
)

// This file reads the workbook-wide parts of an .xlsx package: the
// sheet list, the shared strings and the number formats of the cell
// styles, each streamed with encoding/xml.

// xlsxBook is what the workbook parts say.
type xlsxBook struct {
	sheets  []xlsxSheetRef
	strings []string
	formats *cellFormats
}

// xlsxSheetRef is a sheet's name and its part in the package ("" when
// the workbook names a part that is missing).
type xlsxSheetRef struct{ name, part string }

// readXLSXBook reads the workbook, its relationships, shared strings and
// styles.
func readXLSXBook(z *doc.ZipFile) (*xlsxBook, error) {
	main := z.MainPart("xl/workbook.xml")
	if !z.Has(main) {
		return nil, fmt.Errorf("%w (no workbook part)", doc.ErrDamaged)
	}
	rels, err := z.RelsOf(main)
	if err != nil {
		return nil, err
	}
	b := &xlsxBook{formats: newCellFormats()}
	if err := b.readWorkbook(z, main, rels); err != nil {
		return nil, err
	}
	dir := main[:strings.LastIndexByte(main, '/')+1]
	if err := b.readStrings(z, relPart(z, rels, "/sharedStrings", dir+"sharedStrings.xml")); err != nil {
		return nil, err
	}
	if err := b.readStyles(z, relPart(z, rels, "/styles", dir+"styles.xml")); err != nil {
		return nil, err
	}
	return b, nil
}

// relPart returns the part of the first relationship whose type ends
// with suffix, else def; "" when the package holds neither.
func relPart(z *doc.ZipFile, rels map[string]doc.Rel, suffix, def string) string {
	for _, r := range rels {
		if strings.HasSuffix(r.Type, suffix) && z.Has(r.Target) {
			return r.Target
		}
	}
	if z.Has(def) {
		return def
	}
	return ""
}

// streamXML calls fn for each start element, end element and character
// data of the named part, reading it as a stream.
func streamXML(z *doc.ZipFile, part string, fn func(xml.Token) error) error {
	rc, err := z.Open(part)
	if err != nil {
		return err
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return xmlError(part, err)
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// xmlError keeps the zip guard's errors (too large, damaged entry) and
// calls anything else a damaged part.
func xmlError(part string, err error) error {
	if errors.Is(err, doc.ErrTooLarge) || errors.Is(err, doc.ErrDamaged) || errors.Is(err, doc.ErrTimeout) {
		return err
	}
	return fmt.Errorf("%w (%s: %v)", doc.ErrDamaged, part, err)
}

// readWorkbook reads the sheets in order and the date system.
func (b *xlsxBook) readWorkbook(z *doc.ZipFile, main string, rels map[string]doc.Rel) error {
	return streamXML(z, main, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch se.Name.Local {
		case "workbookPr":
			v := doc.Xattr(se, "date1904")
			b.formats.date1904 = v == "1" || v == "true"
		case "sheet":
			part := ""
			if r, ok := rels[doc.Xattr(se, "id")]; ok && z.Has(r.Target) {
				part = r.Target
			}
			b.sheets = append(b.sheets, xlsxSheetRef{name: doc.Xattr(se, "name"), part: part})
		}
		return nil
	})
}

// readStrings reads the shared strings: each si's text, from its t or
// the t of its rich-text runs; phonetic runs (rPh) are left out.
func (b *xlsxBook) readStrings(z *doc.ZipFile, part string) error {
	if part == "" {
		return nil
	}
	var cur strings.Builder
	inT, phonetic := false, 0
	return streamXML(z, part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				inT = phonetic == 0
			case "rPh":
				phonetic++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				b.strings = append(b.strings, unescapeOOXML(cur.String()))
			case "t":
				inT = false
			case "rPh":
				phonetic--
			}
		case xml.CharData:
			if inT {
				cur.Write(t)
			}
		}
		return nil
	})
}

// readStyles reads the custom number formats and the number format of
// each cell format (cellXfs), in order.
func (b *xlsxBook) readStyles(z *doc.ZipFile, part string) error {
	if part == "" {
		return nil
	}
	inXfs := false
	f := b.formats
	return streamXML(z, part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "numFmt":
				if id, err := strconv.Atoi(doc.Xattr(t, "numFmtId")); err == nil {
					f.codes[id] = doc.Xattr(t, "formatCode")
				}
			case "cellXfs":
				inXfs = true
			case "xf":
				if inXfs {
					id, _ := strconv.Atoi(doc.Xattr(t, "numFmtId"))
					f.xfFormat = append(f.xfFormat, id)
				}
			}
		case xml.EndElement:
			if t.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return nil
	})
}

// unescapeOOXML turns the _xHHHH_ escapes Excel writes for control
// characters back into the characters.
func unescapeOOXML(s string) string {
	if !strings.Contains(s, "_x") {
		return s
	}
	var out strings.Builder
	for {
		i := strings.Index(s, "_x")
		if i < 0 || i+7 > len(s) || s[i+6] != '_' {
			if i < 0 || i+7 > len(s) {
				out.WriteString(s)
				return out.String()
			}
			out.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		n, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
		if err != nil {
			out.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		out.WriteString(s[:i])
		out.WriteRune(rune(n))
		s = s[i+7:]
	}
}
