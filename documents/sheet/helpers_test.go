package sheet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/deerflow/deerflow/documents/doc"
)

// converters of this package by format, for convertFile.
var converters = map[doc.Format]doc.Converter{doc.XLSX: ConvertXLSX, doc.XLS: ConvertXLS, doc.CSV: ConvertCSV}

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

// wantErr checks that err wraps want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}
