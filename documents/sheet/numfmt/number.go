package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// This file renders numbers with a parsed format: the section that
// applies, digits placed in the placeholders, General, scientific and
// fraction forms.

// number renders v as the format shows it; date1904 picks the 1904 date
// system for date sections.
func (f *Format) Number(v float64, date1904 bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "#NUM!"
	}
	if f.plain || len(f.nums) == 0 {
		return formatGeneral(v)
	}
	sec, abs := f.pick(v)
	if sec == nil {
		return formatGeneral(v)
	}
	if sec.date {
		if s, ok := sec.renderDate(v, date1904); ok && v >= 0 {
			return s
		}
		return formatGeneral(v)
	}
	if sec.text && !sec.digits && !sec.general {
		return formatGeneral(v) // "@" shows a number as General
	}
	s := sec.renderNumber(math.Abs(v))
	if v < 0 && !abs && (sec.digits || sec.general) {
		s = "-" + s
	}
	return s
}

// text renders the text s with the format's text section, if any.
func (f *Format) Text(s string) string {
	if f.text == nil {
		return s
	}
	var b strings.Builder
	for _, t := range f.text.toks {
		switch t.kind {
		case tLit:
			b.WriteString(t.s)
		case tText:
			b.WriteString(s)
		}
	}
	return b.String()
}

// pick chooses the section for v and whether v is shown without its sign
// (the negative section of a pos;neg format writes its own sign). A
// section may have a condition ([>100]); nil means none applies.
func (f *Format) pick(v float64) (*fmtSection, bool) {
	s := f.nums
	if s[0].cond != "" || len(s) > 1 && s[1].cond != "" {
		for i, sec := range s {
			if sec.cond == "" {
				return sec, i > 0 && v < 0
			}
			if sec.matches(v) {
				return sec, v < 0 && (i > 0 || strings.HasPrefix(sec.cond, "<") && sec.condVal <= 0)
			}
		}
		return nil, false
	}
	switch {
	case len(s) == 1 || v > 0:
		return s[0], false
	case v < 0:
		return s[1], true
	case len(s) == 3:
		return s[2], false
	}
	return s[0], false
}

// matches reports whether v meets the section's condition.
func (sec *fmtSection) matches(v float64) bool {
	c := sec.condVal
	switch sec.cond {
	case "<":
		return v < c
	case "<=":
		return v <= c
	case ">":
		return v > c
	case ">=":
		return v >= c
	case "=":
		return v == c
	case "<>":
		return v != c
	}
	return false
}

// renderNumber renders v (not negative) with a number section.
func (sec *fmtSection) renderNumber(v float64) string {
	v *= math.Pow(100, float64(sec.percent))
	v /= math.Pow(1000, float64(sec.scale))
	switch {
	case sec.general:
		var b strings.Builder
		for _, t := range sec.toks {
			if t.kind == tGeneral {
				b.WriteString(formatGeneral(v))
			} else {
				b.WriteString(tokText(t))
			}
		}
		return b.String()
	case sec.exp >= 0:
		return sec.scientific(v)
	case sec.slash >= 0:
		return sec.fraction(v)
	}
	ip, fp := decimalDigits(v, sec.decN)
	return sec.place(ip, fp, sec.toks, "")
}

// place writes the tokens with the integer digits ip filled right to
// left into the integer placeholders (the first one takes any extra
// digits) and the decimal digits fp left to right; expDigits is the
// exponent shown at the E token.
func (sec *fmtSection) place(ip, fp string, toks []fmtTok, expDigits string) string {
	var b strings.Builder
	fp = trimDecimals(fp, sec.decTokens())
	slot, dec, afterPoint, afterExp := 0, 0, false, false
	if sec.intN == 0 && ip != "" && sec.digits {
		b.WriteString(ip) // no integer placeholder: the digits go first
	}
	for _, t := range toks {
		switch t.kind {
		case tDigit:
			switch {
			case afterExp:
			case afterPoint:
				if dec < len(fp) {
					b.WriteByte(fp[dec])
				}
				dec++
			default:
				b.WriteString(sec.intSlot(ip, slot, t.ch))
				slot++
			}
		case tPoint:
			afterPoint = afterPoint || !afterExp
			b.WriteByte('.')
		case tExp:
			afterExp = true
			b.WriteString(expDigits)
		default:
			b.WriteString(tokText(t))
		}
	}
	return b.String()
}

// tokText is what a non-placeholder token shows in a number section.
func tokText(t fmtTok) string {
	switch t.kind {
	case tLit, tExp:
		return t.s
	case tComma, tPercent, tSlash:
		return string(t.ch)
	}
	return ""
}

// intSlot is what integer placeholder number slot (from the left) shows
// of the digits ip: its digit (the first slot all extra leading ones)
// with thousands separators, or for a missing digit 0, a space (?) or
// nothing (#).
func (sec *fmtSection) intSlot(ip string, slot int, ch byte) string {
	pos := sec.intN - 1 - slot // place value of this slot's digit
	n := len(ip)
	hi := pos
	if slot == 0 {
		hi = max(pos, n-1)
	}
	var b strings.Builder
	for q := hi; q >= pos; q-- {
		switch {
		case q < n:
			b.WriteByte(ip[n-1-q])
		case ch == '0':
			b.WriteByte('0')
		case ch == '?':
			b.WriteByte(' ')
			continue
		default:
			continue
		}
		if sec.group && q > 0 && q%3 == 0 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

// decTokens returns the placeholder characters of the decimals.
func (sec *fmtSection) decTokens() []byte {
	var out []byte
	point := false
	for i, t := range sec.toks {
		if sec.exp >= 0 && i >= sec.exp {
			break
		}
		if t.kind == tPoint {
			point = true
		} else if t.kind == tDigit && point {
			out = append(out, t.ch)
		}
	}
	return out
}

// trimDecimals drops the trailing zero decimals that # placeholders hide
// and turns those of ? placeholders into spaces.
func trimDecimals(fp string, ph []byte) string {
	b := []byte(fp)
	for i := len(b) - 1; i >= 0 && i < len(ph) && b[i] == '0' && ph[i] != '0'; i-- {
		if ph[i] == '?' {
			b[i] = ' '
		} else {
			b = b[:i]
		}
	}
	return string(b)
}

// decimalDigits rounds v (not negative) half away from zero to dec
// decimals, working from its 15 significant digits as Excel does, and
// returns the integer digits ("" for zero) and exactly dec decimals.
func decimalDigits(v float64, dec int) (string, string) {
	if v == 0 {
		return "", strings.Repeat("0", dec)
	}
	m := strconv.FormatFloat(v, 'e', 14, 64) // d.dddddddddddddde±xx
	digits := []byte(m[:1] + m[2:16])
	exp, _ := strconv.Atoi(m[17:])
	point := exp + 1
	keep := point + dec
	if keep < 0 {
		return "", strings.Repeat("0", dec)
	}
	if keep < len(digits) {
		up := digits[keep] >= '5'
		digits = digits[:keep]
		if up {
			i := len(digits) - 1
			for ; i >= 0 && digits[i] == '9'; i-- {
				digits[i] = '0'
			}
			if i >= 0 {
				digits[i]++
			} else {
				digits = append([]byte{'1'}, digits...)
				point++
			}
		}
	}
	for len(digits) < point+dec {
		digits = append(digits, '0')
	}
	var ip, fp string
	if point > 0 {
		ip, fp = string(digits[:point]), string(digits[point:])
	} else {
		fp = strings.Repeat("0", -point) + string(digits)
	}
	return strings.TrimLeft(ip, "0"), fp[:dec]
}

// scientific renders v in E notation: the mantissa has as many integer
// digits as the format's 0s, or with # placeholders ("##0.0E+0") the
// exponent is a multiple of their count (engineering notation).
func (sec *fmtSection) scientific(v float64) string {
	exp := 0
	if v != 0 {
		e10 := int(math.Floor(math.Log10(v)))
		if mant, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 14, 64)[:16], 64); mant >= 10 {
			e10++
		}
		exp = sec.mantissaExp(e10)
		ip, _ := decimalDigits(v/math.Pow10(exp), sec.decN)
		if len(ip) > max(sec.intN, 1) && !sec.engineering() {
			exp++
		}
	}
	ip, fp := decimalDigits(v/math.Pow10(exp), sec.decN)
	return sec.place(ip, fp, sec.toks, sec.exponent(exp))
}

// engineering reports whether the mantissa has # placeholders.
func (sec *fmtSection) engineering() bool {
	for _, t := range sec.toks[:sec.exp] {
		if t.kind == tDigit && t.ch == '#' {
			return sec.intN > 1
		}
	}
	return false
}

// mantissaExp is the exponent shown for a value of magnitude 10^e10.
func (sec *fmtSection) mantissaExp(e10 int) int {
	k := max(sec.intN, 1)
	if sec.engineering() {
		return int(math.Floor(float64(e10)/float64(k))) * k
	}
	return e10 - (k - 1)
}

// exponent renders the E token's sign and digits.
func (sec *fmtSection) exponent(exp int) string {
	t := sec.toks[sec.exp]
	width := 0
	for _, d := range sec.toks[sec.exp+1:] {
		if d.kind == tDigit && d.ch == '0' {
			width++
		}
	}
	sign := ""
	if exp < 0 {
		sign = "-"
	} else if t.s == "E+" {
		sign = "+"
	}
	n := strconv.Itoa(abs(exp))
	for len(n) < width {
		n = "0" + n
	}
	return "E" + sign + n
}

// abs is |n|.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// formatGeneral renders v as Excel's General format does in a standard
// column: at most 11 characters of digits and point, the decimals
// rounded to fit and trailing zeros dropped; values of 1e11 and more or
// below 1e-4 in E notation with up to 6 significant digits.
func formatGeneral(v float64) string {
	if v == 0 {
		return "0"
	}
	sign, a := "", v
	if v < 0 {
		sign, a = "-", -v
	}
	ip, _ := decimalDigits(a, 0)
	if len(ip) > 11 || a < 1e-4 {
		m := strconv.FormatFloat(a, 'e', 5, 64)
		mant, exp, _ := strings.Cut(m, "e")
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		return sign + mant + "E" + exp
	}
	dec := 10 - len(ip)
	if ip == "" {
		dec = 9
	}
	ip, fp := decimalDigits(a, max(dec, 0))
	fp = strings.TrimRight(fp, "0")
	if ip == "" {
		ip = "0"
	}
	if fp == "" {
		return sign + ip
	}
	return sign + ip + "." + fp
}

// fraction renders v with a fraction format ("# ?/?", "# ??/100",
// "?/8"): an optional whole part, then the numerator over a denominator
// that is fixed or the best one of at most as many digits as shown.
func (sec *fmtSection) fraction(v float64) string {
	toks := sec.toks
	ns := sec.slash
	for ns > 0 && toks[ns-1].kind == tDigit {
		ns--
	}
	whole := sec.intPart(ns)
	den, fixed, end := sec.denominator()
	w, frac := 0.0, v
	if whole.intN > 0 {
		w = math.Floor(v)
		frac = v - w
	}
	num, d := bestFraction(frac, den, fixed)
	if num == d && whole.intN > 0 {
		w, num = w+1, 0
	}
	ip := ""
	if w > 0 {
		ip = strconv.FormatFloat(w, 'f', 0, 64)
	}
	var b strings.Builder
	slot := 0
	for _, t := range toks[:ns] {
		if t.kind == tDigit {
			if num == 0 && w == 0 && slot == whole.intN-1 {
				t.ch = '0'
			}
			b.WriteString(whole.intSlot(ip, slot, t.ch))
			slot++
		} else if num != 0 {
			b.WriteString(tokText(t))
		}
	}
	if num == 0 && whole.intN > 0 {
		return b.String()
	}
	numSlots := &fmtSection{intN: sec.slash - ns}
	n := strconv.FormatInt(num, 10)
	for i, t := range toks[ns:sec.slash] {
		b.WriteString(numSlots.intSlot(n, i, t.ch))
	}
	b.WriteString("/" + strconv.FormatInt(d, 10))
	for _, t := range toks[end:] {
		b.WriteString(tokText(t))
	}
	return b.String()
}

// intPart is a section whose integer placeholders are the digit tokens
// before index end (the whole part of a fraction).
func (sec *fmtSection) intPart(end int) *fmtSection {
	p := &fmtSection{group: sec.group}
	for _, t := range sec.toks[:end] {
		if t.kind == tDigit {
			p.intN++
		}
	}
	return p
}

// denominator reads the tokens after the fraction bar: a fixed
// denominator ("/100") or the most digits one may have ("/??" gives
// 99); end is the index of the first token after it.
func (sec *fmtSection) denominator() (den int64, fixed bool, end int) {
	var s strings.Builder
	end = sec.slash + 1
	for ; end < len(sec.toks); end++ {
		t := sec.toks[end]
		if t.kind == tDigit {
			s.WriteByte(t.ch)
		} else if t.kind == tLit && strings.Trim(t.s, "0123456789") == "" {
			s.WriteString(t.s)
		} else {
			break
		}
	}
	ds := s.String()
	if strings.ContainsAny(ds, "123456789") {
		n, err := strconv.ParseInt(strings.NewReplacer("#", "0", "?", "0").Replace(ds), 10, 64)
		if err == nil && n > 0 {
			return n, true, end
		}
	}
	return int64(math.Pow10(min(max(len(ds), 1), 4))) - 1, false, end
}

// bestFraction returns num/den closest to v (not negative), with den the
// given one when fixed, else at most maxDen.
func bestFraction(v float64, maxDen int64, fixed bool) (int64, int64) {
	if fixed {
		return int64(math.Round(v * float64(maxDen))), maxDen
	}
	bestN, bestD, bestErr := int64(math.Round(v)), int64(1), math.Abs(v-math.Round(v))
	for d := int64(2); d <= maxDen && bestErr > 1e-12; d++ {
		n := int64(math.Round(v * float64(d)))
		if e := math.Abs(v - float64(n)/float64(d)); e < bestErr-1e-12 {
			bestN, bestD, bestErr = n, d, e
		}
	}
	return bestN, bestD
}
