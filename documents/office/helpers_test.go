package office

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/deerflow/deerflow/documents/doc"
)

// converters of this package by format, for convertFile.
var converters = map[doc.Format]doc.Converter{doc.DOCX: ConvertDOCX, doc.PPTX: ConvertPPTX}

// convertFile runs the converter of format f on the file at path with lim
// (defaults filled in), as Convert would.
func convertFile(t *testing.T, f doc.Format, path string, lim doc.Limits) (*doc.Doc, error) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := converters[f](context.Background(), path, st.Size(), lim.WithDefaults())
	if err == nil && !utf8.ValidString(got.Markdown) {
		t.Errorf("%s: Markdown is not valid UTF-8", path)
	}
	return got, err
}

// writeTemp writes data to a file called name in a fresh directory.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// makeZip builds a zip of the given parts (name -> content), in order.
func makeZip(t *testing.T, parts ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
