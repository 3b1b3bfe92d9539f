package numfmt

import "testing"

// numberFormatCases are examples from Microsoft's "Number format codes"
// and "Review guidelines for customizing a number format" pages, and
// Excel's built-in formats.
var numberFormatCases = []struct {
	v    float64
	code string
	want string
}{
	{1234.59, "####.#", "1234.6"},
	{8.9, "#.000", "8.900"},
	{0.631, "0.0", "0.6"},
	{12, "#.0#", "12.0"},
	{1234.568, "#.0#", "1234.57"},
	{44.398, "???.???", " 44.398"},
	{102.65, "???.???", "102.65 "},
	{2.8, "???.???", "  2.8  "},
	{0.28, "0%", "28%"},
	{-0.03, "0.0%", "-3.0%"},
	{0.125, "0.0%", "12.5%"},
	{12200000, "0.0,,", "12.2"},
	{12000, "#,###", "12,000"},
	{12000, "#,", "12"},
	{1234.5, "#,##0.00", "1,234.50"},
	{5.25, "# ?/?", "5 1/4"},
	{5.3, "# ?/?", "5 2/7"},
	{0.5, "?/?", "1/2"},
	{0.3, "# ??/100", " 30/100"},
	{12345.678, "0.00E+00", "1.23E+04"},
	{0.000123, "0.00E+00", "1.23E-04"},
	{12345, "##0.0E+0", "12.3E+3"},
	{-5, "$#,##0.00", "-$5.00"},
	{-5, "#,##0.00;[Red](#,##0.00)", "(5.00)"},
	{0, `0.00;-0.00;"zero"`, "zero"},
	{-5, `0.00;-0.00;"zero"`, "-5.00"},
	{5, `[<=100]"small";"big"`, "small"},
	{500, `[<=100]"small";"big"`, "big"},
	{1234.5, "[$€-407] #,##0.00", "€ 1,234.50"},
	{1234.5, "[$-409]#,##0", "1,235"},
	{123456789, "000-00-0000", "123-45-6789"},
	{-1234.5, `_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)`, " (1,234.50)"},
	{0, `_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)`, " -   "},
	{1.005, "0.00", "1.01"},
	{0.5, "0", "1"},
	{-0.5, "0", "-1"},
	// dates and times
	{45292, "yyyy-mm-dd", "2024-01-01"},
	{45292, "yyyy\\-mm\\-dd", "2024-01-01"},
	{45382, "yyyy\\-mm\\-dd", "2024-03-31"},
	{45292, "mm-dd-yy", "01-01-24"},
	{45292, "m/d/yyyy", "1/1/2024"},
	{45292, "dddd, mmmm d, yyyy", "Monday, January 1, 2024"},
	{45292, "ddd d mmm yy", "Mon 1 Jan 24"},
	{45292, "mmmmm", "J"},
	{45292.75, "h:mm AM/PM", "6:00 PM"},
	{45292.75, "h:mm a/p", "6:00 p"},
	{45292.75, "hh:mm:ss", "18:00:00"},
	{0.5 + 1.0/1440, "h:mm", "12:01"},
	{0.5 + 61.0/86400, "mm:ss", "01:01"},
	{1.25, "[h]:mm:ss", "30:00:00"},
	{0.0001234, "mm:ss.0", "00:10.7"},
	{60, "yyyy-mm-dd", "1900-02-29"},
	{61, "yyyy-mm-dd", "1900-03-01"},
	{1, "dddd yyyy-mm-dd", "Sunday 1900-01-01"},
	{-1, "yyyy-mm-dd", "-1"},
	// General
	{0, "General", "0"},
	{1234.5, "General", "1234.5"},
	{0.1 + 0.2, "General", "0.3"},
	{1.0 / 7, "General", "0.142857143"},
	{-1.0 / 7, "General", "-0.142857143"},
	{12345678901, "General", "12345678901"},
	{123456789012, "General", "1.23457E+11"},
	{0.00001, "General", "1E-05"},
	{0.0001, "General", "0.0001"},
	{1e20, "General", "1E+20"},
	{42, "@", "42"},
	{42, `General" kg"`, "42 kg"},
}

func TestNumberFormats(t *testing.T) {
	for _, c := range numberFormatCases {
		if got := Parse(c.code).Number(c.v, false); got != c.want {
			t.Errorf("%v in %q = %q, want %q", c.v, c.code, got, c.want)
		}
	}
}

func TestDate1904(t *testing.T) {
	if got := Parse("yyyy-mm-dd").Number(0, true); got != "1904-01-01" {
		t.Errorf("serial 0 in 1904 = %q", got)
	}
	if got := Parse("yyyy-mm-dd").Number(43830, true); got != "2024-01-01" {
		t.Errorf("serial 43830 in 1904 = %q", got)
	}
}

func TestBuiltinFormats(t *testing.T) {
	ids := []int{0, 1, 2, 3, 4, 9, 10, 11, 14, 15, 16, 17, 18, 20, 22, 37, 38, 45, 46, 47, 49, 12}
	want := []string{"1234.5678", "1235", "1234.57", "1,235", "1,234.57", "123457%", "123456.78%",
		"1.23E+03", "05-18-03", "18-May-03", "18-May", "May-03", "1:37 PM", "13:37",
		"5/18/03 13:37", "1,235 ", "1,235 ", "37:38", "29629:37:38", "37:37.9", "1234.5678", "1234 4/7"}
	for i, w := range want {
		if got := Parse(Builtin(ids[i])).Number(1234.5678, false); got != w {
			t.Errorf("built-in %d = %q, want %q", ids[i], got, w)
		}
	}
	if got := Parse(Builtin(0)).Text("x"); got != "x" {
		t.Errorf("text = %q", got)
	}
	g := Parse(`0;-0;0;"Name: "@`)
	if got := g.Text("Zoë"); got != "Name: Zoë" {
		t.Errorf("text section = %q", got)
	}
}
