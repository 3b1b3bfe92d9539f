// Package doc holds what the document converters share: the converted
// document (Doc), its Format, the Limits of a conversion and the errors a
// conversion wraps; the capped Markdown Writer and its table helpers; and
// the guard that opens a zipped Office file without letting a zip bomb
// unpack. It is the leaf of the documents packages: the converters (pdf,
// office, sheet) and documents itself import it.
//
// It imports no package of ours.
package doc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Format is a kind of document that is converted.
type Format string

const (
	PDF  Format = "pdf"
	DOCX Format = "docx"
	XLSX Format = "xlsx"
	XLS  Format = "xls"
	CSV  Format = "csv"
	PPTX Format = "pptx"
	HTML Format = "html"
)

// Doc is a converted document.
type Doc struct {
	Format   Format
	Markdown string
	// Units counts the document's pages (PDF, and Word when it says),
	// sheets (spreadsheets, CSV: 1) or slides; 0 when unknown.
	Units int
	// Warning is a problem the reader should know about, worded for a
	// person ("scanned PDF: no text layer"); Markdown may then be empty.
	Warning string
	// Cut is set when the Markdown was cut at Limits.MaxOutput.
	Cut bool
}

// UnitName is what Units counts for f: "page", "sheet", "slide" or "".
func (f Format) UnitName() string {
	switch f {
	case PDF, DOCX:
		return "page"
	case XLSX, XLS, CSV:
		return "sheet"
	case PPTX:
		return "slide"
	}
	return ""
}

// Limits bound one conversion. Zero fields take the defaults.
type Limits struct {
	MaxInput    int64         // bytes of the file (default 50 MB)
	MaxUnpacked int64         // total inflated bytes of a zipped Office file (default 200 MB)
	MaxOutput   int           // bytes of Markdown kept (default 4 MB); the rest is cut
	Timeout     time.Duration // whole conversion (default 30 s)
}

// Defaults.
const (
	DefaultMaxInput    = 50 << 20
	DefaultMaxUnpacked = 200 << 20
	DefaultMaxOutput   = 4 << 20
	DefaultTimeout     = 30 * time.Second
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxInput <= 0 {
		l.MaxInput = DefaultMaxInput
	}
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = DefaultMaxUnpacked
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Errors a conversion wraps; their text is worded for the person who sent
// the file ("password-protected PDF: ...").
var (
	ErrUnsupported = errors.New("not a format that is converted")
	ErrEncrypted   = errors.New("it is password-protected")
	ErrDamaged     = errors.New("it is damaged or not what its name says")
	ErrTooLarge    = errors.New("it is too large to convert")
	ErrTimeout     = errors.New("converting it took too long")
)

// Converter converts the file at path (of size bytes) within lim; ctx
// carries the deadline.
type Converter func(ctx context.Context, path string, size int64, lim Limits) (*Doc, error)

// problem is an error worded for a person that wraps one of the
// package's errors (the child's, or "it is empty").
type problem struct {
	msg  string
	kind error
}

func (e *problem) Error() string { return e.msg }
func (e *problem) Unwrap() error { return e.kind }

// Problem returns an error that reads msg and wraps kind (one of the
// Err* errors).
func Problem(msg string, kind error) error { return &problem{msg: msg, kind: kind} }

// ReadCapped reads the whole file at path, refusing one of more than max
// bytes (the caller checked the size, but the file may have grown).
func ReadCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w (more than %d MB)", ErrTooLarge, max>>20)
	}
	return data, nil
}
