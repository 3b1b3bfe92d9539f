package sheet

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
)

// bookMarkdown is what book.fods holds, as LibreOffice's .xlsx and .xls
// of it must both convert: displayed number, percent and date formats,
// a formula's result, a non-ASCII name and a pipe in a cell.
const bookMarkdown = `## Sheet: Sales

| Region | Revenue | Growth | Closed |
| --- | --- | --- | --- |
| North | 1,234.50 | 12.5% | 2024-03-31 |
| South | 987.00 | -3.0% | 2024-06-30 |
| Total | 2,221.50 |  |  |

## Sheet: Notes

| Owner | Comment |
| --- | --- |
| Zoë | Check the Q3 figures \| twice |`

func TestXLSXFromLibreOffice(t *testing.T) {
	got, err := convertFile(t, doc.XLSX, "testdata/book.xlsx", doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bookMarkdown, got.Markdown); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
	if got.Units != 2 || got.Format != doc.XLSX {
		t.Errorf("got = %+v, want XLSX with 2 sheets", got)
	}
}

func TestXLSXHandMade(t *testing.T) {
	var big strings.Builder
	for r := 1; r <= maxSheetRows+25; r++ {
		fmt.Fprintf(&big, `<row r="%d"><c r="A%d"><v>%d</v></c></row>`, r, r, r)
	}
	p := writeXLSX(t, []string{"Big", "Dates", "Empty"}, nil, []string{
		big.String(),
		`<row r="1"><c r="A1" t="inlineStr"><is><t>When</t></is></c></row>` +
			`<row r="2"><c r="A2" s="1"><v>45284</v></c></row>` +
			`<row r="9"><c r="D9" t="inlineStr"><is><t></t></is></c></row>`, // empty trailing cells are dropped
		"",
	})
	got, err := convertFile(t, doc.XLSX, p, doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Sheet: Big\n\n| 1 |\n| --- |\n| 2 |\n", "| 1000 |\n\n(25 more rows not shown)",
		"## Sheet: Dates\n\n| When |\n| --- |\n| 12-24-23 |", "## Sheet: Empty\n\n(empty sheet)"} {
		if !strings.Contains(got.Markdown, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, got.Markdown[len(got.Markdown)-300:])
		}
	}
	if got.Units != 3 {
		t.Errorf("Units = %d, want 3", got.Units)
	}
}

func TestXLSXCellKinds(t *testing.T) {
	sst := []string{`<si><t>plain</t></si>`,
		`<si><r><t>rich </t></r><r><rPr><b/></rPr><t>text</t></r><rPh sb="0" eb="1"><t>PHONETIC</t></rPh></si>`,
		`<si><t>a_x000D_b</t></si>`}
	p := writeXLSX(t, []string{"Kinds"}, sst, []string{
		`<row><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c r="E1" t="s"><v>2</v></c></row>` +
			`<row r="3"><c t="b"><v>1</v></c><c t="e"><v>#DIV/0!</v></c><c t="str"><f>A1</f><v>formula</v></c>` +
			`<c s="2"><v>0.25</v></c><c s="3" t="d"><v>2024-01-01T00:00:00</v></c><c r="CZ3"><v>7</v></c></row>`,
	})
	got, err := convertFile(t, doc.XLSX, p, doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "## Sheet: Kinds\n\n| plain | rich text |  |  | a<br>b |\n| --- | --- | --- | --- | --- |\n" +
		"|  |  |  |  |  |\n| TRUE | #DIV/0! | formula | 25.0% | 2024-01-01 |"
	if !strings.HasPrefix(got.Markdown, want) || !strings.HasSuffix(got.Markdown, "\n\n(4 more columns not shown)") {
		t.Errorf("Markdown:\n%s\nwant it to start with\n%s", got.Markdown, want)
	}
}

func TestXLSXDamaged(t *testing.T) {
	p := writeXLSX(t, []string{"Bad"}, nil, []string{`<row><c><v>1</v></c></row></sheetData><oops`})
	_, err := convertFile(t, doc.XLSX, p, doc.Limits{})
	wantErr(t, "broken sheet XML", err, doc.ErrDamaged)
	_, err = convertFile(t, doc.XLSX, writeTemp(t, "locked.xlsx", append(append([]byte(nil), doc.CFBMagic...), 0, 0)), doc.Limits{})
	wantErr(t, "encrypted", err, doc.ErrEncrypted)
}

// writeXLSX writes a workbook made of hand-written parts: the sheets
// named names with the given sheetData rows, the shared strings sst (si
// elements), and styles whose cell formats 0-3 are General, the built-in
// date 14, "0.0%" and "yyyy-mm-dd".
func writeXLSX(t *testing.T, names, sst []string, rows []string) string {
	t.Helper()
	const ns = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
		`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	const relNS = `http://schemas.openxmlformats.org/officeDocument/2006/relationships/`
	var sheets, rels strings.Builder
	parts := map[string]string{}
	for i, name := range names {
		fmt.Fprintf(&sheets, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, name, i+1, i+1)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="%sworksheet" Target="worksheets/sheet%d.xml"/>`, i+1, relNS, i+1)
		parts[fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)] = `<worksheet ` + ns + `><sheetData>` + rows[i] + `</sheetData></worksheet>`
	}
	fmt.Fprintf(&rels, `<Relationship Id="rS" Type="%sstyles" Target="styles.xml"/>`, relNS)
	fmt.Fprintf(&rels, `<Relationship Id="rT" Type="%ssharedStrings" Target="sharedStrings.xml"/>`, relNS)
	parts["_rels/.rels"] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="` + relNS + `officeDocument" Target="xl/workbook.xml"/></Relationships>`
	parts["xl/workbook.xml"] = `<workbook ` + ns + `><workbookPr date1904="false"/><sheets>` + sheets.String() + `</sheets></workbook>`
	parts["xl/_rels/workbook.xml.rels"] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels.String() + `</Relationships>`
	parts["xl/sharedStrings.xml"] = `<sst ` + ns + `>` + strings.Join(sst, "") + `</sst>`
	parts["xl/styles.xml"] = `<styleSheet ` + ns + `><numFmts><numFmt numFmtId="164" formatCode="0.0%"/>` +
		`<numFmt numFmtId="165" formatCode="yyyy\-mm\-dd"/></numFmts><cellXfs>` +
		`<xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/><xf numFmtId="165"/></cellXfs></styleSheet>`
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range parts {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" + body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "made.xlsx", buf.Bytes())
}

func BenchmarkXLSX10Sheets(b *testing.B) {
	p := "testdata/bench.xlsx"
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	lim := doc.Limits{}.WithDefaults()
	for b.Loop() {
		got, err := ConvertXLSX(context.Background(), p, st.Size(), lim)
		if err != nil || got.Units != 10 || !strings.Contains(got.Markdown, "## Sheet: Sheet10") {
			b.Fatalf("err %v, doc %+v", err, got)
		}
	}
}
