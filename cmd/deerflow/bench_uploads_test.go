package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/uploads"
)

// BenchmarkUploadConvert: a document's way from the chat to the model,
// as serve takes it: saved into the uploads, converted by a child process
// of the release binary, its Markdown written beside it. Budget: under
// 1 s for a 50-page text PDF (with pdftotext, and with the built-in
// reader) and for a 10-sheet workbook.
func BenchmarkUploadConvert(b *testing.B) {
	cases := []struct {
		name, file, fixture string
		noPoppler           bool
	}{
		{"pdf-50-pages-pdftotext", "long.pdf", "pdf/testdata/long.pdf", false},
		{"pdf-50-pages-builtin", "long.pdf", "pdf/testdata/long.pdf", true},
		{"xlsx-10-sheets", "bench.xlsx", "sheet/testdata/bench.xlsx", false},
		{"docx", "report.docx", "office/testdata/report.docx", false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.noPoppler {
				b.Setenv("PATH", "/nonexistent") // the child gets the PATH it is given
			} else if documents.PDFExtractor() != "pdftotext" && strings.HasSuffix(c.file, ".pdf") {
				b.Skip("pdftotext is not installed")
			}
			data := fixture(b, c.fixture)
			sb, err := sandbox.New(sandbox.Options{DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			in := uploads.New(uploads.Options{Sandbox: sb, Logger: slog.New(slog.DiscardHandler),
				Converter: &documents.Converter{Exe: serveBinary(b)}})
			at := bus.Attachment{Name: c.file, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(data)), nil
			}}
			b.ResetTimer()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				s, err := in.Save(context.Background(), fmt.Sprintf("t%d", i), at)
				if err != nil || !strings.Contains(s.Line, "→ Markdown:") {
					b.Fatalf("saved %+v, %v", s, err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/file")
		})
	}
}
