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
// The converters live in sub-packages: pdf, office (Word, PowerPoint) and
// sheet (Excel, CSV); HTML is converted here. What they share (Doc,
// Format, Limits, the errors, the Markdown writer, the zip guard) is in
// doc, and named here too. This package runs a converter in this process
// or in a child process.
//
// It imports documents/doc, documents/pdf, documents/office and
// documents/sheet, no other package of ours.
package documents

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/office"
	"github.com/deerflow/deerflow/documents/pdf"
	"github.com/deerflow/deerflow/documents/sheet"
)

// The types, formats, limits and errors are defined in documents/doc and
// named here too, so that callers need only this package.
type (
	// Format is a kind of document that is converted.
	Format = doc.Format
	// Doc is a converted document.
	Doc = doc.Doc
	// Limits bound one conversion. Zero fields take the defaults.
	Limits = doc.Limits
)

const (
	PDF  = doc.PDF
	DOCX = doc.DOCX
	XLSX = doc.XLSX
	XLS  = doc.XLS
	CSV  = doc.CSV
	PPTX = doc.PPTX
	HTML = doc.HTML
)

// Defaults.
const (
	DefaultMaxInput    = doc.DefaultMaxInput
	DefaultMaxUnpacked = doc.DefaultMaxUnpacked
	DefaultMaxOutput   = doc.DefaultMaxOutput
	DefaultTimeout     = doc.DefaultTimeout
)

// Errors a conversion wraps; their text is worded for the person who sent
// the file ("password-protected PDF: ...").
var (
	ErrUnsupported = doc.ErrUnsupported
	ErrEncrypted   = doc.ErrEncrypted
	ErrDamaged     = doc.ErrDamaged
	ErrTooLarge    = doc.ErrTooLarge
	ErrTimeout     = doc.ErrTimeout
)

// PDFExtractor names the extractor PDFs are read with here: "pdftotext"
// when poppler's pdftotext is on PATH, else "built-in".
func PDFExtractor() string { return pdf.Extractor() }

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

// converters by format.
var converters = map[Format]doc.Converter{
	PDF:  pdf.Convert,
	DOCX: office.ConvertDOCX,
	PPTX: office.ConvertPPTX,
	XLSX: sheet.ConvertXLSX,
	XLS:  sheet.ConvertXLS,
	CSV:  sheet.ConvertCSV,
	HTML: convertHTML,
}

// describe wraps err for the file's format: "PDF: it is damaged ...".
func describe(f Format, err error) error {
	return fmt.Errorf("%s: %w", strings.ToUpper(string(f)), err)
}
