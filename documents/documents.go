// Package documents converts the files people send (PDF, Word, Excel,
// PowerPoint, CSV, HTML) to Markdown the model can read: headings,
// paragraphs, lists and tables kept; each sheet a table under its name,
// each slide a section with its title and notes, PDF text in reading order
// with page markers.
//
// Every conversion is bounded: the input's size, the unpacked size of a
// zipped Office file (a zip bomb is refused before anything is inflated),
// the Markdown's size and the time. A damaged, encrypted or image-only file
// gets an error or a warning worded for a person, never a crash or a hang.
//
// It imports no package of ours.
package documents

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

func (l Limits) withDefaults() Limits {
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

// extensions maps a lower-case file extension to its format.
var extensions = map[string]Format{
	".pdf": PDF, ".docx": DOCX, ".docm": DOCX, ".xlsx": XLSX, ".xlsm": XLSX,
	".xls": XLS, ".csv": CSV, ".tsv": CSV, ".pptx": PPTX, ".pptm": PPTX,
	".html": HTML, ".htm": HTML, ".xhtml": HTML,
}

// Detect says which format a file is, by its name's extension; "" when
// it is not converted. The content is checked by the converter.
func Detect(name string) Format {
	return extensions[strings.ToLower(filepath.Ext(name))]
}

// converter converts the file at path (of size bytes) within lim; ctx
// carries the deadline.
type converter func(ctx context.Context, path string, size int64, lim Limits) (*Doc, error)

// converters by format; each format's file registers its own.
var converters = map[Format]converter{}

// describe wraps err for the file's format: "PDF: it is damaged ...".
func describe(f Format, err error) error {
	return fmt.Errorf("%s: %w", strings.ToUpper(string(f)), err)
}

// problem is an error worded for a person that wraps one of the
// package's errors (the child's, or "it is empty").
type problem struct {
	msg  string
	kind error
}

func (e *problem) Error() string { return e.msg }
func (e *problem) Unwrap() error { return e.kind }
