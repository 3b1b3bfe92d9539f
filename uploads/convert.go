package uploads

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/documents"
	"github.com/deerflow/deerflow/sandbox"
)

// convert writes a document's Markdown beside it and describes both to
// the model; what went wrong is told to the person too.
func (u *Intake) convert(ctx context.Context, threadID string, s *Saved) {
	if u.opts.Converter == nil {
		return
	}
	name := base(s.Path)
	f, err := u.opts.Sandbox.OpenUpload(threadID, s.Path)
	if err != nil {
		u.log.WarnContext(ctx, "opening an upload to convert", "file", name, "err", err)
		return
	}
	doc, err := u.opts.Converter.ConvertFile(ctx, f, name)
	f.Close()
	if err != nil {
		why := reason(err)
		s.Line += " (not converted: " + why + ")"
		s.Notice = fmt.Sprintf("I couldn't read %s: %s.", name, why)
		if errors.Is(err, documents.ErrTimeout) || errors.Is(err, documents.ErrTooLarge) {
			s.Notice = fmt.Sprintf("I couldn't convert %s to text: %s. It is saved as it came.", name, why)
		}
		u.log.InfoContext(ctx, "upload not converted", "file", name, "err", err)
		return
	}
	if doc.Warning != "" {
		s.Notice = name + ": " + doc.Warning
	}
	if strings.TrimSpace(doc.Markdown) == "" {
		s.Line += " (" + describe(doc) + "; no text could be taken from it" + warned(doc) + ")"
		return
	}
	md, err := u.opts.Sandbox.SaveBeside(threadID, s.Path, sandbox.ConvertedSuffix, doc.Markdown)
	if err != nil {
		u.log.WarnContext(ctx, "saving an upload's Markdown", "file", name, "err", err)
		return
	}
	s.Line += " (" + describe(doc) + warned(doc) + ") → Markdown: " + md
	if doc.Cut {
		s.Line += " (cut: the document is longer than the conversion limit)"
	}
}

// describe says what a document is: "PDF, 12 pages".
func describe(doc *documents.Doc) string {
	kind := strings.ToUpper(string(doc.Format))
	unit := doc.Format.UnitName()
	switch {
	case doc.Units == 1 && unit != "":
		return fmt.Sprintf("%s, 1 %s", kind, unit)
	case doc.Units > 1 && unit != "":
		return fmt.Sprintf("%s, %d %ss", kind, doc.Units, unit)
	}
	return kind
}

func warned(doc *documents.Doc) string {
	if doc.Warning == "" {
		return ""
	}
	return "; " + doc.Warning
}

// reason is a conversion error's sentence without its format prefix
// ("PDF: it is password-protected" → "it is password-protected").
func reason(err error) string {
	msg := err.Error()
	if f, rest, ok := strings.Cut(msg, ": "); ok && f == strings.ToUpper(f) && !strings.Contains(f, " ") {
		return rest
	}
	return msg
}
