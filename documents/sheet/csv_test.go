package sheet

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/google/go-cmp/cmp"
)

func TestCSV(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"sales.csv", "\xEF\xBB\xBFRegion,Total\nNorth,\"1,234\"\nSouth,99\n",
			"## sales.csv\n\n| Region | Total |\n| --- | --- |\n| North | 1,234 |\n| South | 99 |"},
		{"semi.csv", "Name;City;Note\nZoë;Köln;a|b\n\n\n",
			"## semi.csv\n\n| Name | City | Note |\n| --- | --- | --- |\n| Zoë | Köln | a\\|b |"},
		{"tabs.tsv", "a,b\tc\n1\t2\n", "## tabs.tsv\n\n| a,b | c |\n| --- | --- |\n| 1 | 2 |"},
		{"latin1.csv", "Name,Price\nCaf\xe9,5 \x80\n", "## latin1.csv\n\n| Name | Price |\n| --- | --- |\n| Café | 5 € |"},
		{"utf16.csv", "\xFF\xFEa\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00",
			"## utf16.csv\n\n| a | b |\n| --- | --- |\n| 1 | 2 |"},
		{"ragged.csv", "h1,h2\nonly\nx,y,z\nbad \"quote,here\n",
			"## ragged.csv\n\n| h1 | h2 |  |\n| --- | --- | --- |\n| only |  |  |\n| x | y | z |\n| bad \"quote | here |  |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := convertFile(t, doc.CSV, writeTemp(t, tt.name, []byte(tt.data)), doc.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Markdown); diff != "" {
				t.Errorf("Markdown (-want +got):\n%s", diff)
			}
			if got.Units != 1 {
				t.Errorf("Units = %d, want 1", got.Units)
			}
		})
	}
}

func TestCSVRowCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("n\n")
	for i := range maxSheetRows + 40 {
		b.WriteString(strings.Repeat("x", i%3+1) + "\n")
	}
	got, err := convertFile(t, doc.CSV, writeTemp(t, "long.csv", []byte(b.String())), doc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.Markdown, "\n\n(41 more rows not shown)") {
		t.Errorf("no note on the rows left out: ...%s", got.Markdown[len(got.Markdown)-80:])
	}
}
