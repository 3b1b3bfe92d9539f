package pdf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/deerflow/deerflow/documents/doc"
)

// pdftotext runs in its default mode, not -layout or -raw. Measured on the
// fixtures in testdata: the default mode reads a two-column page column
// by column, while -layout interleaves the columns line by line and garbles
// every sentence; -layout keeps a table's rows on one line each, where the
// default mode may put a row's cells on separate lines. Prose matters more
// to the model than a table's alignment, so the default wins. -raw (content
// stream order) got both right on LibreOffice's output, but its order is
// whatever the producer painted in, and poppler itself discourages it.

// errPDFToolFailed means pdftotext could not be run at all (not a verdict on
// the file); the caller falls back to the built-in reader.
var errPDFToolFailed = errors.New("pdftotext could not be run")

// pdfStderrMax bounds the diagnostics kept from pdftotext.
const pdfStderrMax = 16 << 10

// pdfPopplerExtract returns an extractor running the pdftotext binary at bin.
func pdfPopplerExtract(bin string) pdfExtract {
	return func(ctx context.Context, path string, lim doc.Limits) (*pdfText, error) {
		return pdfRunPdftotext(ctx, bin, path, lim)
	}
}

// pdfRunPdftotext runs pdftotext on path, killed when ctx ends, keeping at
// most a little more than the output limit of its text (then it is stopped:
// its pipe is closed and it dies writing), and splits the pages on the form
// feed it writes after each one.
func pdfRunPdftotext(ctx context.Context, bin, path string, lim doc.Limits) (*pdfText, error) {
	cmd, done, err := pdfCommand(ctx, path, bin, "-enc", "UTF-8", pdfChildFile, "-")
	if err != nil {
		return nil, pdfDamaged("it could not be read")
	}
	defer done()
	stdout := &pdfCapBuffer{max: lim.MaxOutput + 64<<10}
	stderr := &pdfCapBuffer{max: pdfStderrMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// After a kill, don't wait long for the pipes (a child could hold them).
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if e := pdfCtxErr(ctx); e != nil {
		return nil, e
	}
	var exitErr *exec.ExitError
	switch {
	case stdout.full:
		// Stopped on purpose; the exit status is that of a broken pipe.
	case err != nil && !errors.As(err, &exitErr):
		return nil, errors.Join(errPDFToolFailed, err)
	case err != nil:
		return nil, pdfPopplerError(stderr.String(), exitErr.ExitCode())
	}
	out := stdout.String()
	if strings.TrimSpace(out) == "" && strings.Contains(stderr.String(), "Syntax Error") &&
		!strings.Contains(out, "\f") {
		return nil, pdfDamaged("its structure is broken")
	}
	pages := strings.Split(out, "\f")
	if !stdout.full {
		pages = pages[:len(pages)-1] // the text after the last form feed
	}
	t := &pdfText{pages: pages, total: len(pages), cut: stdout.full}
	if stdout.full {
		if n := pdfInfoPages(ctx, bin, path); n > 0 {
			t.total = n
		}
	}
	return t, nil
}

// pdfPopplerError words a failed pdftotext run for a person, from its
// diagnostics and exit status (1: the file could not be opened, 3: its
// permissions forbid copying text).
func pdfPopplerError(stderr string, code int) error {
	switch {
	case strings.Contains(stderr, "Incorrect password"):
		return pdfEncrypted("a password is needed to open it")
	case code == 3 || strings.Contains(stderr, "Permission Error"):
		return pdfEncrypted("its owner does not allow copying its text")
	case strings.Contains(stderr, "Document stream is empty"):
		return pdfDamaged("it is empty")
	case strings.Contains(stderr, "May not be a PDF file"):
		return pdfDamaged("it is not a PDF file")
	case strings.Contains(stderr, "Couldn't read xref"), strings.Contains(stderr, "Couldn't find trailer"):
		return pdfDamaged("it is incomplete or its structure is broken")
	}
	return pdfDamaged("pdftotext could not read it")
}

// pdfInfoPages asks pdfinfo (installed next to pdftotext) for the page
// count; 0 when it can't say.
func pdfInfoPages(ctx context.Context, pdftotext, path string) int {
	bin := strings.TrimSuffix(pdftotext, "pdftotext") + "pdfinfo"
	cmd, done, err := pdfCommand(ctx, path, bin, pdfChildFile)
	if err != nil {
		return 0
	}
	defer done()
	out := &pdfCapBuffer{max: 64 << 10}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second
	if cmd.Run() != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pages:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// pdfChildFile is the PDF as the poppler tools see it: their first extra
// descriptor.
const pdfChildFile = "/dev/fd/3"

// pdfCommand prepares a poppler tool reading the PDF at path through an
// open descriptor rather than by its name: path may be /proc/self/fd/N
// (see ConvertFile), which means nothing in another process, and a name
// could be swapped for a link meanwhile. done closes the descriptor.
func pdfCommand(ctx context.Context, path, bin string, args ...string) (cmd *exec.Cmd, done func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.ExtraFiles = []*os.File{f}
	return cmd, func() { f.Close() }, nil
}

// errPDFBufferFull stops the copy from a process's pipe.
var errPDFBufferFull = errors.New("output limit reached")

// pdfCapBuffer keeps the first max bytes written to it; past that it keeps
// the part that fits, sets full and fails, which makes exec stop reading
// the process's pipe.
type pdfCapBuffer struct {
	b    bytes.Buffer
	max  int
	full bool
}

func (c *pdfCapBuffer) Write(p []byte) (int, error) {
	room := c.max - c.b.Len()
	if len(p) > room {
		c.b.Write(p[:max(room, 0)])
		c.full = true
		return max(room, 0), errPDFBufferFull
	}
	return c.b.Write(p)
}

func (c *pdfCapBuffer) String() string { return c.b.String() }
