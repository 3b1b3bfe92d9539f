package tgmd

import (
	"bufio"
	"bytes"
	"html"
	"strings"
	"unicode/utf8"

	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// writeLink writes a link with an already rendered label (HTML, or plain text
// in plain mode). Links with schemes Telegram can't open, and links inside
// links, become "label (url)".
func (r *mdRenderer) writeLink(b *strings.Builder, dest []byte, resolve bool, label string) {
	display := string(dest)
	if resolve {
		display = string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest))))
	}
	display = strings.TrimSpace(display)
	href := string(util.URLEscape(dest, resolve))
	labelText := label
	if !r.plain {
		labelText = mdVisibleText(label)
	}
	if strings.TrimSpace(labelText) == "" {
		label, labelText = display, display
		if !r.plain {
			label = mdEscape(display)
		}
	}
	if !r.plain && r.link == 0 && mdSafeHref(href) {
		b.WriteString(`<a href="` + mdAttrEscaper.Replace(href) + `">` + label + "</a>")
		return
	}
	b.WriteString(label)
	if display != "" && display != strings.TrimSpace(labelText) {
		r.text1(b, " ("+display+")")
	}
}

// mdSafeHref reports whether Telegram can use u as a link target.
func mdSafeHref(u string) bool {
	lower := strings.ToLower(u)
	for _, p := range []string{"https://", "http://", "tg://"} {
		if strings.HasPrefix(lower, p) {
			rest := u[len(p):]
			return rest != "" && !strings.ContainsAny(rest[:1], "/?#@:") && mdPrintableASCII(rest)
		}
	}
	if strings.HasPrefix(lower, "mailto:") {
		rest := u[len("mailto:"):]
		return len(rest) > 2 && strings.Contains(rest, "@") && mdPrintableASCII(rest)
	}
	return false
}

func mdPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// mdVisibleText strips tags from our own rendered HTML and decodes entities.
func mdVisibleText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		s = s[i+j+1:]
	}
	return html.UnescapeString(b.String())
}

// mdResolveText resolves backslash escapes and entity references in a
// Markdown text segment, returning plain (unescaped) text.
func mdResolveText(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 {
		return string(v)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	ghtml.DefaultWriter.Write(w, v)
	_ = w.Flush()
	s := html.UnescapeString(buf.String())
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
