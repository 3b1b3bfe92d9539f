package tgmd

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// mdValidateHTML checks s the way Telegram's HTML parser would, restricted
// to the subset we emit: only b, i, u, s, code, pre, pre>code.language-x,
// a href, blockquote and tg-spoiler tags; every tag closed in order; no tags
// inside code/pre except one leading code with a language class; no link in
// a link and no quote in a quote; text contains no raw '<' or '>'; every '&'
// starts a supported entity; valid UTF-8.
func mdValidateHTML(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("invalid UTF-8")
	}
	type open struct {
		name   string
		pos    int
		hasTag bool // pre: already has its code child
	}
	var stack []open
	in := func(name string) bool {
		for _, o := range stack {
			if o.name == name {
				return true
			}
		}
		return false
	}
	i := 0
	for i < len(s) {
		switch c := s[i]; c {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return fmt.Errorf("unterminated tag at %d", i)
			}
			tag := s[i : i+j+1]
			if strings.ContainsAny(tag[1:len(tag)-1], "<") {
				return fmt.Errorf("bad tag %q at %d", tag, i)
			}
			if strings.HasPrefix(tag, "</") {
				name := tag[2 : len(tag)-1]
				if len(stack) == 0 || stack[len(stack)-1].name != name {
					return fmt.Errorf("unmatched %q at %d (stack %v)", tag, i, stack)
				}
				stack = stack[:len(stack)-1]
				i += j + 1
				continue
			}
			name, err := mdValidateOpenTag(tag)
			if err != nil {
				return fmt.Errorf("%v at %d", err, i)
			}
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				switch {
				case top.name == "code":
					return fmt.Errorf("tag %q inside code at %d", tag, i)
				case top.name == "pre":
					if name != "code" || top.hasTag || top.pos != i || !strings.Contains(tag, "class=") {
						return fmt.Errorf("tag %q inside pre at %d", tag, i)
					}
					top.hasTag = true
				}
			}
			if strings.Contains(tag, "class=") && (len(stack) == 0 || stack[len(stack)-1].name != "pre") {
				return fmt.Errorf("code with class outside pre at %d", i)
			}
			if (name == "a" || name == "blockquote" || name == "pre") && in(name) {
				return fmt.Errorf("nested %s at %d", name, i)
			}
			stack = append(stack, open{name: name, pos: i + j + 1})
			i += j + 1
		case '>':
			return fmt.Errorf("raw '>' at %d", i)
		case '&':
			m := mdEntityRE.FindString(s[i:])
			if m == "" {
				return fmt.Errorf("bad entity at %d: %q", i, s[i:min(len(s), i+12)])
			}
			i += len(m)
		default:
			i++
		}
		if len(stack) > 0 && stack[len(stack)-1].name == "pre" && stack[len(stack)-1].pos != i {
			stack[len(stack)-1].hasTag = true // text seen: no code child allowed any more
		}
	}
	if len(stack) != 0 {
		return fmt.Errorf("unclosed tags %v", stack)
	}
	return nil
}

var (
	mdEntityRE  = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});`)
	mdOpenTagRE = regexp.MustCompile(`^<(b|i|u|s|code|pre|blockquote|tg-spoiler)>$`)
	mdCodeTagRE = regexp.MustCompile(`^<code class="language-[A-Za-z0-9_+-]+">$`)
	mdLinkTagRE = regexp.MustCompile(`^<a href="([^"<>]+)">$`)
)

func mdValidateOpenTag(tag string) (string, error) {
	if m := mdOpenTagRE.FindStringSubmatch(tag); m != nil {
		return m[1], nil
	}
	if mdCodeTagRE.MatchString(tag) {
		return "code", nil
	}
	if m := mdLinkTagRE.FindStringSubmatch(tag); m != nil {
		href := m[1]
		for k := strings.IndexByte(href, '&'); k >= 0; k = strings.IndexByte(href, '&') {
			e := mdEntityRE.FindString(href[k:])
			if e == "" {
				return "", fmt.Errorf("bad entity in href %q", href)
			}
			href = href[k+len(e):]
		}
		u := html.UnescapeString(m[1])
		if !mdSafeHref(u) {
			return "", fmt.Errorf("unsafe href %q", u)
		}
		return "a", nil
	}
	return "", fmt.Errorf("tag %q not allowed", tag)
}

// mdCheckRendered applies the validator and the no-trailing-whitespace rule.
func mdCheckRendered(t testing.TB, in, out string) {
	t.Helper()
	if err := mdValidateHTML(out); err != nil {
		t.Fatalf("RenderHTML(%q) = %q: invalid: %v", in, out, err)
	}
	if out != strings.TrimRight(out, " \t\n\r") {
		t.Fatalf("RenderHTML(%q) = %q: trailing whitespace", in, out)
	}
}

var mdRenderCases = []struct{ name, in, want string }{
	{"empty", "", ""},
	{"blank", " \n\t\n ", ""},
	{"plain", "hello world", "hello world"},
	{"escape", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
	{"script", "<script>alert('x')</script>", "&lt;script&gt;alert('x')&lt;/script&gt;"},
	{"inline raw html", "inline <b>html</b> and <a href=\"x\">y</a>",
		"inline &lt;b&gt;html&lt;/b&gt; and &lt;a href=\"x\"&gt;y&lt;/a&gt;"},
	{"html block", "<div class=\"x\">\nraw & <b>bold</b>\n</div>",
		"&lt;div class=\"x\"&gt;\nraw &amp; &lt;b&gt;bold&lt;/b&gt;\n&lt;/div&gt;"},
	{"html comment", "foo <!-- c --> bar", "foo &lt;!-- c --&gt; bar"},
	{"entities and escapes", `\*not em\* &amp; &copy; &#x1F600; &lt;b&gt;`, "*not em* &amp; © 😀 &lt;b&gt;"},
	{"emphasis", "*it* _it_ **b** __b__ ***bi*** ~~s~~ ~s~", "<i>it</i> <i>it</i> <b>b</b> <b>b</b> <i><b>bi</b></i> <s>s</s> <s>s</s>"},
	{"nested emphasis", "**bold *and it* bold**", "<b>bold <i>and it</i> bold</b>"},
	{"inline code", "use `a<b && c`", "use <code>a&lt;b &amp;&amp; c</code>"},
	{"inline code backticks", "`` a ` b ``", "<code>a ` b</code>"},
	{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
	{"heading no blank", "## Sub **x** `c`\ntext", "<b>Sub x <code>c</code></b>\n\ntext"},
	{"setext", "Title\n=====", "<b>Title</b>"},
	{"paragraphs", "a\n\n\n\nb", "a\n\nb"},
	{"soft and hard breaks", "l1\nl2  \nl3\\\nl4", "l1\nl2\nl3\nl4"},
	{"link", "[Go](https://go.dev/doc?a=1&b=2)", `<a href="https://go.dev/doc?a=1&amp;b=2">Go</a>`},
	{"link quote in href", `[q](https://x.y/?q="hi")`, `<a href="https://x.y/?q=%22hi%22">q</a>`},
	{"link quote escaped", `[q](<https://x.y/a"b>)`, `<a href="https://x.y/a%22b">q</a>`},
	{"link unicode", "[日本](https://ja.wikipedia.org/wiki/日本)", `<a href="https://ja.wikipedia.org/wiki/%E6%97%A5%E6%9C%AC">日本</a>`},
	{"link schemes", "[t](tg://user?id=1) [m](mailto:a@b.c) [h](HTTP://X.Y)",
		`<a href="tg://user?id=1">t</a> <a href="mailto:a@b.c">m</a> <a href="HTTP://X.Y">h</a>`},
	{"unknown schemes", "[js](javascript:alert(1)) [f](ftp://x.y) [rel](/docs) [empty](http://)",
		"js (javascript:alert(1)) f (ftp://x.y) rel (/docs) empty (http://)"},
	{"link empty label", "[](https://x.y)", `<a href="https://x.y">https://x.y</a>`},
	{"link empty dest", "[label]()", "label"},
	{"link with code", "[`code` here](https://x.y)", `<a href="https://x.y">code here</a>`},
	{"link with bold", "[**b**](https://x.y)", `<a href="https://x.y"><b>b</b></a>`},
	{"autolinks", "<https://a.b/c?d&e> <me@x.com> <ftp://f.g>",
		`<a href="https://a.b/c?d&amp;e">https://a.b/c?d&amp;e</a> <a href="mailto:me@x.com">me@x.com</a> ftp://f.g`},
	{"bare url", "see https://go.dev", "see https://go.dev"},
	{"image", "![diagram](https://x.y/d.png)", `<a href="https://x.y/d.png">diagram</a>`},
	{"image no alt", "![](https://x.y/d.png)", `<a href="https://x.y/d.png">https://x.y/d.png</a>`},
	{"image relative", "![alt](img/d.png)", "alt (img/d.png)"},
	{"image in link", "[![badge](https://b.svg)](https://x.y)", `<a href="https://x.y">badge</a>`},
	{"blockquote", "> quote\n> more\n\n> second", "<blockquote>quote\nmore</blockquote>\n\n<blockquote>second</blockquote>"},
	{"nested blockquote", "> a\n>> b", "<blockquote>a\n\nb</blockquote>"},
	{"blockquote with code", "> ```go\n> x := 1\n> ```", `<blockquote><pre><code class="language-go">x := 1</code></pre></blockquote>`},
	{"unordered list", "- a\n- b\n* c", "• a\n• b\n\n• c"},
	{"nested list", "- a\n  - b\n    - c\n- d", "• a\n  • b\n    • c\n• d"},
	{"ordered list", "1. one\n2. two\n   - sub\n3. three", "1. one\n2. two\n  • sub\n3. three"},
	{"ordered start", "7. seven\n8. eight", "7. seven\n8. eight"},
	{"ordered paren", "0) zero\n1) one", "0) zero\n1) one"},
	{"list continuation", "- first line\n  second line\n\n  para two\n- x", "• first line\n  second line\n  para two\n• x"},
	{"list with code", "- item\n\n  ```py\n  print(1)\n  ```", "• item\n<pre><code class=\"language-py\">print(1)</code></pre>"},
	{"list nested first", "- - x", "•\n  • x"},
	{"task list", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
	{"ordered task list", "1. [x] done", "1. ☑ done"},
	{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
	{"fenced code", "```go\nfunc main() {\n\tfmt.Println(\"<&>\")\n}\n```",
		"<pre><code class=\"language-go\">func main() {\n\tfmt.Println(\"&lt;&amp;&gt;\")\n}</code></pre>"},
	{"fenced no lang", "```\nplain\n```", "<pre>plain</pre>"},
	{"fenced lang sanitized", "```c++ {linenos}\nint x;\n```", `<pre><code class="language-c++">int x;</code></pre>`},
	{"fenced lang hostile", "```\"><script>\nx\n```", `<pre><code class="language-script">x</code></pre>`},
	{"fenced lang all bad", "```\"\"\nx\n```", "<pre>x</pre>"},
	{"fenced empty", "```\n\n```", ""},
	{"fenced unclosed", "```js\nlet a = 1", `<pre><code class="language-js">let a = 1</code></pre>`},
	{"indented code", "    code <x>\n    more", "<pre>code &lt;x&gt;\nmore</pre>"},
	{"table", "| Name | Qty |\n|------|----:|\n| apple | 3 |\n| 香蕉 | 12 |",
		"<pre>Name  | Qty\n------+----\napple |   3\n香蕉  |  12</pre>"},
	{"table center and inline", "| **H** | [l](https://x.y) |\n|:-:|---|\n| ~~s~~ | `a<b` |",
		"<pre>H | l (https://x.y)\n--+----------------\ns | a&lt;b</pre>"},
	{"table ragged", "| a | b |\n|---|---|\n| 1 |", "<pre>a | b\n--+--\n1 |</pre>"},
	{"cjk and emoji", "中文 **粗体** 😀👨‍👩‍👧 emoji", "中文 <b>粗体</b> 😀👨‍👩‍👧 emoji"},
	{"nul and bad utf8", "a\x00b\xffc", "a\uFFFDb\uFFFDc"},
	{"crlf", "a\r\nb\r\n\r\nc", "a\nb\n\nc"},
	{"trailing spaces", "text   \n\n   ", "text"},
}

func TestRenderHTML(t *testing.T) {
	for _, tc := range mdRenderCases {
		t.Run(tc.name, func(t *testing.T) {
			got := RenderHTML(tc.in)
			if got != tc.want {
				t.Errorf("RenderHTML(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			mdCheckRendered(t, tc.in, got)
		})
	}
}

func TestRenderHTMLHostile(t *testing.T) {
	inputs := []string{
		strings.Repeat(">", 5000) + " deep",
		strings.Repeat("- ", 2000) + "deep list",
		strings.Repeat("*", 10000),
		strings.Repeat("[", 5000) + "x" + strings.Repeat("](https://a.b)", 5000),
		strings.Repeat("**a *b ", 3000),
		"[x](https://a.b/\"onmouseover=\"alert(1))",
		"[x](https://a.b/<script>)",
		"<a href=\"javascript:alert(1)\">x</a>",
		"```\n</pre><b>\n```",
		"`</code>`",
		"| a |\n|---|\n| </pre> |",
		"[a](https://x.y \"title\") [b][ref]\n\n[ref]: https://r.s \"T\"",
		"\uFEFF\u202Ertl\u200B",
		"&#xD800; &#1114112; &#99999999;",
	}
	for _, in := range inputs {
		mdCheckRendered(t, in, RenderHTML(in))
	}
	if got := RenderHTML("[b][ref]\n\n[ref]: https://r.s"); got != `<a href="https://r.s">b</a>` {
		t.Errorf("reference link: %q", got)
	}
}

func TestRenderHTMLConcurrent(t *testing.T) {
	in := mdTestAnswer(3000, 3000, 10000)
	want := RenderHTML(in)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if got := RenderHTML(in); got != want {
					t.Error("concurrent RenderHTML differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

func FuzzRenderHTML(f *testing.F) {
	for _, tc := range mdRenderCases {
		f.Add(tc.in)
	}
	f.Add(mdTestAnswer(500, 300, 2000))
	f.Fuzz(func(t *testing.T, in string) {
		mdCheckRendered(t, in, RenderHTML(in))
	})
}

// mdTestAnswer builds an LLM-style Markdown answer of about total characters
// with a Go code block of about codeLen characters starting after about
// codeAt characters of prose.
func mdTestAnswer(codeAt, codeLen, total int) string {
	var b strings.Builder
	para := func(i int) {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "## Section %d\n\n", i)
		case 1:
			b.WriteString("- first point with **bold** text & more\n- second point with `inline <code>`\n  - nested 中文 detail 😀\n\n")
		case 2:
			b.WriteString("> A quoted remark about [the docs](https://go.dev/doc?x=1&y=2).\n\n")
		}
		fmt.Fprintf(&b, "Paragraph %d explains things in detail: the quick brown fox jumps over the lazy dog, "+
			"while *emphasis* and ~~strikes~~ appear; 5 < 6 && 7 > 3. 日本語のテキストも少し。 "+
			"Emoji 👍🏽 and family 👨‍👩‍👧 are here too, plus a long-ish sentence to pad the paragraph out.\n\n", i)
	}
	n := func() int { return utf8.RuneCountInString(b.String()) }
	i := 0
	for n() < codeAt {
		para(i)
		i++
	}
	b.WriteString("```go\n")
	for l := 0; n() < codeAt+codeLen; l++ {
		fmt.Fprintf(&b, "\tif x%d := f(\"<%d>\"); x%d != nil && ok { // & more\n", l, l, l)
	}
	b.WriteString("```\n\n")
	for n() < total {
		para(i)
		i++
	}
	return b.String()
}
