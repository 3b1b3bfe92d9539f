package office

import (
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
)

func TestPPTXFromLibreOffice(t *testing.T) {
	got, err := convertFile(t, doc.PPTX, "testdata/deck.pptx", doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := `## Slide 1: Project Apollo

- Launch window opens in June
  - Backup date in July
- Budget approved

Notes:
Remember to thank the launch team.

## Slide 2: Crew Schedule

| Astronaut | Role |
| --- | --- |
| Ada | Commander |

Notes:
Mention the training days.

## Slide 3: Questions`
	if diff := cmp.Diff(want, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Units != 3 {
		t.Errorf("Units = %d, want 3 slides", got.Units)
	}
}

const (
	pNS = "http://schemas.openxmlformats.org/presentationml/2006/main"
	aNS = "http://schemas.openxmlformats.org/drawingml/2006/main"
	rNS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
)

// pSlide is a slide part (or notes part, root "notes") with the shapes.
func pSlide(root, shapes string) string {
	return `<p:` + root + ` xmlns:p="` + pNS + `" xmlns:a="` + aNS + `" xmlns:r="` + rNS + `"><p:cSld><p:spTree>` +
		shapes + `</p:spTree></p:cSld></p:` + root + `>`
}

// pShape is a shape with placeholder type ph ("-" for none) and paragraphs.
func pShape(ph string, paras ...string) string {
	nv := `<p:nvPr/>`
	if ph != "-" {
		nv = `<p:nvPr><p:ph type="` + ph + `"/></p:nvPr>`
		if ph == "" {
			nv = `<p:nvPr><p:ph idx="1"/></p:nvPr>`
		}
	}
	body := ""
	for _, p := range paras {
		body += p
	}
	return `<p:sp><p:nvSpPr><p:cNvPr id="2" name="x"/><p:cNvSpPr/>` + nv + `</p:nvSpPr><p:txBody>` + body + `</p:txBody></p:sp>`
}

// aP is a paragraph with properties ppr and text.
func aP(ppr, text string) string { return `<a:p>` + ppr + `<a:r><a:t>` + text + `</a:t></a:r></a:p>` }

func TestPPTXOrderPlaceholdersAndNotes(t *testing.T) {
	rel := func(id, typ, target string) string {
		return `<Relationship Id="` + id + `" Type="` + rNS + `/` + typ + `" Target="` + target + `"/>`
	}
	rels := func(r ...string) string {
		s := `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
		for _, x := range r {
			s += x
		}
		return s + `</Relationships>`
	}
	data := makeZip(t,
		[2]string{"_rels/.rels", rels(rel("rId1", "officeDocument", "ppt/presentation.xml"))},
		// Slide order is b then a, against the file names.
		[2]string{"ppt/presentation.xml", `<p:presentation xmlns:p="` + pNS + `" xmlns:r="` + rNS +
			`"><p:sldIdLst><p:sldId id="256" r:id="rId7"/><p:sldId id="257" r:id="rId3"/></p:sldIdLst></p:presentation>`},
		[2]string{"ppt/_rels/presentation.xml.rels", rels(rel("rId3", "slide", "slides/a.xml"), rel("rId7", "slide", "/ppt/slides/b.xml"))},
		[2]string{"ppt/slides/b.xml", pSlide("sld", pShape("ctrTitle", aP("", "Welcome"), aP("", "Everyone"))+
			pShape("", aP("", "Body bullet"), aP(`<a:pPr lvl="1"/>`, "Deeper"), aP(`<a:pPr><a:buNone/></a:pPr>`, "No bullet"))+
			pShape("-", aP(`<a:pPr><a:buAutoNum type="arabicPeriod"/></a:pPr>`, "First"), aP(`<a:pPr><a:buAutoNum type="arabicPeriod"/></a:pPr>`, "Second"))+
			pShape("sldNum", aP("", "99")))},
		[2]string{"ppt/slides/_rels/b.xml.rels", rels(rel("rId1", "notesSlide", "../notesSlides/n1.xml"))},
		[2]string{"ppt/notesSlides/n1.xml", pSlide("notes", pShape("sldImg")+pShape("body", aP("", "Say hi"), aP("", "Then go on"))+pShape("sldNum", aP("", "1")))},
		[2]string{"ppt/slides/a.xml", pSlide("sld", pShape("-", aP("", "Untitled text box")))},
	)
	got, err := convertFile(t, doc.PPTX, writeTemp(t, "order.pptx", data), doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "## Slide 1: Welcome Everyone\n\n- Body bullet\n  - Deeper\n\nNo bullet\n\n1. First\n2. Second\n\n" +
		"Notes:\nSay hi\n\nThen go on\n\n## Slide 2\n\nUntitled text box"
	if diff := cmp.Diff(want, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Units != 2 {
		t.Errorf("Units = %d, want 2", got.Units)
	}
}
