package numfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file renders Excel serial dates (days since 1899-12-30, with
// Excel's 1900 leap-year bug, or since 1904-01-01) with date and time
// sections of a number format.

// maxSerial is the last day Excel shows a date for, 9999-12-31.
const maxSerial = 2958465

// dateParts is a serial date split into what the tokens show.
type dateParts struct {
	year, month, day int
	weekday          time.Weekday
	hour, min, sec   int
	frac             string // fractional seconds, as many digits as shown
	elapsed          int64  // whole seconds since the epoch, for [h] [m] [s]
}

// splitSerial splits serial v (not negative) into its parts, rounded to
// the fractional seconds shown; ok is false past 9999-12-31.
func splitSerial(v float64, date1904 bool, fracDigits int) (dateParts, bool) {
	var p dateParts
	if v > maxSerial+1 {
		return p, false
	}
	scale := math.Pow10(fracDigits)
	total := math.Round(v * 86400 * scale) // in fractions of seconds
	secs := int64(total / scale)
	if secs/86400 > maxSerial {
		return p, false
	}
	if fracDigits > 0 {
		f := int64(total) - secs*int64(scale)
		p.frac = strconv.FormatInt(f+int64(scale), 10)[1:]
	}
	days, sod := secs/86400, secs%86400
	p.elapsed, p.hour, p.min, p.sec = secs, int(sod/3600), int(sod/60%60), int(sod%60)
	switch {
	case date1904:
		t := time.Date(1904, 1, 1+int(days), 0, 0, 0, 0, time.UTC)
		p.year, p.month, p.day, p.weekday = t.Year(), int(t.Month()), t.Day(), t.Weekday()
	case days == 60: // Excel's 29 February 1900, which did not exist
		p.year, p.month, p.day = 1900, 2, 29
	case days == 0: // Excel shows serial 0 as 1900-01-00
		p.year, p.month, p.day = 1900, 1, 0
	default:
		base := 30
		if days < 60 {
			base = 31
		}
		t := time.Date(1899, 12, base+int(days), 0, 0, 0, 0, time.UTC)
		p.year, p.month, p.day = t.Year(), int(t.Month()), t.Day()
	}
	if !date1904 { // Excel's weekdays, which take 1900-01-01 for a Sunday
		p.weekday = time.Weekday((days + 6) % 7)
	}
	return p, true
}

// renderDate renders v (not negative) with a date section; ok is false
// when v is no date Excel shows.
func (sec *fmtSection) renderDate(v float64, date1904 bool) (string, bool) {
	p, ok := splitSerial(v, date1904, sec.fracSec)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(sec.toks); i++ {
		t := sec.toks[i]
		switch t.kind {
		case tPoint:
			n := 0
			for i+1+n < len(sec.toks) && sec.toks[i+1+n].kind == tDigit && sec.toks[i+1+n].ch == '0' {
				n++
			}
			if n > 0 && sec.fracSec > 0 {
				b.WriteString("." + (p.frac + "000")[:n])
				i += n
				continue
			}
			b.WriteByte('.')
		case tDigit:
			b.WriteByte(t.ch)
		default:
			b.WriteString(sec.datePart(t, &p))
		}
	}
	return b.String(), true
}

// monthNames and dayNames are the English names Excel shows.
var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// datePart is what one token of a date section shows.
func (sec *fmtSection) datePart(t fmtTok, p *dateParts) string {
	switch t.kind {
	case tYear:
		if t.n <= 2 {
			return pad2(p.year % 100)
		}
		return strconv.Itoa(p.year)
	case tMonth:
		name := monthNames[p.month-1]
		return pick(t.n, strconv.Itoa(p.month), pad2(p.month), name[:3], name, name[:1])
	case tDay:
		name := dayNames[p.weekday]
		return pick(t.n, strconv.Itoa(p.day), pad2(p.day), name[:3], name, name)
	case tHour:
		h := p.hour
		if sec.ampm {
			h = (h+11)%12 + 1
		}
		return pick(t.n, strconv.Itoa(h), pad2(h), pad2(h), pad2(h), pad2(h))
	case tMinute:
		return pick(t.n, strconv.Itoa(p.min), pad2(p.min), pad2(p.min), pad2(p.min), pad2(p.min))
	case tSecond:
		return pick(t.n, strconv.Itoa(p.sec), pad2(p.sec), pad2(p.sec), pad2(p.sec), pad2(p.sec))
	case tAMPM:
		return ampm(t, p.hour)
	case tElapsed:
		n := map[byte]int64{'h': p.elapsed / 3600, 'm': p.elapsed / 60, 's': p.elapsed}[t.ch]
		s := strconv.FormatInt(n, 10)
		for len(s) < t.n {
			s = "0" + s
		}
		return s
	}
	return tokText(t)
}

// pick returns the form for a run of n letters: 1, 2, 3, 4, 5 or more.
func pick(n int, forms ...string) string { return forms[min(max(n, 1), len(forms))-1] }

// pad2 renders n with at least two digits.
func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// ampm renders an AM/PM or A/P token in the letter case of the code.
func ampm(t fmtTok, hour int) string {
	pm := hour >= 12
	lower := t.ch >= 'a'
	s := "AM"
	if pm {
		s = "PM"
	}
	if t.s == "A/P" {
		s = s[:1]
	}
	if lower {
		s = strings.ToLower(s)
	}
	return s
}
