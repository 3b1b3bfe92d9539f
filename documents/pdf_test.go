package documents

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fixtures in testdata/pdf are made by make.sh there, with LibreOffice
// and qpdf; report.html and columns.fodt are their sources.

// pdfExtractors runs f once per extractor: the built-in reader always,
// pdftotext when it is installed.
func pdfExtractors(t *testing.T, f func(t *testing.T, ex pdfExtract)) {
	t.Run("builtin", func(t *testing.T) { f(t, pdfBuiltinExtract) })
	t.Run("pdftotext", func(t *testing.T) {
		bin, err := exec.LookPath("pdftotext")
		if err != nil {
			t.Skip("pdftotext (poppler-utils) is not on PATH")
		}
		f(t, pdfPopplerExtract(bin))
	})
}

// convertFixture converts testdata/pdf/name with ex.
func convertFixture(t *testing.T, ctx context.Context, name string, lim Limits, ex pdfExtract) (*Doc, error) {
	t.Helper()
	path := filepath.Join("testdata", "pdf", name)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return convertPDFWith(ctx, path, fi.Size(), lim, ex)
}

func TestPDFReport(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		doc, err := convertFixture(t, context.Background(), "report.pdf", Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		md := doc.Markdown
		if doc.Units != 2 || doc.Format != PDF || doc.Warning != "" || doc.Cut {
			t.Errorf("Units=%d Format=%q Warning=%q Cut=%v", doc.Units, doc.Format, doc.Warning, doc.Cut)
		}
		want := []string{
			"--- Page 1 ---",
			"Quarterly Harvest Report",
			"The orchard at Millbrook produced more apples this autumn than in any year since records began.",
			"Bramley apples", "412", "Victoria plums",
			"Two new cider presses installed",
			"--- Page 2 ---",
			"Outlook for Next Year",
			"Second page paragraph: the cooperative plans to plant quince trees",
			"Hire three seasonal pickers",
		}
		last := -1
		for _, w := range want {
			i := strings.Index(md, w)
			if i < 0 {
				t.Errorf("missing %q in:\n%s", w, md)
				continue
			}
			if i < last {
				t.Errorf("%q is out of order in:\n%s", w, md)
			}
			last = i
		}
	})
}

// TestPDFColumns checks the reading order of a two-column page: the whole
// left column, then the right one, lines not interleaved.
func TestPDFColumns(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		doc, err := convertFixture(t, context.Background(), "columns.pdf", Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		md := doc.Markdown
		order := []string{"Two Column Newsletter", "LEFTSTART", "LEFTEND", "RIGHTSTART", "RIGHTEND"}
		last := -1
		for _, w := range order {
			i := strings.Index(md, w)
			if i <= last {
				t.Fatalf("%q missing or out of order in:\n%s", w, md)
			}
			last = i
		}
		if !strings.Contains(md, "LEFTSTART The village fete raised funds for\n") {
			t.Errorf("left column's first line mixed with the right's:\n%s", md)
		}
	})
}

func TestPDFEncrypted(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		for _, name := range []string{"encrypted.pdf", "encrypted-rc4.pdf"} {
			_, err := convertFixture(t, context.Background(), name, Limits{}, ex)
			if !errors.Is(err, ErrEncrypted) {
				t.Errorf("%s: err = %v, want ErrEncrypted", name, err)
			}
		}
		// An empty user password opens the file: it is read.
		doc, err := convertFixture(t, context.Background(), "nopassword.pdf", Limits{}, ex)
		if err != nil || !strings.Contains(doc.Markdown, "Hire three seasonal pickers") {
			t.Errorf("nopassword.pdf: err = %v, doc = %+v", err, doc)
		}
	})
}

func TestPDFScanned(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		doc, err := convertFixture(t, context.Background(), "scan.pdf", Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.Warning, "no text layer") || doc.Markdown != "" || doc.Units != 1 {
			t.Errorf("scan.pdf: %+v", doc)
		}
		doc, err = convertFixture(t, context.Background(), "mixed.pdf", Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.Warning, "page 2 of 2 has no text layer") ||
			!strings.Contains(doc.Markdown, "Quarterly Harvest Report") || doc.Units != 2 {
			t.Errorf("mixed.pdf: %+v", doc)
		}
	})
}

func TestPDFDamaged(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.pdf":   "",
		"text.pdf":    "this is a text file, not a PDF\n",
		"garbage.pdf": "%PDF-1.7\n" + strings.Repeat("\x00\xff garbage ", 500),
		"noeof.pdf":   "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		_, err := convertFixture(t, context.Background(), "truncated.pdf", Limits{}, ex)
		if !errors.Is(err, ErrDamaged) {
			t.Errorf("truncated.pdf: err = %v, want ErrDamaged", err)
		}
		for name, content := range files {
			path := filepath.Join(dir, name)
			_, err := convertPDFWith(context.Background(), path, int64(len(content)), Limits{}, ex)
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("%s: err = %v, want ErrDamaged", name, err)
			}
		}
	})
	_, err := convertPDFWith(context.Background(), filepath.Join(dir, "empty.pdf"), 0, Limits{}, pdfBuiltinExtract)
	if err == nil || !strings.Contains(err.Error(), "it is empty") {
		t.Errorf("empty file: err = %v", err)
	}
}

// TestPDFMangled feeds the built-in reader copies of report.pdf with bytes
// overwritten at random: it may fail, but only with ErrDamaged or
// ErrEncrypted, and never panic or hang.
func TestPDFMangled(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "pdf", "report.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 60; i++ {
		data := append([]byte(nil), orig...)
		for j := 0; j < 1+i%8; j++ {
			at := 9 + rng.Intn(len(data)-9)
			data[at] = byte(rng.Intn(256))
		}
		path := filepath.Join(dir, "m.pdf")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := convertPDFWith(ctx, path, int64(len(data)), Limits{}, pdfBuiltinExtract)
		cancel()
		if err != nil && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrEncrypted) {
			t.Errorf("mangled copy %d: err = %v", i, err)
		}
	}
}

func TestPDFDeadlinePassed(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		start := time.Now()
		_, err := convertFixture(t, ctx, "long.pdf", Limits{}, ex)
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v", d)
		}
	})
}

// TestPDFToolKilled runs a stand-in pdftotext that hangs: at the deadline
// it is killed and the conversion fails with ErrTimeout.
func TestPDFToolKilled(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexec sleep 30\n"
	bin := filepath.Join(dir, "pdftotext")
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := convertFixture(t, ctx, "report.pdf", Limits{}, pdfPopplerExtract(bin))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, c := range strings.TrimSpace(string(pid)) {
		n = n*10 + int(c-'0')
	}
	if err := syscall.Kill(n, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pdftotext stand-in (pid %d) still running: %v", n, err)
	}
}

// TestPDFOutputLimit cuts a 50-page document at a small output limit and
// still counts its pages.
func TestPDFOutputLimit(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		doc, err := convertFixture(t, context.Background(), "long.pdf", Limits{MaxOutput: 3000}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !doc.Cut || len(doc.Markdown) > 3000 || doc.Units != 50 || !strings.Contains(doc.Markdown, "Section 1") {
			t.Errorf("Cut=%v len=%d Units=%d", doc.Cut, len(doc.Markdown), doc.Units)
		}
	})
}

func TestPDFLong(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		doc, err := convertFixture(t, context.Background(), "long.pdf", Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Units != 50 || doc.Cut || doc.Warning != "" {
			t.Errorf("Units=%d Cut=%v Warning=%q", doc.Units, doc.Cut, doc.Warning)
		}
		p50 := strings.Index(doc.Markdown, "--- Page 50 ---")
		if p50 < 0 || !strings.Contains(doc.Markdown[p50:], "Section 50") ||
			!strings.Contains(doc.Markdown[p50:], "Page 50 paragraph 4:") {
			t.Errorf("page 50 missing or wrong")
		}
	})
}

// TestPDFExtractorChoice checks that without pdftotext on PATH the
// built-in reader is named and used.
func TestPDFExtractorChoice(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err == nil && PDFExtractor() != "pdftotext" {
		t.Errorf("PDFExtractor() = %q with pdftotext installed", PDFExtractor())
	}
	t.Setenv("PATH", t.TempDir())
	if got := PDFExtractor(); got != "built-in" {
		t.Errorf("PDFExtractor() = %q without pdftotext", got)
	}
	path := filepath.Join("testdata", "pdf", "report.pdf")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := convertPDF(context.Background(), path, fi.Size(), Limits{})
	if err != nil || !strings.Contains(doc.Markdown, "Conference pears") {
		t.Errorf("err = %v, doc = %+v", err, doc)
	}
}

// BenchmarkPDF50Pages converts the 50-page fixture with each extractor.
func BenchmarkPDF50Pages(b *testing.B) {
	path := filepath.Join("testdata", "pdf", "long.pdf")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, ex pdfExtract) {
		for i := 0; i < b.N; i++ {
			doc, err := convertPDFWith(context.Background(), path, fi.Size(), Limits{}, ex)
			if err != nil || doc.Units != 50 {
				b.Fatalf("err = %v", err)
			}
		}
	}
	b.Run("pdftotext", func(b *testing.B) {
		bin, err := exec.LookPath("pdftotext")
		if err != nil {
			b.Skip("pdftotext (poppler-utils) is not on PATH")
		}
		run(b, pdfPopplerExtract(bin))
	})
	b.Run("builtin", func(b *testing.B) { run(b, pdfBuiltinExtract) })
}
