package sheet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
	"github.com/xuri/excelize/v2"
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

func TestXLSXFromExcelize(t *testing.T) {
	f := excelize.NewFile()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.SetSheetName("Sheet1", "Big"))
	for r := 1; r <= maxSheetRows+25; r++ {
		cell, _ := excelize.CoordinatesToCellName(1, r)
		must(f.SetCellValue("Big", cell, r))
	}
	_, err := f.NewSheet("Dates")
	must(err)
	must(f.SetCellValue("Dates", "A1", "When"))
	must(f.SetCellValue("Dates", "A2", time.Date(2023, 12, 24, 0, 0, 0, 0, time.UTC)))
	must(f.SetCellValue("Dates", "D9", "")) // empty trailing cells are dropped
	_, err = f.NewSheet("Empty")
	must(err)
	p := filepath.Join(t.TempDir(), "made.xlsx")
	must(f.SaveAs(p))

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
