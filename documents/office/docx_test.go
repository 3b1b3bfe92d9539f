package office

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
)

func TestDOCXFromLibreOffice(t *testing.T) {
	got, err := convertFile(t, doc.DOCX, "testdata/report.docx", doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := `# Quarterly Report

Sales grew in every region this quarter. See [the dashboard](https://example.com/q3).

## Highlights

- Revenue up 12%
- New office in Lisbon
  - Opened in May

## Next Steps

1. Hire two engineers
2. Launch the beta

| Region | Q2 | Q3 |
| --- | --- | --- |
| North | 100 | 120 |
| South \| East | 80 | 95 |

Closing line.
Second line.`
	if diff := cmp.Diff(want, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Format != doc.DOCX || got.Cut || got.Units != 0 {
		t.Errorf("got = %+v, want DOCX, not cut, 0 pages (LibreOffice saves no page count)", got)
	}
}

// wordPart wraps body in a WordprocessingML document.
func wordPart(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="` + wNS +
		`" xmlns:mc="` + mcNS + `" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>` +
		body + `</w:body></w:document>`
}

// wp is a paragraph of style (none when "") and text.
func wp(style, text string) string {
	ppr := ""
	if style != "" {
		ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + ppr + `<w:r><w:t>` + text + `</w:t></w:r></w:p>`
}

func TestDOCXLocalisedStylesListsAndTables(t *testing.T) {
	styles := `<w:styles xmlns:w="` + wNS + `">
<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
<w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>
<w:style w:type="paragraph" w:styleId="Gliederung"><w:name w:val="Gliederung"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="Kapitel"><w:name w:val="Kapitel"/><w:basedOn w:val="berschrift1"/></w:style>
<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="Body text"/></w:style>
</w:styles>`
	numbering := `<w:numbering xmlns:w="` + wNS + `">
<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="lowerLetter"/></w:lvl></w:abstractNum>
<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
<w:num w:numId="5"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="6"><w:abstractNumId w:val="1"/></w:num>
</w:numbering>`
	item := func(num, lvl, text string) string {
		return `<w:p><w:pPr><w:numPr><w:ilvl w:val="` + lvl + `"/><w:numId w:val="` + num + `"/></w:numPr></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
	}
	body := wp("Titel", "Jahresbericht") + wp("berschrift1", "Einleitung") + wp("Gliederung", "Tiefer") +
		wp("Kapitel", "Kapitel Eins") + wp("Heading2", "Not a heading: its name says body text") +
		item("5", "0", "erstens") + item("5", "1", "unterpunkt") + item("5", "0", "zweitens") + item("6", "0", "Punkt") +
		`<w:p><w:r><w:t>a</w:t></w:r><w:r><w:tab/><w:t>b</w:t></w:r>` +
		`<mc:AlternateContent><mc:Choice Requires="wps"><w:r><w:t xml:space="preserve"> shown</w:t></w:r></mc:Choice>` +
		`<mc:Fallback><w:r><w:t>DUPLICATE</w:t></w:r></mc:Fallback></mc:AlternateContent></w:p>` +
		`<w:tbl><w:tr><w:tc>` + wp("", "K") + `</w:tc><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr>` + wp("", "wide") + `</w:tc></w:tr>` +
		`<w:tr><w:tc>` + wp("", "one") + wp("", "two") + `</w:tc><w:tc><w:tbl><w:tr><w:tc>` + wp("", "inner") +
		`</w:tc></w:tr></w:tbl></w:tc><w:tc>` + wp("", "x") + `</w:tc></w:tr></w:tbl>` +
		`<w:p><w:r><w:delText>deleted</w:delText><w:instrText>PAGE</w:instrText><w:t>kept</w:t></w:r></w:p>`
	data := makeZip(t, [2]string{"word/document.xml", wordPart(body)}, [2]string{"word/styles.xml", styles},
		[2]string{"word/numbering.xml", numbering},
		[2]string{"docProps/app.xml", `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>7</Pages></Properties>`})
	got, err := convertFile(t, doc.DOCX, writeTemp(t, "de.docx", data), doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Jahresbericht\n\n# Einleitung\n\n### Tiefer\n\n# Kapitel Eins\n\n" +
		"Not a heading: its name says body text\n\n" +
		"1. erstens\n  1. unterpunkt\n2. zweitens\n- Punkt\n\na\tb shown\n\n" +
		"| K | wide |  |\n| --- | --- | --- |\n| one<br>two | inner | x |\n\nkept"
	if diff := cmp.Diff(want, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Units != 7 {
		t.Errorf("Units = %d, want 7 pages from docProps/app.xml", got.Units)
	}
}

func TestDOCXCutAtMaxOutput(t *testing.T) {
	body := strings.Repeat(wp("", "Zoë says hello to everyone in the room."), 2000)
	p := writeTemp(t, "long.docx", makeZip(t, [2]string{"word/document.xml", wordPart(body)}))
	got, err := convertFile(t, doc.DOCX, p, doc.Limits{MaxOutput: 1001})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Cut || len(got.Markdown) > 1001 {
		t.Errorf("Cut = %v, len = %d; want cut at 1001", got.Cut, len(got.Markdown))
	}
}
