package pdf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/ledongthuc/pdf"
)

// The built-in reader uses github.com/ledongthuc/pdf to parse the file and
// run each page's content stream, but positions the text itself: the
// library's Page.Content appends a stray glyph after every TJ operator
// (it decodes "\n" through the font) and re-parses a font's Unicode map at
// every font change, and its GetPlainText ignores positions altogether.

// pdfBuiltinExtract reads the PDF at path with the built-in reader. The
// library panics on much malformed input; a panic while opening is
// ErrDamaged, one on a page marks only that page unreadable.
func pdfBuiltinExtract(ctx context.Context, path string, lim doc.Limits) (*pdfText, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r, err := pdfOpenBuiltin(pdfHeaderFixer{f}, fi.Size())
	if err != nil {
		return nil, err
	}
	return pdfBuiltinPages(ctx, r, lim)
}

// pdfOpenBuiltin opens the PDF and words the library's errors for a person.
func pdfOpenBuiltin(f io.ReaderAt, size int64) (r *pdf.Reader, err error) {
	defer func() {
		if x := recover(); x != nil {
			r, err = nil, pdfDamaged("its structure is broken")
		}
	}()
	r, err = pdf.NewReader(f, size)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, pdfEncrypted("a password is needed to open it")
	case strings.Contains(err.Error(), "encryption"):
		return nil, pdfEncrypted("it is encrypted in a way this reader can't open")
	case strings.Contains(err.Error(), "missing %%EOF"), strings.Contains(err.Error(), "startxref"):
		return nil, pdfDamaged("it is incomplete: its end is missing")
	}
	return nil, pdfDamaged("its structure is broken")
}

// pdfBuiltinPages extracts the pages one by one, checking ctx between pages
// and stopping once the text outgrows the output limit. A page tree whose
// count overstates the pages ends at the first missing page.
func pdfBuiltinPages(ctx context.Context, r *pdf.Reader, lim doc.Limits) (*pdfText, error) {
	t := &pdfText{}
	n, size := pdfNumPage(r), 0
	for i := 1; i <= n; i++ {
		if err := pdfCtxErr(ctx); err != nil {
			return nil, err
		}
		p, ok := pdfPageAt(r, i)
		if !ok {
			break
		}
		t.total++
		if size > lim.MaxOutput {
			t.cut = true
			continue // count the remaining pages, read no more text
		}
		text, err := pdfPageText(ctx, p, lim.MaxOutput)
		if err != nil {
			if e := pdfCtxErr(ctx); e != nil {
				return nil, e
			}
			t.unreadable = append(t.unreadable, i)
		}
		size += len(text)
		t.pages = append(t.pages, text)
	}
	if t.total == 0 || len(t.unreadable) == t.total {
		return nil, pdfDamaged("no page could be read")
	}
	return t, nil
}

// pdfNumPage is the page count the document claims; 0 if it can't say.
func pdfNumPage(r *pdf.Reader) (n int) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	return r.NumPage()
}

// pdfPageAt is page i, or false when it is missing or its lookup panics.
func pdfPageAt(r *pdf.Reader, i int) (p pdf.Page, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	p = r.Page(i)
	return p, !p.V.IsNull()
}

// pdfPageText is the page's text laid out in reading order (pdf_layout.go).
// A panic in the library while reading the page is an error; text found
// before it is kept.
func pdfPageText(ctx context.Context, p pdf.Page, maxBytes int) (text string, err error) {
	g := &pdfContent{ctx: ctx, page: p, fonts: map[string]*pdfFont{}, maxBytes: maxBytes}
	defer func() {
		if x := recover(); x != nil {
			text = pdfLayoutPage(g.runs)
			if stop, ok := x.(errPDFStop); !ok || stop.why != "output limit" {
				err = fmt.Errorf("page unreadable: %v", x)
			}
		}
	}()
	g.walk()
	return pdfLayoutPage(g.runs), nil
}

// pdfHeaderFixer shows the library a header it accepts: it wants exactly
// "%PDF-1.x" and a line break, which turns away PDF 2.0 and headers
// followed by a space, files every other reader opens.
type pdfHeaderFixer struct{ f io.ReaderAt }

func (h pdfHeaderFixer) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.f.ReadAt(p, off)
	const fixed = "%PDF-1.7\n"
	if off < int64(len(fixed)) && n > 0 {
		head := make([]byte, len(fixed))
		m, _ := h.f.ReadAt(head, 0)
		if m == len(fixed) && strings.HasPrefix(string(head), "%PDF-") {
			copy(p[:n], fixed[off:])
		}
	}
	return n, err
}

// pdfRun is a string shown by one text operator, placed on the page:
// (x, y) is the baseline start, x1 the end, size the font size, all in
// points.
type pdfRun struct {
	s           string
	x, x1, y    float64
	size        float64
	approxWidth bool
}

// pdfFont is a font of the page with its decoder, parsed once per page.
type pdfFont struct {
	font   pdf.Font
	enc    pdf.TextEncoding
	widths bool // the font gives glyph widths (simple fonts do)
}

// pdfMat is an affine matrix [a b c d e f] as PDF writes it.
type pdfMat [6]float64

var pdfIdentity = pdfMat{1, 0, 0, 1, 0, 0}

// mul is m×n (m applied first).
func (m pdfMat) mul(n pdfMat) pdfMat {
	return pdfMat{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func pdfTranslate(tx, ty float64) pdfMat { return pdfMat{1, 0, 0, 1, tx, ty} }

// scaleY is how much m stretches a vertical length (the font size).
func (m pdfMat) scaleY() float64 { return math.Hypot(m[2], m[3]) }
