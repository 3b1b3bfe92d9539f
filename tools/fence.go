package tools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes text from users, tools, files or the web inert inside a
// tagged or fenced prompt section (<memory>, <uploaded_files>, a summary,
// a skill list), so that it can never close the section it is in or open
// one of its own. Ordinary text is left as it is; what changes:
//
//   - A "<" that would start a tag ("</memory>", "<system>", "<!--",
//     "<?xml", "<|im_start|>", also with spaces after the bracket, so
//     "a < b" too) becomes "&lt;", and so do the look-alikes of "<" ("＜",
//     "﹤", "‹", "〈", "⟨", "《") in the same place. "x <= 3", "1 < 2" and
//     "<3" are unchanged. Other
//     entities are left alone: "&lt;/memory&gt;" is inert text already,
//     and it reads the same as what Escape makes of "</memory>", so
//     Escape(Escape(s)) == Escape(s).
//   - A run of three or more backticks or tildes (a Markdown code fence)
//     becomes the same number of full-width ones ("｀｀｀", "～～～"): the
//     model still reads a fence-like run, Markdown does not.
//   - Control characters other than newline and tab are dropped, and so
//     are invisible formatting characters (bidi overrides and isolates,
//     zero-width characters, the byte order mark), which can hide a tag
//     from a reviewer or split one for a filter. "\r\n" and the Unicode
//     line and paragraph separators become "\n"; invalid UTF-8 becomes
//     U+FFFD.
func Escape(s string) string { return escape(s, true) }

// EscapeTags is Escape without the fence rule, for text that is meant to
// be Markdown with code blocks (a skill's instructions) inside a tagged
// section that no fence can end.
func EscapeTags(s string) string { return escape(s, false) }

func escape(s string, fences bool) string {
	if plain(s) {
		return s
	}
	rs := []rune(clean(s))
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case isOpenBracket(r) && opensTag(rs[i+1:]):
			b.WriteString("&lt;")
		case fences && (r == '`' || r == '~'):
			n := 1
			for i+n < len(rs) && rs[i+n] == r {
				n++
			}
			if n >= 3 {
				r = fullWidth(r)
			}
			for range n {
				b.WriteRune(r)
			}
			i += n - 1
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EscapeLine is Escape for text that must stay on one line of a section
// (a list item, a "Name: value" line): line breaks and tabs become spaces,
// so the text cannot start a line that looks like the section's own.
func EscapeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, Escape(s))
}

// plain reports whether s is ASCII with nothing for escape to change, the
// common case, which then costs no allocation.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x7f, c == '<', c == '`', c == '~', c < 0x20 && c != '\n' && c != '\t':
			return false
		}
	}
	return true
}

// clean drops control and invisible formatting characters (keeping
// newlines and tabs) and makes every line break a "\n".
func clean(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return '\n'
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// isOpenBracket reports whether r is "<" or a character a model may read
// as one.
func isOpenBracket(r rune) bool {
	switch r {
	case '<', '\uFF1C', '\uFE64', '\u2039', '\u2329', '\u3008', '\u27E8', '\u300A':
		return true
	}
	return false
}

// opensTag reports whether the text after a bracket would make it a tag:
// after any spaces, a letter, "_", "/", "!", "?", "|" or a slash
// look-alike, or nothing at all.
func opensTag(rest []rune) bool {
	for _, r := range rest {
		if unicode.IsSpace(r) {
			continue
		}
		switch r {
		case '/', '!', '?', '|', '_', '\\', '\uFF0F', '\u2044', '\u2215':
			return true
		}
		return unicode.IsLetter(r)
	}
	return true
}

func fullWidth(r rune) rune {
	if r == '`' {
		return '｀'
	}
	return '～'
}
