package web

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/deerflow/deerflow/internal/lazyre"
)

// dropTags are elements that never hold a page's readable content.
var dropTags = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Nav: true,
	atom.Footer: true, atom.Aside: true, atom.Form: true, atom.Svg: true,
	atom.Iframe: true, atom.Template: true, atom.Object: true, atom.Embed: true,
	atom.Canvas: true, atom.Button: true, atom.Select: true, atom.Input: true,
	atom.Textarea: true, atom.Dialog: true, atom.Link: true, atom.Meta: true,
	atom.Math: true,
}

// dropRoles are ARIA roles of page furniture.
var dropRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"search": true, "dialog": true, "alertdialog": true, "menu": true,
	"menubar": true, "toolbar": true, "form": true,
}

// htmlToMarkdown extracts the readable content of an HTML page and
// converts it to Markdown, making links absolute against pageURL. It also
// returns the document's <title> ("" without one).
func htmlToMarkdown(ctx context.Context, page string, pageURL *url.URL) (md, title string, err error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", "", err
	}
	title = collapseSpace(textOf(findFirst(doc, atom.Title)))
	baseURL := pageURL
	if b := findFirst(doc, atom.Base); b != nil {
		if href := attr(b, "href"); href != "" {
			if u, err := pageURL.Parse(href); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
				baseURL = u
			}
		}
	}
	clean(doc, false)
	root := contentRoot(doc)

	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin()))
	out, err := conv.ConvertNode(root, converter.WithDomain(baseURL.String()), converter.WithContext(ctx))
	if err != nil {
		return "", "", err
	}
	md = strings.TrimSpace(string(out))
	if title != "" && !startsWithHeading(md, title) {
		md = strings.TrimSpace("# " + title + "\n\n" + md)
	}
	return md, title, nil
}

// firstHeading returns the text of md's first "# " heading outside code
// fences, or "".
func firstHeading(md string) string {
	fenced := false
	for line := range strings.Lines(md) {
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fenced = !fenced
		case !fenced && strings.HasPrefix(line, "# "):
			if h := collapseSpace(line[2:]); h != "" {
				return h
			}
		}
	}
	return ""
}

// clean removes page furniture below n. A <header> inside an <article>
// usually holds the article's title and stays.
func clean(n *html.Node, inArticle bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode:
			n.RemoveChild(c)
		case c.Type == html.ElementNode && furniture(c, inArticle):
			n.RemoveChild(c)
		default:
			clean(c, inArticle || c.DataAtom == atom.Article)
		}
		c = next
	}
}

func furniture(n *html.Node, inArticle bool) bool {
	if dropTags[n.DataAtom] || (n.DataAtom == atom.Header && !inArticle) {
		return true
	}
	if n.DataAtom == 0 && (n.Data == "svg" || n.Data == "math") {
		return true
	}
	if dropRoles[strings.ToLower(strings.TrimSpace(attr(n, "role")))] {
		return true
	}
	if hasAttr(n, "hidden") || strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// contentRoot picks the part of the cleaned document to convert: the
// <article> (all top-level ones, when there are several), else <main>,
// else the body. A candidate holding only a small part of the body's text
// (an article card in a sidebar) is passed over.
func contentRoot(doc *html.Node) *html.Node {
	body := findFirst(doc, atom.Body)
	if body == nil {
		body = doc
	}
	total := len(collapseSpace(textOf(body)))
	bigEnough := func(nodes ...*html.Node) bool {
		n := 0
		for _, c := range nodes {
			n += len(collapseSpace(textOf(c)))
		}
		return total == 0 || n*5 >= total
	}

	var articles []*html.Node
	walk(body, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Article {
			articles = append(articles, n)
			return false // nested articles belong to this one
		}
		return true
	})
	if len(articles) == 1 && bigEnough(articles[0]) {
		return articles[0]
	}
	if len(articles) > 1 && bigEnough(articles...) {
		box := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		for _, a := range articles {
			a.Parent.RemoveChild(a)
			box.AppendChild(a)
		}
		return box
	}
	var main *html.Node
	walk(body, func(n *html.Node) bool {
		if main != nil {
			return false
		}
		if n.Type == html.ElementNode && (n.DataAtom == atom.Main || strings.EqualFold(attr(n, "role"), "main")) {
			main = n
			return false
		}
		return true
	})
	if main != nil && bigEnough(main) {
		return main
	}
	return body
}

// startsWithHeading reports whether md's first line is a heading naming
// the page's title (or a part of it, as in "Post | Site").
func startsWithHeading(md, title string) bool {
	line, _, _ := strings.Cut(md, "\n")
	if !strings.HasPrefix(line, "#") {
		return false
	}
	h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
	t := strings.ToLower(title)
	return h != "" && (h == t || strings.Contains(t, h))
}

// walk visits n and its descendants in document order; visit returns
// false to skip a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

func findFirst(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walk(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if c.Type == html.ElementNode && c.DataAtom == a {
			found = c
			return false
		}
		return true
	})
	return found
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
		return true
	})
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// metaCharset finds the charset an HTML page declares in its first bytes.
var metaCharset = lazyre.New(`(?i)<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.\-]+)`)

// decodeText turns body into UTF-8. The charset comes from the
// Content-Type header, a byte order mark or (for HTML) a <meta> tag;
// UTF-8, UTF-16 and the Latin-1 family are decoded, anything else is read
// as UTF-8 with invalid bytes replaced.
func decodeText(body []byte, headerCharset string, isHTML bool) string {
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return strings.ToValidUTF8(string(body[3:]), "\uFFFD")
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return decodeUTF16(body[2:], false)
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return decodeUTF16(body[2:], true)
	}
	cs := strings.ToLower(strings.TrimSpace(headerCharset))
	if cs == "" && isHTML {
		head := body[:min(len(body), 2048)]
		if m := metaCharset().FindSubmatch(head); m != nil {
			cs = strings.ToLower(string(m[1]))
		}
	}
	switch cs {
	case "utf-16le", "utf-16":
		return decodeUTF16(body, false)
	case "utf-16be":
		return decodeUTF16(body, true)
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii",
		"windows-1252", "cp1252", "x-cp1252":
		return decodeWindows1252(body)
	case "":
		if !utf8.Valid(body) && isHTML {
			return decodeWindows1252(body) // what browsers assume
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return string(utf16.Decode(u))
}

// cp1252 maps the bytes 0x80..0x9F of windows-1252; the rest of the
// range is Latin-1, which equals the first 256 code points.
var cp1252 = [32]rune{
	'€', 0xFFFD, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0xFFFD, 'Ž', 0xFFFD,
	0xFFFD, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0xFFFD, 'ž', 'Ÿ',
}

func decodeWindows1252(b []byte) string {
	var s strings.Builder
	s.Grow(len(b))
	for _, c := range b {
		if c >= 0x80 && c < 0xA0 {
			s.WriteRune(cp1252[c-0x80])
		} else {
			s.WriteRune(rune(c))
		}
	}
	return s.String()
}
