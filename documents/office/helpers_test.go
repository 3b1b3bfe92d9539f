package office

import (
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/internal/doctest"
)

// converters of this package by format, for convertFile.
var converters = map[doc.Format]doc.Converter{doc.DOCX: ConvertDOCX, doc.PPTX: ConvertPPTX}

func convertFile(t *testing.T, f doc.Format, path string, lim doc.Limits) (*doc.Doc, error) {
	return doctest.Convert(t, converters[f], path, lim)
}

func writeTemp(t *testing.T, name string, data []byte) string {
	return doctest.WriteTemp(t, name, data)
}

func makeZip(t *testing.T, parts ...[2]string) []byte { return doctest.Zip(t, parts...) }
