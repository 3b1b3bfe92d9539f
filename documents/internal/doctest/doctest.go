// Package doctest holds what the converters' tests share: running a
// converter as Convert would, writing fixture files, building zips.
package doctest

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/deerflow/deerflow/documents/doc"
)

// Convert runs conv on the file at path with lim (defaults filled in), as
// documents.Convert would, and checks the Markdown is valid UTF-8.
func Convert(t *testing.T, conv doc.Converter, path string, lim doc.Limits) (*doc.Doc, error) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := conv(context.Background(), path, st.Size(), lim.WithDefaults())
	if err == nil && !utf8.ValidString(d.Markdown) {
		t.Errorf("%s: Markdown is not valid UTF-8", path)
	}
	return d, err
}

// WriteTemp writes data to a file called name in a fresh directory.
func WriteTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Zip builds a zip of the given parts (name, content), in order.
func Zip(t *testing.T, parts ...[2]string) []byte {
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

// WantErr checks that err wraps want.
func WantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}
