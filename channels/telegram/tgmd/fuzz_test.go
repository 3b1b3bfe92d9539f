package tgmd

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxText is Telegram's limit for one message, in UTF-16 units.
const maxText = 4096

// The fuzz targets here add to FuzzRenderHTML (markup validity),
// FuzzSplitHTML and FuzzSplitText (chunk limits, no visible text lost) in
// markdown_test.go and split_test.go.

// FuzzRenderWords renders Markdown built from fuzzed words and fuzzed
// structure (emphasis, links, images, code, lists, quotes, tables, HTML,
// headings, fences) and checks what a reader sees: the HTML is valid
// Telegram HTML, and its visible text holds every word in order, also once
// split into chunks, whose plain-text fallback fits the limit too.
func FuzzRenderWords(f *testing.F) {
	f.Add("hello world again", []byte{0, 1, 2, 3}, uint16(4096))
	f.Add("Title intro point one two three code", []byte{1, 0, 2, 3, 6, 5, 9}, uint16(10))
	f.Add("שלום עולם مرحبا 中文 粗体 emoji", []byte{5, 13, 1, 7, 6, 2}, uint16(7))
	f.Add("pre script div textarea a b c", []byte{12, 8, 8, 8, 14, 15}, uint16(3))
	f.Add("x y z w v u t s r q p o n m", []byte{9, 9, 10, 11, 4, 3, 2, 1}, uint16(1))
	f.Add(strings.Repeat("long ", 300), []byte{6, 0, 2, 5, 9}, uint16(4096))
	f.Fuzz(func(t *testing.T, text string, shape []byte, limit uint16) {
		words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(words) == 0 {
			return
		}
		words = words[:min(len(words), 400)]
		md := wordsMarkdown(words, shape)
		out := RenderHTML(md)
		mdCheckRendered(t, md, out)
		if at, ok := wordsInOrder(splitVisibleText(out), words); !ok {
			t.Fatalf("word %q lost or out of order\nmarkdown %q\nrendered %q", words[at], md, out)
		}
		lim := 2 + int(limit)%maxText
		chunks := SplitHTML(out, lim)
		splitCheckChunks(t, out, chunks, lim)
		var seen strings.Builder
		for i, c := range chunks {
			plain := PlainText(c)
			if n := splitUTF16Len(plain); n > lim {
				t.Fatalf("chunk %d: plain-text fallback has %d units > %d", i, n, lim)
			}
			seen.WriteString(plain)
		}
		if at, ok := wordsInOrder(seen.String(), words); !ok {
			t.Fatalf("word %q lost or out of order across %d chunks of %d\nmarkdown %q", words[at], len(chunks), lim, md)
		}
	})
}

// wordsInOrder reports whether the words occur in s in order (each after
// the previous one), or the index of the first that does not.
func wordsInOrder(s string, words []string) (int, bool) {
	for i, w := range words {
		j := strings.Index(s, w)
		if j < 0 {
			return i, false
		}
		s = s[j+len(w):]
	}
	return 0, true
}

// wordsMarkdown builds Markdown from words (letters and digits only, so
// they cannot form markup), shaped by the bytes of shape. Link targets,
// fence info strings and such hold no words: those are not visible text.
func wordsMarkdown(words []string, shape []byte) string {
	next := func() byte {
		if len(shape) == 0 {
			return 0
		}
		b := shape[0]
		shape = shape[1:]
		return b
	}
	inline := func(w string) string {
		switch next() % 16 {
		case 1:
			return "**" + w + "**"
		case 2:
			return "*" + w + "*"
		case 3:
			return "_" + w + "_"
		case 4:
			return "~~" + w + "~~"
		case 5:
			return "`" + w + "`"
		case 6:
			return "[" + w + "](https://example.com/p?a=1&b=2)"
		case 7:
			return "![" + w + "](https://example.com/i.png)"
		case 8:
			return "<" + w + ">"
		case 9:
			return `\*` + w + `\*`
		case 10:
			return "***" + w + "***"
		case 11:
			return "[" + w + "](javascript:alert(1))"
		case 12:
			return "&amp;" + w + " &lt;"
		case 13:
			return "<https://example.com/x> " + w
		case 14:
			return "[**" + w + "** `c`](https://example.com)"
		case 15:
			return "[" + w + "]"
		}
		return w
	}
	seps := []string{" ", " ", "\n", " \u200B", " \u202E", "  \n", "\u00A0", "\t"}
	var b strings.Builder
	for len(words) > 0 {
		n := 1 + int(next())%6
		n = min(n, len(words))
		ws := words[:n]
		words = words[n:]
		line := func(sep string) string {
			parts := make([]string, len(ws))
			for i, w := range ws {
				parts[i] = inline(w)
			}
			return strings.Join(parts, sep)
		}
		table := false
		switch next() % 16 {
		case 1:
			b.WriteString("# " + line(" "))
		case 2:
			for i, w := range ws {
				b.WriteString(strings.Repeat("  ", i%3) + "- " + inline(w) + "\n")
			}
		case 3:
			for i, w := range ws {
				b.WriteString(strconv.Itoa(i+1) + ". " + inline(w) + "\n")
			}
		case 4:
			for i, w := range ws {
				b.WriteString("- [" + map[bool]string{true: "x", false: " "}[i%2 == 0] + "] " + inline(w) + "\n")
			}
		case 5:
			b.WriteString("> " + line("\n> "))
		case 6:
			b.WriteString("```go\n" + strings.Join(ws, "\n") + "\n```")
		case 7:
			b.WriteString("```\n" + line(" ")) // unclosed: runs to the end
		case 8:
			b.WriteString("    " + strings.Join(ws, " "))
		case 9:
			b.WriteString("| " + strings.Join(ws, " | ") + " |\n|" + strings.Repeat("---|", len(ws)) + "\n| " + inline(ws[0]) + " |")
			table = true
		case 10:
			b.WriteString(line(" ") + "\n===")
		case 11:
			b.WriteString(line(" ") + "\n\n---")
		case 12:
			b.WriteString("<div class=\"x\">\n" + line(" ") + "\n</div>")
		case 13:
			b.WriteString("> - " + line("\n> - "))
		case 14:
			b.WriteString(">> " + line(" "))
		default:
			b.WriteString(line(seps[int(next())%len(seps)]))
		}
		// A table runs to a blank line: a next line would be its row, and
		// GFM drops a row's cells beyond the header's (words lost by the
		// spec, not by the renderer).
		if next()%4 == 0 && !table {
			b.WriteString("\n")
		} else {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}
