package pdf

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

	"github.com/deerflow/deerflow/documents/doc"
)

// The fixtures in testdata are made by make.sh there, with LibreOffice
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

// convertFixture converts testdata/name with ex.
func convertFixture(t *testing.T, ctx context.Context, name string, lim doc.Limits, ex pdfExtract) (*doc.Doc, error) {
	t.Helper()
	path := filepath.Join("testdata", name)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return convertPDFWith(ctx, path, fi.Size(), lim, ex)
}

func TestPDFReport(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		got, err := convertFixture(t, context.Background(), "report.pdf", doc.Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		md := got.Markdown
		if got.Units != 2 || got.Format != doc.PDF || got.Warning != "" || got.Cut {
			t.Errorf("Units=%d Format=%q Warning=%q Cut=%v", got.Units, got.Format, got.Warning, got.Cut)
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
		got, err := convertFixture(t, context.Background(), "columns.pdf", doc.Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		md := got.Markdown
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
			_, err := convertFixture(t, context.Background(), name, doc.Limits{}, ex)
			if !errors.Is(err, doc.ErrEncrypted) {
				t.Errorf("%s: err = %v, want ErrEncrypted", name, err)
			}
		}
		// An empty user password opens the file: it is read.
		got, err := convertFixture(t, context.Background(), "nopassword.pdf", doc.Limits{}, ex)
		if err != nil || !strings.Contains(got.Markdown, "Hire three seasonal pickers") {
			t.Errorf("nopassword.pdf: err = %v, got = %+v", err, got)
		}
	})
}

func TestPDFScanned(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		got, err := convertFixture(t, context.Background(), "scan.pdf", doc.Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.Warning, "no text layer") || got.Markdown != "" || got.Units != 1 {
			t.Errorf("scan.pdf: %+v", got)
		}
		got, err = convertFixture(t, context.Background(), "mixed.pdf", doc.Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.Warning, "page 2 of 2 has no text layer") ||
			!strings.Contains(got.Markdown, "Quarterly Harvest Report") || got.Units != 2 {
			t.Errorf("mixed.pdf: %+v", got)
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
		_, err := convertFixture(t, context.Background(), "truncated.pdf", doc.Limits{}, ex)
		if !errors.Is(err, doc.ErrDamaged) {
			t.Errorf("truncated.pdf: err = %v, want ErrDamaged", err)
		}
		for name, content := range files {
			path := filepath.Join(dir, name)
			_, err := convertPDFWith(context.Background(), path, int64(len(content)), doc.Limits{}, ex)
			if !errors.Is(err, doc.ErrDamaged) {
				t.Errorf("%s: err = %v, want ErrDamaged", name, err)
			}
		}
	})
	_, err := convertPDFWith(context.Background(), filepath.Join(dir, "empty.pdf"), 0, doc.Limits{}, pdfBuiltinExtract)
	if err == nil || !strings.Contains(err.Error(), "it is empty") {
		t.Errorf("empty file: err = %v", err)
	}
}

// TestPDFMangled feeds the built-in reader copies of report.pdf with bytes
// overwritten at random: it may fail, but only with ErrDamaged or
// ErrEncrypted, and never panic or hang.
func TestPDFMangled(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "report.pdf"))
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
		_, err := convertPDFWith(ctx, path, int64(len(data)), doc.Limits{}, pdfBuiltinExtract)
		cancel()
		if err != nil && !errors.Is(err, doc.ErrDamaged) && !errors.Is(err, doc.ErrEncrypted) {
			t.Errorf("mangled copy %d: err = %v", i, err)
		}
	}
}

func TestPDFDeadlinePassed(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		start := time.Now()
		_, err := convertFixture(t, ctx, "long.pdf", doc.Limits{}, ex)
		if !errors.Is(err, doc.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
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
	_, err := convertFixture(t, ctx, "report.pdf", doc.Limits{}, pdfPopplerExtract(bin))
	if !errors.Is(err, doc.ErrTimeout) {
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
		got, err := convertFixture(t, context.Background(), "long.pdf", doc.Limits{MaxOutput: 3000}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Cut || len(got.Markdown) > 3000 || got.Units != 50 || !strings.Contains(got.Markdown, "Section 1") {
			t.Errorf("Cut=%v len=%d Units=%d", got.Cut, len(got.Markdown), got.Units)
		}
	})
}

func TestPDFLong(t *testing.T) {
	pdfExtractors(t, func(t *testing.T, ex pdfExtract) {
		got, err := convertFixture(t, context.Background(), "long.pdf", doc.Limits{}, ex)
		if err != nil {
			t.Fatal(err)
		}
		if got.Units != 50 || got.Cut || got.Warning != "" {
			t.Errorf("Units=%d Cut=%v Warning=%q", got.Units, got.Cut, got.Warning)
		}
		p50 := strings.Index(got.Markdown, "--- Page 50 ---")
		if p50 < 0 || !strings.Contains(got.Markdown[p50:], "Section 50") ||
			!strings.Contains(got.Markdown[p50:], "Page 50 paragraph 4:") {
			t.Errorf("page 50 missing or wrong")
		}
	})
}

// TestPDFExtractorChoice checks that without pdftotext on PATH the
// built-in reader is named and used.
func TestPDFExtractorChoice(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err == nil && Extractor() != "pdftotext" {
		t.Errorf("Extractor() = %q with pdftotext installed", Extractor())
	}
	t.Setenv("PATH", t.TempDir())
	if got := Extractor(); got != "built-in" {
		t.Errorf("Extractor() = %q without pdftotext", got)
	}
	path := filepath.Join("testdata", "report.pdf")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Convert(context.Background(), path, fi.Size(), doc.Limits{})
	if err != nil || !strings.Contains(got.Markdown, "Conference pears") {
		t.Errorf("err = %v, got = %+v", err, got)
	}
}

// BenchmarkPDF50Pages converts the 50-page fixture with each extractor.
func BenchmarkPDF50Pages(b *testing.B) {
	path := filepath.Join("testdata", "long.pdf")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, ex pdfExtract) {
		for i := 0; i < b.N; i++ {
			got, err := convertPDFWith(context.Background(), path, fi.Size(), doc.Limits{}, ex)
			if err != nil || got.Units != 50 {
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
