// Package numfmt renders numbers the way a spreadsheet shows them: Excel
// number format codes (built-in ids 0-49 and custom codes) applied to a
// cell's value, dates from serial numbers included.
//
// It imports no package of ours.
package numfmt

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file parses Excel number format codes ("#,##0.00;[Red]-0.00",
// "yyyy-mm-dd", "0.0%") into sections of tokens; numfmtnum.go and
// numfmtdate.go render a value with them. It exists so that cells are
// shown as Excel and LibreOffice display them without linking a whole
// spreadsheet library.

// builtinFormats are the codes of Excel's built-in number formats, by id.
// Id 14 is the locale's short date; "mm-dd-yy" is what the converter has
// always shown for it.
var builtinFormats = map[int]string{
	0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00",
	5: `"$"#,##0_);("$"#,##0)`, 6: `"$"#,##0_);[Red]("$"#,##0)`,
	7: `"$"#,##0.00_);("$"#,##0.00)`, 8: `"$"#,##0.00_);[Red]("$"#,##0.00)`,
	9: "0%", 10: "0.00%", 11: "0.00E+00", 12: "# ?/?", 13: "# ??/??",
	14: "mm-dd-yy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy",
	18: "h:mm AM/PM", 19: "h:mm:ss AM/PM", 20: "hh:mm", 21: "hh:mm:ss",
	22: "m/d/yy hh:mm",
	37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)",
	39: "#,##0.00 ;(#,##0.00)", 40: "#,##0.00 ;[Red](#,##0.00)",
	41: `_(* #,##0_);_(* \(#,##0\);_(* "-"_);_(@_)`,
	42: `_("$"* #,##0_);_("$"* \(#,##0\);_("$"* "-"_);_(@_)`,
	43: `_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)`,
	44: `_("$"* #,##0.00_);_("$"* \(#,##0.00\);_("$"* "-"??_);_(@_)`,
	45: "mm:ss", 46: "[h]:mm:ss", 47: "mm:ss.0", 48: "##0.0E+0", 49: "@",
}

// builtinFormat returns the code of built-in format id; the East Asian
// date ids (27-36, 50-58) are shown as the short date, unknown ids as
// General.
func Builtin(id int) string {
	if s, ok := builtinFormats[id]; ok {
		return s
	}
	if id >= 27 && id <= 36 || id >= 50 && id <= 58 {
		return builtinFormats[14]
	}
	return "General"
}

// tokKind is the kind of one token of a format section.
type tokKind uint8

const (
	tLit     tokKind = iota // literal text
	tDigit                  // digit placeholder 0, # or ?
	tPoint                  // decimal point
	tComma                  // comma: thousands separator, scaling or literal
	tPercent                // percent sign: value times 100
	tExp                    // E+ or E-
	tSlash                  // fraction bar
	tText                   // @: the cell's text
	tGeneral                // General
	tYear
	tMonth
	tDay
	tHour
	tMinute
	tSecond
	tAMPM    // AM/PM or A/P
	tElapsed // [h], [mm], [ss]: elapsed time
	tSkip    // a comma used for grouping or scaling: shows nothing
)

// fmtTok is one token: its kind, placeholder character, run length (for
// date letters and elapsed units) and text.
type fmtTok struct {
	kind tokKind
	ch   byte
	n    int
	s    string
}

// fmtSection is one ;-separated section of a format code.
type fmtSection struct {
	toks    []fmtTok
	cond    string  // condition operator ("<", ">=", ...), "" for none
	condVal float64 // the condition's operand
	date    bool    // has date or time tokens
	digits  bool    // has digit placeholders
	general bool    // has General
	text    bool    // has @
	ampm    bool    // 12-hour clock
	fracSec int     // digits of fractional seconds shown
	// number layout, for sections that are not dates
	group   bool // thousands separators
	scale   int  // trailing commas: value divided by 1000 each
	percent int  // percent signs: value times 100 each
	intN    int  // integer digit placeholders
	decN    int  // decimal digit placeholders
	exp     int  // index of the tExp token, -1 for none
	slash   int  // index of the fraction bar, -1 for none
}

// Format is a parsed format code: up to three sections for numbers
// (positive, negative, zero, or conditional ones) and one for text.
type Format struct {
	nums []*fmtSection
	text *fmtSection
	// plain is set for "General" alone, the common case.
	plain bool
}

// Parse parses a format code; it never fails, unknown parts
// are shown as literal text.
func Parse(code string) *Format {
	f := &Format{}
	if code == "" || strings.EqualFold(code, "General") {
		f.plain = true
		return f
	}
	for i, s := range splitSections(code) {
		sec := parseSection(s)
		if i == 3 || (i > 0 && sec.text && !sec.digits && !sec.date) {
			if f.text == nil {
				f.text = sec
			}
			continue
		}
		if len(f.nums) < 3 {
			f.nums = append(f.nums, sec)
		}
	}
	if len(f.nums) == 1 && f.nums[0].text && !f.nums[0].digits && !f.nums[0].date {
		f.text = f.nums[0]
	}
	return f
}

// splitSections splits a code at the semicolons outside quotes, brackets
// and escapes.
func splitSections(code string) []string {
	var out []string
	start, quoted, bracket := 0, false, false
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case quoted:
			quoted = c != '"'
		case bracket:
			bracket = c != ']'
		case c == '"':
			quoted = true
		case c == '[':
			bracket = true
		case c == '\\' || c == '_' || c == '*':
			i++
		case c == ';':
			out = append(out, code[start:i])
			start = i + 1
		}
	}
	return append(out, code[start:])
}

// parseSection tokenizes one section and works out its layout.
func parseSection(s string) *fmtSection {
	sec := &fmtSection{exp: -1, slash: -1}
	for i := 0; i < len(s); {
		i = sec.token(s, i)
	}
	sec.resolveMinutes()
	if sec.date {
		sec.fracSeconds()
	} else {
		sec.layout()
	}
	return sec
}

// lit appends literal text, merged with a literal before it.
func (sec *fmtSection) lit(s string) {
	if n := len(sec.toks); n > 0 && sec.toks[n-1].kind == tLit {
		sec.toks[n-1].s += s
		return
	}
	sec.toks = append(sec.toks, fmtTok{kind: tLit, s: s})
}

// add appends a token.
func (sec *fmtSection) add(kind tokKind, ch byte, n int, s string) {
	sec.toks = append(sec.toks, fmtTok{kind: kind, ch: ch, n: n, s: s})
}

// token reads the token at s[i] and returns where the next one starts.
func (sec *fmtSection) token(s string, i int) int {
	c := s[i]
	switch c {
	case '"':
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			sec.lit(s[i+1:])
			return len(s)
		}
		sec.lit(s[i+1 : i+1+end])
		return i + end + 2
	case '\\', '_', '*':
		if i+1 >= len(s) {
			return len(s)
		}
		_, n := utf8.DecodeRuneInString(s[i+1:])
		switch c {
		case '\\':
			sec.lit(s[i+1 : i+1+n])
		case '_':
			sec.lit(" ")
		}
		return i + 1 + n
	case '[':
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			return len(s)
		}
		sec.bracket(s[i+1 : i+end])
		return i + end + 1
	case '0', '#', '?':
		sec.digits = true
		sec.add(tDigit, c, 1, "")
	case '.':
		sec.add(tPoint, c, 1, "")
	case ',':
		sec.add(tComma, c, 1, "")
	case '%':
		sec.add(tPercent, c, 1, "")
	case '/':
		sec.add(tSlash, c, 1, "")
	case '@':
		sec.text = true
		sec.add(tText, c, 1, "")
	default:
		return sec.letters(s, i)
	}
	return i + 1
}

// letters reads a token that starts with a letter (date parts, AM/PM,
// General, E+) or any other character, kept as a literal.
func (sec *fmtSection) letters(s string, i int) int {
	c := s[i]
	lower := c | 0x20
	rest := s[i:]
	switch {
	case (c == 'E' || c == 'e') && i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-'):
		sec.add(tExp, 'E', 1, "E"+s[i+1:i+2])
		return i + 2
	case len(rest) >= 7 && strings.EqualFold(rest[:7], "General"):
		sec.general = true
		sec.add(tGeneral, 0, 1, "")
		return i + 7
	case len(rest) >= 5 && strings.EqualFold(rest[:5], "AM/PM"):
		sec.date, sec.ampm = true, true
		sec.add(tAMPM, c, 1, "AM/PM")
		return i + 5
	case len(rest) >= 3 && strings.EqualFold(rest[:3], "A/P"):
		sec.date, sec.ampm = true, true
		sec.add(tAMPM, c, 1, "A/P")
		return i + 3
	case lower == 'y' || lower == 'm' || lower == 'd' || lower == 'h' || lower == 's' || lower == 'e':
		n := 1
		for i+n < len(s) && s[i+n]|0x20 == lower {
			n++
		}
		sec.date = true
		if lower == 'e' { // the year of the locale's era: the year here
			sec.add(tYear, 'y', 4, "")
			return i + n
		}
		kinds := map[byte]tokKind{'y': tYear, 'm': tMonth, 'd': tDay, 'h': tHour, 's': tSecond}
		sec.add(kinds[lower], lower, n, "")
		return i + n
	case lower == 'g' || lower == 'b' && i+1 < len(s) && (s[i+1] == '1' || s[i+1] == '2'):
		if lower == 'b' { // B1, B2: calendar marks, not shown
			return i + 2
		}
		return i + 1 // era marks: not shown
	}
	_, n := utf8.DecodeRuneInString(rest)
	sec.lit(s[i : i+n])
	return i + n
}

// bracket handles a [..] part: a currency or locale ([$€-407], [$-409]),
// a condition ([>100]), elapsed time ([h], [mm]); colours and the rest
// show nothing.
func (sec *fmtSection) bracket(b string) {
	lower := strings.ToLower(b)
	switch {
	case strings.HasPrefix(b, "$"):
		sym, _, _ := strings.Cut(b[1:], "-")
		if sym != "" {
			sec.lit(sym)
		}
	case b != "" && strings.ContainsRune("<>=", rune(b[0])):
		op := strings.TrimRight(b[:min(2, len(b))], "-+.0123456789 ")
		v, err := strconv.ParseFloat(strings.TrimSpace(b[len(op):]), 64)
		if err == nil {
			sec.cond, sec.condVal = op, v
		}
	case lower != "" && strings.Trim(lower, string(lower[0])) == "" && strings.ContainsRune("hms", rune(lower[0])):
		sec.date = true
		sec.add(tElapsed, lower[0], len(lower), "")
	}
}

// resolveMinutes turns an m or mm that follows an hour or precedes a
// second into minutes.
func (sec *fmtSection) resolveMinutes() {
	prev := -1
	for i, t := range sec.toks {
		if t.kind < tYear || t.kind > tElapsed || t.kind == tAMPM {
			continue
		}
		if t.kind == tMonth && t.n <= 2 && prev >= 0 && isHour(sec.toks[prev]) {
			sec.toks[i].kind = tMinute
		}
		if (t.kind == tSecond || t.kind == tElapsed && t.ch == 's') && prev >= 0 &&
			sec.toks[prev].kind == tMonth && sec.toks[prev].n <= 2 {
			sec.toks[prev].kind = tMinute
		}
		prev = i
	}
}

// isHour reports whether t is an hour or elapsed hours.
func isHour(t fmtTok) bool { return t.kind == tHour || t.kind == tElapsed && t.ch == 'h' }

// fracSeconds counts the 0s after a point that follows seconds: the
// digits of fractional seconds.
func (sec *fmtSection) fracSeconds() {
	for i, t := range sec.toks {
		if t.kind != tPoint || i == 0 {
			continue
		}
		n := 0
		for j := i + 1; j < len(sec.toks) && sec.toks[j].kind == tDigit && sec.toks[j].ch == '0'; j++ {
			n++
		}
		sec.fracSec = max(sec.fracSec, min(n, 3))
	}
}

// layout works out how a number section places digits: integer and
// decimal placeholders, grouping and scaling commas, percent signs, the
// exponent and a fraction bar.
func (sec *fmtSection) layout() {
	end, point, last, first := len(sec.toks), -1, -1, -1
	for i, t := range sec.toks {
		switch {
		case t.kind == tExp && sec.exp < 0:
			sec.exp, end = i, i
		case t.kind == tPoint && point < 0 && sec.exp < 0:
			point = i
		case t.kind == tSlash && sec.slash < 0 && sec.digits:
			sec.slash = i
		case t.kind == tPercent:
			sec.percent++
		}
	}
	for i, t := range sec.toks[:end] {
		if t.kind == tDigit {
			last = i
			if first < 0 {
				first = i
			}
			if point < 0 || i < point {
				sec.intN++
			} else {
				sec.decN++
			}
		}
	}
	for i := range sec.toks[:end] {
		if sec.toks[i].kind != tComma || first < 0 || i < first {
			continue
		}
		switch {
		case i > last:
			sec.scale++
			sec.toks[i].kind = tSkip
		case point < 0 || i < point:
			sec.group = true
			sec.toks[i].kind = tSkip
		}
	}
}

// IsDate reports whether f shows numbers as dates or times.
func (f *Format) IsDate() bool { return !f.plain && len(f.nums) > 0 && f.nums[0].date }
