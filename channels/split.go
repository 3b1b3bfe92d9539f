package channels

import (
	"strings"
	"unicode/utf8"
)

// SplitMarkdown cuts Markdown into parts of at most limit bytes, at line
// breaks, never inside a character (of valid UTF-8): only a line longer
// than a part is cut inside. A code fence open at a cut is closed there and
// reopened, with its language, in the next part, so no part but the last
// leaves a fence open. Whitespace at the cuts is dropped (a part neither
// starts nor ends with a line break) and no part is blank. Input that fits
// is returned trimmed, as one part. A limit below 16 is treated as 16.
//
// A fence line has at most limit/8 bytes and, trimmed, starts with three
// or more backticks; it opens a fence unless its info string holds a
// backtick, and a line of at least as many backticks and nothing else
// closes it. Longer lines are text, so a reopened fence always leaves most
// of a part for the text.
func SplitMarkdown(md string, limit int) []string {
	limit = max(limit, 16)
	md = strings.TrimSpace(md)
	if md == "" {
		return nil
	}
	if len(md) <= limit {
		return []string{md}
	}
	s := mdSplitter{limit: limit}
	for _, line := range strings.SplitAfter(md, "\n") {
		s.add(line)
	}
	if text := s.cur.String(); strings.TrimSpace(text[s.head:]) != "" {
		s.parts = append(s.parts, text)
	}
	return s.parts
}

type mdSplitter struct {
	limit int
	parts []string
	cur   strings.Builder // the part being filled
	head  int             // bytes of cur taken by a reopened fence
	fence mdFence         // the fence open at the end of cur
}

// add appends one line (with its line break), cutting first where it does
// not fit.
func (s *mdSplitter) add(line string) {
	for {
		next := s.fence.after(line, s.limit)
		if s.cur.Len()+len(line)+next.tail() <= s.limit {
			break
		}
		if len(s.fence.head())+len(line)+next.tail() <= s.limit {
			s.flush()
			break
		}
		// A line longer than a part (never a fence line): cut it on a rune
		// boundary.
		room := s.limit - s.cur.Len() - s.fence.tail()
		if room < s.limit/4 {
			s.flush()
			room = s.limit - s.cur.Len() - s.fence.tail()
		}
		n := runeCut(line, room)
		s.cur.WriteString(line[:n])
		line = line[n:]
		s.flush()
	}
	if s.cur.Len() == s.head && strings.TrimSpace(line) == "" {
		return // a part does not start with blank lines
	}
	s.cur.WriteString(line)
	s.fence = s.fence.after(line, s.limit)
}

// runeCut moves a cut at n back to the start of the character it would
// split, if any. Invalid bytes are single characters: in a run of them
// any cut is fine, but a valid character among them stays whole.
func runeCut(s string, n int) int {
	for j := n - 1; j >= 0 && j > n-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if _, size := utf8.DecodeRuneInString(s[j:]); j+size > n {
				return j
			}
			return n
		}
	}
	return n
}

// flush ends the current part, closing an open fence, and starts the next
// one, reopening it.
func (s *mdSplitter) flush() {
	if text := s.cur.String(); strings.TrimSpace(text[s.head:]) != "" {
		text = strings.TrimRight(text, "\n")
		if s.fence.marker != "" {
			text += "\n" + s.fence.marker
		}
		s.parts = append(s.parts, text)
	}
	s.cur.Reset()
	s.cur.WriteString(s.fence.head())
	s.head = s.cur.Len()
}

// mdFence is an open code fence; the zero value is none.
type mdFence struct {
	marker string // the backticks
	lang   string
}

// head is the line that reopens the fence.
func (f mdFence) head() string {
	if f.marker == "" {
		return ""
	}
	return f.marker + f.lang + "\n"
}

// tail is the length of what closes the fence ("\n" and the backticks).
func (f mdFence) tail() int {
	if f.marker == "" {
		return 0
	}
	return 1 + len(f.marker)
}

// after returns the fence open after line.
func (f mdFence) after(line string, limit int) mdFence {
	if len(line) > limit/8 {
		return f
	}
	t := strings.TrimSpace(line)
	n := len(t) - len(strings.TrimLeft(t, "`"))
	switch {
	case n < 3:
		return f
	case f.marker != "":
		if n == len(t) && n >= len(f.marker) {
			return mdFence{}
		}
		return f
	case strings.Contains(t[n:], "`"):
		return f // inline code, not a fence
	}
	lang := ""
	if fs := strings.Fields(t[n:]); len(fs) > 0 && len(fs[0]) <= 32 {
		lang = fs[0]
	}
	return mdFence{marker: t[:n], lang: lang}
}
