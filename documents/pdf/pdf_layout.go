package pdf

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The built-in reader's layout: runs of text become lines (same baseline),
// lines become segments (runs closer than about an em), and a page whose
// lines split at one vertical gutter into two wide halves is read as two
// columns, left then right. Blank lines mark larger vertical gaps, so
// paragraphs stay apart.

// pdfLine is runs on one baseline, sorted left to right.
type pdfLine struct {
	runs []pdfRun
	y    float64
	size float64
	segs []pdfSegment
}

// pdfSegment is a stretch of a line without a gap wider than about an em.
type pdfSegment struct {
	text   string
	x0, x1 float64
}

// pdfOutLine is a line of output text at its baseline.
type pdfOutLine struct {
	text    string
	y, size float64
}

// pdfLayoutPage turns a page's runs into plain text in reading order.
func pdfLayoutPage(runs []pdfRun) string {
	lines := pdfGroupLines(runs)
	if len(lines) == 0 {
		return ""
	}
	gutter, ok := pdfFindGutter(lines)
	var out []pdfOutLine
	var left, right []pdfOutLine
	flush := func() {
		out = append(append(out, left...), right...)
		left, right = nil, nil
	}
	for _, l := range lines {
		if !ok || pdfCrosses(l, gutter) {
			flush()
			out = append(out, pdfOutLine{pdfJoinSegs(l.segs), l.y, l.size})
			continue
		}
		var ls, rs []pdfSegment
		for _, s := range l.segs {
			if s.x1 <= gutter {
				ls = append(ls, s)
			} else {
				rs = append(rs, s)
			}
		}
		if len(ls) > 0 {
			left = append(left, pdfOutLine{pdfJoinSegs(ls), l.y, l.size})
		}
		if len(rs) > 0 {
			right = append(right, pdfOutLine{pdfJoinSegs(rs), l.y, l.size})
		}
	}
	flush()
	return pdfJoinLines(out)
}

// pdfGroupLines sorts runs top to bottom and gathers those whose baselines are
// within 0.4 of the font size into lines, each sorted left to right and
// cut into segments. Runs of only spaces are dropped: positions say where
// the gaps are.
func pdfGroupLines(runs []pdfRun) []*pdfLine {
	kept := runs[:0:0]
	for _, r := range runs {
		if strings.TrimSpace(r.s) != "" {
			kept = append(kept, r)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].y > kept[j].y })
	var lines []*pdfLine
	var cur *pdfLine
	for _, r := range kept {
		if cur == nil || cur.y-r.y > 0.4*min(cur.size, r.size) {
			cur = &pdfLine{y: r.y, size: r.size}
			lines = append(lines, cur)
		}
		cur.runs = append(cur.runs, r)
		cur.size = max(cur.size, r.size)
	}
	for _, l := range lines {
		sort.SliceStable(l.runs, func(i, j int) bool { return l.runs[i].x < l.runs[j].x })
		l.segs = pdfSegments(l.runs, l.size)
	}
	return lines
}

// pdfSegments joins a line's runs, with a space where the gap between two is
// wider than 0.15 em (text positioned word by word) and a new pdfSegment
// where it is wider than an em.
func pdfSegments(runs []pdfRun, size float64) []pdfSegment {
	var segs []pdfSegment
	var b strings.Builder
	var cur pdfSegment
	for i, r := range runs {
		gap := r.x - cur.x1
		if i > 0 && gap > size {
			cur.text = b.String()
			segs = append(segs, cur)
			b.Reset()
		}
		if b.Len() == 0 {
			cur = pdfSegment{x0: r.x}
		} else if gap > 0.15*size && !pdfEndsSpace(b.String()) && !pdfStartsSpace(r.s) {
			b.WriteByte(' ')
		}
		b.WriteString(r.s)
		cur.x1 = max(cur.x1, r.x1)
	}
	cur.text = b.String()
	return append(segs, cur)
}

// pdfFindGutter looks for a vertical line, in the middle 40% of the text's
// width, that most lines don't cross, with at least three lines of text on
// each side and each side's text at least 30% of the width wide: two
// columns. A table's narrow cells don't qualify.
func pdfFindGutter(lines []*pdfLine) (float64, bool) {
	lo, hi := lines[0].segs[0].x0, lines[0].segs[0].x1
	for _, l := range lines {
		for _, s := range l.segs {
			lo, hi = min(lo, s.x0), max(hi, s.x1)
		}
	}
	w := hi - lo
	if w <= 0 || len(lines) < 6 {
		return 0, false
	}
	best, bestN := 0.0, len(lines)+1
	for x := lo + 0.3*w; x <= hi-0.3*w; x++ {
		n := 0
		for _, l := range lines {
			if pdfCrosses(l, x) {
				n++
			}
		}
		if n < bestN {
			best, bestN = x, n
		}
	}
	nl, nr, lx, rx := 0, 0, lo, hi
	for _, l := range lines {
		if pdfCrosses(l, best) {
			continue
		}
		for _, s := range l.segs {
			if s.x1 <= best {
				nl, lx = nl+1, max(lx, s.x1)
			} else {
				nr, rx = nr+1, min(rx, s.x0)
			}
		}
	}
	ok := nl >= 3 && nr >= 3 && lx-lo >= 0.3*w && hi-rx >= 0.3*w
	return best, ok
}

// pdfCrosses reports whether a pdfSegment of l spans x.
func pdfCrosses(l *pdfLine, x float64) bool {
	for _, s := range l.segs {
		if s.x0 < x && x < s.x1 {
			return true
		}
	}
	return false
}

// pdfJoinSegs writes a line's segments apart by three spaces, which keeps a
// table row's cells visibly separate.
func pdfJoinSegs(segs []pdfSegment) string {
	parts := make([]string, len(segs))
	for i, s := range segs {
		parts[i] = strings.TrimSpace(s.text)
	}
	return strings.Join(parts, "   ")
}

// pdfJoinLines writes lines one per line, with a blank line where the gap to
// the previous baseline is over 1.6 times the font size (a new paragraph)
// or the text goes back up the page (the next column).
func pdfJoinLines(lines []pdfOutLine) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			gap := lines[i-1].y - l.y
			if gap > 1.6*max(l.size, lines[i-1].size) || gap < 0 {
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		b.WriteString(l.text)
	}
	return b.String()
}

func pdfEndsSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}

func pdfStartsSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}
