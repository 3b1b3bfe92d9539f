// Package pdf converts a PDF to Markdown: its text in reading order, one
// "--- Page N ---" section per page, with a warning for pages that are
// scanned images. The text comes from poppler's pdftotext when it is
// installed, else from a built-in reader with its own layout of columns.
//
// It imports documents/doc (Doc, Limits, the errors, the Markdown writer).
package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"unicode"

	"github.com/deerflow/deerflow/documents/doc"
)

// PDF text comes from one of two extractors. Poppler's pdftotext, when it
// is installed, copes with far more of the PDFs found in the wild (fonts
// without Unicode maps, object streams, AES-256 encryption with an empty
// password) and finds columns on its own; the built-in reader
// (github.com/ledongthuc/pdf plus the layout in pdf_layout.go) needs no
// program installed and is good enough for ordinary text PDFs.
//
// Each page's text is preceded by a line "--- Page N ---". A visible
// marker rather than an HTML comment: it survives rendering and any
// sanitiser that strips comments, so the model and the person reading the
// Markdown see the same page numbers and the model can cite them; it is
// not a Markdown heading or a thematic break, so it does not compete with
// the document's own structure.

const (
	extractorPdftotext = "pdftotext"
	extractorBuiltin   = "built-in"
)

// Extractor names the extractor PDFs are read with here: "pdftotext"
// when poppler's pdftotext is on PATH, else "built-in".
func Extractor() string {
	if _, err := exec.LookPath("pdftotext"); err == nil {
		return extractorPdftotext
	}
	return extractorBuiltin
}

// pdfText is what an extractor found: each page's plain text (pages[i] is
// page i+1, possibly "" for a page without text), the page count, and
// whether it stopped early because the text outgrew the output limit.
type pdfText struct {
	pages []string
	total int
	cut   bool
	// unreadable lists pages (1-based) the built-in reader failed on.
	unreadable []int
}

// pdfExtract reads the text of the PDF at path.
type pdfExtract func(ctx context.Context, path string, lim doc.Limits) (*pdfText, error)

// Convert converts a PDF with pdftotext when it is installed, else with
// the built-in reader; if pdftotext cannot even be started, the built-in
// reader is tried instead.
func Convert(ctx context.Context, path string, size int64, lim doc.Limits) (*doc.Doc, error) {
	if bin, err := exec.LookPath("pdftotext"); err == nil {
		doc, err := convertPDFWith(ctx, path, size, lim, pdfPopplerExtract(bin))
		if !errors.Is(err, errPDFToolFailed) {
			return doc, err
		}
	}
	return convertPDFWith(ctx, path, size, lim, pdfBuiltinExtract)
}

// convertPDFWith checks that the file looks like a PDF, extracts its text
// with extract and renders it as Markdown with page markers.
func convertPDFWith(ctx context.Context, path string, size int64, lim doc.Limits, extract pdfExtract) (*doc.Doc, error) {
	lim = lim.WithDefaults()
	if err := pdfCheckHeader(path, size); err != nil {
		return nil, err
	}
	if err := pdfCtxErr(ctx); err != nil {
		return nil, err
	}
	t, err := extract(ctx, path, lim)
	if err != nil {
		return nil, err
	}
	return pdfRender(t, lim), nil
}

// pdfCheckHeader refuses an empty file and one without "%PDF-" in its
// first kilobyte, which no PDF reader would open either.
func pdfCheckHeader(path string, size int64) error {
	if size == 0 {
		return pdfDamaged("it is empty")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 1024)
	n, err := io.ReadFull(f, head)
	if n == 0 {
		if err == io.EOF {
			return pdfDamaged("it is empty")
		}
		return err
	}
	if !bytes.Contains(head[:n], []byte("%PDF-")) {
		return pdfDamaged("it is not a PDF file")
	}
	return nil
}

// pdfRender writes the pages' text under page markers, within the output
// limit, and words a warning for pages without text.
func pdfRender(t *pdfText, lim doc.Limits) *doc.Doc {
	w := doc.NewWriter(lim.MaxOutput)
	var empty []int
	for i, text := range t.pages {
		text = strings.TrimSpace(text)
		if !pdfHasText(text) {
			empty = append(empty, i+1)
		}
		if text == "" || w.Full() {
			continue
		}
		w.Block(fmt.Sprintf("--- Page %d ---\n\n%s", i+1, text))
	}
	doc := &doc.Doc{Format: doc.PDF, Markdown: w.String(), Units: t.total, Cut: w.Full() || t.cut}
	if len(empty) == len(t.pages) && len(t.pages) > 0 && len(t.unreadable) == 0 {
		doc.Markdown = ""
		doc.Warning = fmt.Sprintf("scanned PDF: no text layer (%d %s of images); I can't read its text",
			t.total, pdfPlural(t.total, "page", "pages"))
		return doc
	}
	var warn []string
	if len(t.unreadable) > 0 {
		warn = append(warn, fmt.Sprintf("%s %s could not be read (damaged)",
			pdfPlural(len(t.unreadable), "page", "pages"), pdfPageList(t.unreadable)))
	}
	if scanned := pdfMinus(empty, t.unreadable); len(scanned) > 0 {
		warn = append(warn, fmt.Sprintf("%s %s of %d %s no text layer (scanned images or blank); I can't read what is on them",
			pdfPlural(len(scanned), "page", "pages"), pdfPageList(scanned), t.total,
			pdfPlural(len(scanned), "has", "have")))
	}
	doc.Warning = strings.Join(warn, "; ")
	return doc
}

// pdfHasText reports whether a page has real text: a scanned page often still
// carries a stray page number or a few characters of OCR noise, so fewer
// than 10 letters or digits count as none.
func pdfHasText(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if n++; n >= 10 {
				return true
			}
		}
	}
	return false
}

// pdfPageList writes page numbers as "2, 5, 7", shortened past 20 pages.
func pdfPageList(pages []int) string {
	var parts []string
	for i, p := range pages {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("and %d more", len(pages)-20))
			break
		}
		parts = append(parts, strconv.Itoa(p))
	}
	return strings.Join(parts, ", ")
}

// pdfMinus is a without the elements of b.
func pdfMinus(a, b []int) []int {
	var out []int
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

func pdfPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// pdfDamaged is ErrDamaged with a short detail for a person.
func pdfDamaged(detail string) error { return fmt.Errorf("%w (%s)", doc.ErrDamaged, detail) }

// pdfEncrypted is ErrEncrypted with a short detail for a person.
func pdfEncrypted(detail string) error { return fmt.Errorf("%w (%s)", doc.ErrEncrypted, detail) }

// pdfCtxErr is nil while ctx is live; past its deadline it is ErrTimeout
// (wrapping the context's error), otherwise the context's error.
func pdfCtxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)", doc.ErrTimeout, err)
	}
	return err
}
