// Package tgmd turns an LLM's Markdown into Telegram's HTML subset
// (RenderHTML) and cuts that HTML into messages within Telegram's length
// limit without breaking a tag or an entity (SplitHTML, SplitText).
//
// It is pure text processing: it imports no package of ours.
package tgmd

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser parses CommonMark plus the GFM pieces LLMs use (strikethrough,
// tables, task lists). Linkify is left out on purpose: Telegram clients
// detect bare URLs themselves.
var mdParser parser.Parser = goldmark.New(
	goldmark.WithExtensions(extension.Strikethrough, extension.Table),
	goldmark.WithParserOptions(parser.WithInlineParsers(
		util.Prioritized(strictTaskBox{extension.NewTaskCheckBoxParser()}, 0),
	)),
).Parser()

// strictTaskBox is goldmark's task-list box with GFM's rules that the box
// is followed by a space and then the item's text: "- [X](https://…)" is a
// link whose text is X, and "- [x]" alone is text (goldmark takes both as
// boxes).
type strictTaskBox struct{ parser.InlineParser }

func (p strictTaskBox) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) < 5 || line[0] != '[' || line[2] != ']' || line[3] != ' ' && line[3] != '\t' ||
		len(bytes.TrimSpace(line[4:])) == 0 {
		return nil // "[x]" alone is text, as in GFM
	}
	return p.InlineParser.Parse(parent, block, pc)
}

func (p strictTaskBox) CloseBlock(parent ast.Node, pc parser.Context) {
	if c, ok := p.InlineParser.(interface {
		CloseBlock(ast.Node, parser.Context)
	}); ok {
		c.CloseBlock(parent, pc)
	}
}

// RenderHTML converts Markdown (as written by an LLM) into the HTML subset
// accepted by the Telegram Bot API with parse_mode=HTML: b, i, s, code, pre,
// pre>code.language-x, a href and blockquote. All text is escaped; raw HTML in
// the input is shown as text. Constructs Telegram cannot show (headings,
// lists, tables, images, rules) are turned into plain-text equivalents.
//
// The result has balanced, properly nested tags, no trailing whitespace, and
// is "" for blank input. RenderHTML never panics.
func RenderHTML(markdown string) (out string) {
	src := mdSanitize(markdown)
	defer func() {
		if recover() != nil {
			out = mdTrimRight(mdEscape(strings.TrimSpace(src)))
		}
	}()
	b := []byte(src)
	doc := mdParser.Parse(text.NewReader(b))
	r := &mdRenderer{src: b}
	return strings.TrimLeft(mdTrimRight(r.blocks(doc)), " \t\n")
}

// mdSanitize makes the input valid UTF-8 without NULs and with \n line ends.
func mdSanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.ContainsRune(s, 0) {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if strings.ContainsRune(s, '\r') {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

func mdTrimRight(s string) string { return strings.TrimRight(s, " \t\n\r\f\v") }

var mdEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
var mdAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// mdEscape escapes text for Telegram HTML (&, <, >).
func mdEscape(s string) string { return mdEscaper.Replace(s) }

type mdRenderer struct {
	src []byte

	indent    string // written after every line break inside inline content
	listDepth int
	quote     int // blockquote nesting (Telegram can't nest quotes)

	plain  bool // plain-text mode (table cells, image alt): no tags, no escaping
	bold   int
	italic int
	strike int
	link   int
}

// blocks renders the block children of n separated by blank lines.
func (r *mdRenderer) blocks(n ast.Node) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := r.block(c); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (r *mdRenderer) block(n ast.Node) string {
	var s string
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		s = r.inlineString(n)
	case *ast.Heading:
		s = r.heading(n)
	case *ast.ThematicBreak:
		s = "———"
	case *ast.FencedCodeBlock:
		s = r.codeBlock(n, string(n.Language(r.src)))
	case *ast.CodeBlock:
		s = r.codeBlock(n, "")
	case *ast.Blockquote:
		s = r.blockquote(n)
	case *ast.List:
		s = r.list(n)
	case *ast.LinkReferenceDefinition:
		// consumed by the parser; not shown
	case *ast.HTMLBlock:
		var b strings.Builder
		r.rawLines(&b, n.Lines())
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		s = r.textLines(strings.TrimRight(b.String(), "\n"))
	case *east.Table:
		s = r.table(n)
	default:
		s = r.otherBlock(n)
	}
	return mdTrimRight(s)
}

// heading is shown bold: Telegram has no headings.
func (r *mdRenderer) heading(n *ast.Heading) string {
	r.bold++
	inner := r.inlineString(n)
	r.bold--
	if strings.TrimSpace(inner) == "" {
		return ""
	}
	return "<b>" + inner + "</b>"
}

// blockquote renders a quote; a quote inside a quote is flattened into the
// outer one, as Telegram can't nest them.
func (r *mdRenderer) blockquote(n *ast.Blockquote) string {
	r.quote++
	inner := r.blocks(n)
	r.quote--
	switch {
	case mdTrimRight(inner) == "":
		return ""
	case r.quote > 0:
		return inner
	}
	return "<blockquote>" + mdTrimRight(inner) + "</blockquote>"
}

// otherBlock renders a node of a kind block does not know by its shape:
// inline content, child blocks, or raw lines.
func (r *mdRenderer) otherBlock(n ast.Node) string {
	switch {
	case n.Type() == ast.TypeInline:
		var b strings.Builder
		r.inline(&b, n)
		return b.String()
	case n.HasChildren():
		if n.FirstChild().Type() == ast.TypeBlock {
			return r.blocks(n)
		}
		return r.inlineString(n)
	case n.Lines() != nil && n.Lines().Len() > 0:
		var b strings.Builder
		r.rawLines(&b, n.Lines())
		return r.textLines(strings.TrimRight(b.String(), "\n"))
	}
	return ""
}

func (r *mdRenderer) rawLines(b *strings.Builder, lines *text.Segments) {
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
}

// textLines escapes s and indents its continuation lines.
func (r *mdRenderer) textLines(s string) string {
	var b strings.Builder
	r.text(&b, s)
	return b.String()
}

func (r *mdRenderer) codeBlock(n ast.Node, lang string) string {
	var b strings.Builder
	r.rawLines(&b, n.Lines())
	code := strings.TrimRight(b.String(), " \t\n")
	if strings.TrimSpace(code) == "" {
		return ""
	}
	lang = mdSanitizeLang(lang)
	if lang == "" {
		return "<pre>" + mdEscape(code) + "</pre>"
	}
	return `<pre><code class="language-` + lang + `">` + mdEscape(code) + "</code></pre>"
}

// mdSanitizeLang keeps only [A-Za-z0-9_+-] of a fence info word.
func mdSanitizeLang(lang string) string {
	var b strings.Builder
	for i := 0; i < len(lang) && b.Len() < 32; i++ {
		c := lang[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (r *mdRenderer) list(l *ast.List) string {
	// Indentation is capped so that absurdly deep nesting stays linear.
	prefix := strings.Repeat("  ", min(r.listDepth, 10))
	num := l.Start
	delim := "."
	if l.Marker == ')' {
		delim = ")"
	}
	var lines []string
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + delim + " "
			num++
		} else if mdHasCheckBox(item) {
			marker = "" // the check box is the bullet
		}
		saved := r.indent
		r.indent = prefix + "  "
		r.listDepth++
		body := r.listItem(item)
		r.listDepth--
		r.indent = saved
		if strings.HasPrefix(body, "\n") {
			marker = strings.TrimRight(marker, " ")
		}
		lines = append(lines, mdTrimRight(prefix+marker+body))
	}
	return strings.Join(lines, "\n")
}

func mdHasCheckBox(item ast.Node) bool {
	fc := item.FirstChild()
	if fc == nil {
		return false
	}
	_, ok := fc.FirstChild().(*east.TaskCheckBox)
	return ok
}

func (r *mdRenderer) listItem(item ast.Node) string {
	var b strings.Builder
	first := true
	for c := item.FirstChild(); c != nil; c = c.NextSibling() {
		s := r.block(c)
		if s == "" {
			continue
		}
		switch c.(type) {
		case *ast.List:
			b.WriteString("\n")
		case *ast.Paragraph, *ast.TextBlock, *ast.Heading, *ast.ThematicBreak, *ast.HTMLBlock:
			if !first {
				b.WriteString("\n" + r.indent)
			}
		default:
			if !first {
				b.WriteString("\n")
			}
		}
		b.WriteString(s)
		first = false
	}
	return b.String()
}

// inlineString renders the inline children of n.
func (r *mdRenderer) inlineString(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&b, c)
	}
	return b.String()
}

// plainString renders the inline children of n as unescaped plain text.
func (r *mdRenderer) plainString(n ast.Node) string {
	saved := r.plain
	r.plain = true
	s := r.inlineString(n)
	r.plain = saved
	return s
}

// text writes plain text s, escaping it (unless in plain mode) and turning
// line breaks into newline+indent (or a space in plain mode).
func (r *mdRenderer) text(b *strings.Builder, s string) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		r.text1(b, s[:i])
		r.newline(b)
		s = s[i+1:]
	}
	r.text1(b, s)
}

func (r *mdRenderer) text1(b *strings.Builder, s string) {
	if r.plain {
		b.WriteString(s)
	} else {
		mdEscaper.WriteString(b, s)
	}
}

func (r *mdRenderer) newline(b *strings.Builder) {
	if r.plain {
		b.WriteByte(' ')
		return
	}
	b.WriteByte('\n')
	b.WriteString(r.indent)
}

func (r *mdRenderer) wrap(b *strings.Builder, name string, depth *int, n ast.Node) {
	if r.plain || *depth > 0 {
		b.WriteString(r.inlineString(n))
		return
	}
	*depth++
	inner := r.inlineString(n)
	*depth--
	b.WriteString("<" + name + ">" + inner + "</" + name + ">")
}

func (r *mdRenderer) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(r.src)
		if n.IsRaw() {
			r.text(b, string(v))
		} else {
			r.text(b, mdResolveText(v))
		}
		if n.HardLineBreak() || n.SoftLineBreak() {
			r.newline(b)
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			r.text(b, string(n.Value))
		} else {
			r.text(b, mdResolveText(n.Value))
		}
	case *ast.CodeSpan:
		r.codeSpan(b, n)
	case *ast.Emphasis:
		if n.Level >= 2 {
			r.wrap(b, "b", &r.bold, n)
		} else {
			r.wrap(b, "i", &r.italic, n)
		}
	case *east.Strikethrough:
		r.wrap(b, "s", &r.strike, n)
	case *ast.Link:
		r.linkNode(b, n)
	case *ast.AutoLink:
		r.autoLink(b, n)
	case *ast.Image:
		r.image(b, n)
	case *ast.RawHTML:
		var rb strings.Builder
		r.rawLines(&rb, n.Segments)
		r.text(b, rb.String())
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("☑ ")
		} else {
			b.WriteString("☐ ")
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			r.inline(b, c)
		}
	}
}

// codeSpan writes inline code on one line; inside a link or in plain mode
// it is just text.
func (r *mdRenderer) codeSpan(b *strings.Builder, n *ast.CodeSpan) {
	var cb strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			cb.Write(t.Segment.Value(r.src))
		case *ast.String:
			cb.Write(t.Value)
		}
	}
	code := strings.ReplaceAll(cb.String(), "\n", " ")
	if r.plain || r.link > 0 {
		r.text1(b, code)
	} else {
		b.WriteString("<code>" + mdEscape(code) + "</code>")
	}
}

func (r *mdRenderer) linkNode(b *strings.Builder, n *ast.Link) {
	r.link++
	var label string
	if r.plain {
		label = r.plainString(n)
	} else {
		label = r.inlineString(n)
	}
	r.link--
	r.writeLink(b, n.Destination, true, label)
}

func (r *mdRenderer) autoLink(b *strings.Builder, n *ast.AutoLink) {
	url := n.URL(r.src)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	label := string(n.Label(r.src))
	if !r.plain {
		label = mdEscape(label)
	}
	r.writeLink(b, url, false, label)
}

// image is shown as a link to it labelled with its alt text.
func (r *mdRenderer) image(b *strings.Builder, n *ast.Image) {
	alt := strings.TrimSpace(r.plainString(n))
	if r.link > 0 {
		r.text1(b, alt) // an image inside a link: just its alt text
		return
	}
	if !r.plain {
		alt = mdEscape(alt)
	}
	r.writeLink(b, n.Destination, true, alt)
}
