package sheet

import (
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/internal/doctest"
)

// converters of this package by format, for convertFile.
var converters = map[doc.Format]doc.Converter{doc.XLSX: ConvertXLSX, doc.XLS: ConvertXLS, doc.CSV: ConvertCSV}

func convertFile(t *testing.T, f doc.Format, path string, lim doc.Limits) (*doc.Doc, error) {
	return doctest.Convert(t, converters[f], path, lim)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	return doctest.WriteTemp(t, name, data)
}

func wantErr(t *testing.T, what string, err, want error) { doctest.WantErr(t, what, err, want) }
