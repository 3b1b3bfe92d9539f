package main

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// zipBomb is a .docx whose one part inflates to n bytes of zeros.
func zipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, err := z.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, n))
	z.Close()
	return b.Bytes()
}

// TestBadDocumentsAreToldNotLost: on each platform, a password-protected
// PDF, a scanned one, a zip bomb dressed as Word, a Word file cut in half
// and an empty one each get a sentence saying why they can't be read; the
// file is kept, the model is told too, and the person's question is
// still answered.
func TestBadDocumentsAreToldNotLost(t *testing.T) {
	docx := fixture(t, "office/testdata/report.docx")
	files := []struct {
		name   string
		data   []byte
		notice string
	}{
		{"locked.pdf", fixture(t, "pdf/testdata/encrypted.pdf"), "I couldn't read locked.pdf: "},
		{"scan.pdf", fixture(t, "pdf/testdata/scan.pdf"), "scan.pdf: scanned PDF: no text layer"},
		{"bomb.docx", zipBomb(t, 3<<20), "I couldn't convert bomb.docx to text: "},
		{"half.docx", docx[:len(docx)/2], "I couldn't read half.docx: it is damaged"},
		{"empty.docx", nil, "I couldn't read empty.docx: it is empty."},
	}
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		_, rest, _ := strings.Cut(r.Last().Content, "/mnt/user-data/uploads/")
		name, _, _ := strings.Cut(rest, " ")
		return fakeopenai.Turn{Text: "answered about " + name, Chunk: -1}
	})
	small := func(c *config.Config) { c.Uploads.Convert.MaxUnpackedMB = 1 }
	for _, start := range chatSides(t, model, small) {
		p := start(t)
		t.Run(p.name, func(t *testing.T) {
			for _, f := range files {
				before := len(model.Requests())
				caption := "what is inside?"
				p.send(f.name, f.data, caption)
				p.sees(f.notice)
				if p.name == "lark" {
					caption = "" // Lark files come without text
				}
				p.sees("answered about " + f.name)
				p.run.app.router.WaitIdle(t.Context())
				reqs := model.Requests()[before:]
				if len(reqs) != 1 {
					t.Fatalf("%s: %d model requests, want 1", f.name, len(reqs))
				}
				told := reqs[0].Last().Content
				if !strings.Contains(told, "/mnt/user-data/uploads/"+f.name) || !strings.Contains(told, caption) {
					t.Errorf("%s: the model was told:\n%s", f.name, told)
				}
				if strings.Contains(told, f.name+".md") {
					t.Errorf("%s: a Markdown version was offered:\n%s", f.name, told)
				}
			}
		})
	}
}
