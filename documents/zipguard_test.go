package documents

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/internal/doctest"
)

// wNS is the WordprocessingML namespace.
const wNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// The shared helpers, under the names these tests use.
func convertFile(t *testing.T, f Format, path string, lim Limits) (*Doc, error) {
	return doctest.Convert(t, converters[f], path, lim)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	return doctest.WriteTemp(t, name, data)
}

func makeZip(t *testing.T, parts ...[2]string) []byte { return doctest.Zip(t, parts...) }

func wantErr(t *testing.T, what string, err, want error) { doctest.WantErr(t, what, err, want) }

func TestZipBombRefused(t *testing.T) {
	bomb := makeZip(t, [2]string{"word/document.xml", strings.Repeat(" ", 2<<20)})
	if len(bomb) > 100<<10 {
		t.Fatalf("bomb is %d bytes, expected it to compress well", len(bomb))
	}
	for _, f := range []Format{DOCX, XLSX, PPTX} {
		_, err := convertFile(t, f, writeTemp(t, "bomb."+string(f), bomb), Limits{MaxUnpacked: 1 << 20})
		wantErr(t, string(f)+" bomb", err, ErrTooLarge)
		if err != nil && !strings.Contains(err.Error(), "more than 1 MB") {
			t.Errorf("message %q does not say the limit", err)
		}
	}
}

func TestZipTooManyEntries(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range doc.MaxZipEntries + 1 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: "x/" + strconv.Itoa(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := convertFile(t, DOCX, writeTemp(t, "many.docx", buf.Bytes()), Limits{})
	wantErr(t, "10001 entries", err, ErrTooLarge)
}

func TestZipLyingSize(t *testing.T) {
	// The central directory says document.xml is 10 bytes; it inflates to
	// 200 KB. Reading must fail, not trust either number blindly.
	data := makeZip(t, [2]string{"word/document.xml", `<w:document xmlns:w="` + wNS + `"><w:body>` +
		strings.Repeat("<w:p><w:r><w:t>x</w:t></w:r></w:p>", 6000) + `</w:body></w:document>`})
	i := bytes.LastIndex(data, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(data[i+24:], 10)
	_, err := convertFile(t, DOCX, writeTemp(t, "lying.docx", data), Limits{})
	if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrTooLarge) {
		t.Errorf("lying size: error %v, want damaged or too large", err)
	}
}

func TestOfficeBadFiles(t *testing.T) {
	report, err := os.ReadFile("office/testdata/report.docx")
	if err != nil {
		t.Fatal(err)
	}
	cfb := append(append([]byte(nil), doc.CFBMagic...), make([]byte, 4096)...)
	tests := []struct {
		name string
		f    Format
		data []byte
		want error
	}{
		{"empty.docx", DOCX, nil, ErrDamaged},
		{"empty.xlsx", XLSX, nil, ErrDamaged},
		{"empty.pptx", PPTX, nil, ErrDamaged},
		{"empty.xls", XLS, nil, ErrDamaged},
		{"empty.csv", CSV, nil, ErrDamaged},
		{"empty.html", HTML, nil, ErrDamaged},
		{"half.docx", DOCX, report[:len(report)/2], ErrDamaged},
		{"random.xlsx", XLSX, bytes.Repeat([]byte{0x13, 0x37, 0xC0, 0xDE, 0xFF}, 999), ErrDamaged},
		{"random.pptx", PPTX, []byte("this is not a presentation"), ErrDamaged},
		{"encrypted.docx", DOCX, cfb, ErrEncrypted},
		{"encrypted.xlsx", XLSX, cfb, ErrEncrypted},
		{"encrypted.pptx", PPTX, cfb, ErrEncrypted},
		{"text.xls", XLS, []byte("Name,Value\nA,1\n"), ErrDamaged},
		{"zip.xls", XLS, makeZip(t, [2]string{"a", "b"}), ErrDamaged},
		{"cfb-garbage.xls", XLS, cfb, ErrDamaged},
		{"no-document.docx", DOCX, makeZip(t, [2]string{"word/other.xml", "<x/>"}), ErrDamaged},
		{"no-presentation.pptx", PPTX, makeZip(t, [2]string{"a.xml", "<x/>"}), ErrDamaged},
		{"bad-xml.docx", DOCX, makeZip(t, [2]string{"word/document.xml", "<w:document><w:body><w:p>"}), ErrDamaged},
		{"not-a-workbook.xlsx", XLSX, makeZip(t, [2]string{"a.xml", "<x/>"}), ErrDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := convertFile(t, tt.f, writeTemp(t, tt.name, tt.data), Limits{})
			wantErr(t, tt.name, err, tt.want)
			if doc != nil {
				t.Errorf("got a document along with the error: %+v", doc)
			}
		})
	}
}

func TestOfficeTimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range []struct {
		f    Format
		path string
	}{{DOCX, "office/testdata/report.docx"}, {PPTX, "office/testdata/deck.pptx"}, {XLSX, "sheet/testdata/book.xlsx"}, {XLS, "sheet/testdata/book.xls"}} {
		p := f.path
		_, err := converters[f.f](ctx, p, 1, Limits{}.WithDefaults())
		wantErr(t, f.path+" after the deadline", err, ErrTimeout)
	}
}
