package faketelegram

import (
	"fmt"
	"slices"
	"testing"
)

func TestParseHTML(t *testing.T) {
	e := func(typ string, off, n int, extra ...string) MessageEntity {
		m := MessageEntity{Type: typ, Offset: off, Length: n}
		if len(extra) > 0 {
			switch typ {
			case "text_link":
				m.URL = extra[0]
			case "pre":
				m.Language = extra[0]
			case "custom_emoji":
				m.CustomEmojiID = extra[0]
			}
		}
		return m
	}
	for _, c := range []struct {
		in, text string
		ents     []MessageEntity
	}{
		{"plain", "plain", nil},
		{"😀 <b>bold</b>", "😀 bold", []MessageEntity{e("bold", 3, 4)}}, // the emoji is 2 UTF-16 units
		{"<b>a<i>b</i></b>", "ab", []MessageEntity{e("bold", 0, 2), e("italic", 1, 1)}},
		{"<strong>x</strong><em>y</em><ins>z</ins><del>w</del><s>v</s><strike>u</strike><u>t</u>", "xyzwvut",
			[]MessageEntity{e("bold", 0, 1), e("italic", 1, 1), e("underline", 2, 1), e("strikethrough", 3, 1),
				e("strikethrough", 4, 1), e("strikethrough", 5, 1), e("underline", 6, 1)}},
		{`<a href="https://x.org/?a=1&amp;b=2">link</a>`, "link", []MessageEntity{e("text_link", 0, 4, "https://x.org/?a=1&b=2")}},
		{`<pre><code class="language-go">x := 1</code></pre>`, "x := 1", []MessageEntity{e("pre", 0, 6, "go")}},
		{"<pre>p</pre><code>c</code>", "pc", []MessageEntity{e("pre", 0, 1), e("code", 1, 1)}},
		{`<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler>`, "st", []MessageEntity{e("spoiler", 0, 1), e("spoiler", 1, 1)}},
		{"<blockquote>q</blockquote><blockquote expandable>r</blockquote>", "qr",
			[]MessageEntity{e("blockquote", 0, 1), e("expandable_blockquote", 1, 1)}},
		{`<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>`, "👍", []MessageEntity{e("custom_emoji", 0, 2, "5368324170671202286")}},
		{"&lt;&gt;&amp;&quot;&#65;&#x42;&nbsp;AT&T", `<>&"AB&nbsp;AT&T`, nil},
		{"<B>x</>", "x", []MessageEntity{e("bold", 0, 1)}},
		{"<b></b>x", "x", nil},
	} {
		text, ents, err := parseHTML(c.in)
		if err != nil || text != c.text || !slices.Equal(ents, c.ents) {
			t.Errorf("parseHTML(%q) = %q, %v, %v; want %q, %v", c.in, text, ents, err, c.text, c.ents)
		}
	}
	for in, want := range map[string]string{
		"a < b":                   `Unsupported start tag "" at byte offset 2`,
		"1<2":                     "Unclosed start tag at byte offset 1",
		"x <":                     "Unclosed start tag at byte offset 2",
		"<p>x</p>":                `Unsupported start tag "p" at byte offset 0`,
		"<b>x</i>":                `Unmatched end tag at byte offset 4, expected "</b>", found "</i>"`,
		"x</b>":                   "Unexpected end tag at byte offset 1",
		"<b>x</b":                 "Unclosed end tag at byte offset 4",
		"<b><i>x</i>":             `Can't find end tag corresponding to start tag "b"`,
		"<span>x</span>":          `Tag "span" must have class "tg-spoiler" at byte offset 0`,
		`<a href="x>y</a>`:        "Unclosed start tag at byte offset 0",
		"<a href>x</a>":           `Expected equal sign in declaration of an attribute of the tag "a" at byte offset 0`,
		"<a href=x/y>z</a>":       "Unexpected end of name token at byte offset 8",
		"<tg-emoji>x</tg-emoji>":  "Invalid custom emoji identifier specified",
		"<b>a <i>b</b> c</i>":     `Unmatched end tag at byte offset 9, expected "</i>", found "</b>"`,
		"<code>if a<c {}</code>":  `Unsupported start tag "c" at byte offset 10`,
		"<pre>x</pre><br>":        `Unsupported start tag "br" at byte offset 12`,
		"<blockquote x>q</block>": `Expected equal sign in declaration of an attribute of the tag "blockquote" at byte offset 0`,
	} {
		if _, _, err := parseHTML(in); fmt.Sprint(err) != want {
			t.Errorf("parseHTML(%q) error = %v, want %s", in, err, want)
		}
	}
}

func TestFormatText(t *testing.T) {
	text, ents, e := formatText("  <b> hi</b>\n", "HTML", "", "text")
	if e != nil || text != "hi" || !slices.Equal(ents, []MessageEntity{{Type: "bold", Offset: 0, Length: 2}}) {
		t.Fatalf("trimmed = %q %v %v", text, ents, e)
	}
	if _, _, e := formatText("x", "html5", "", "text"); e == nil || e.desc != "Bad Request: unsupported parse_mode" {
		t.Fatalf("parse mode: %v", e)
	}
	if _, _, e := formatText("", "", "", "caption"); e != nil {
		t.Fatalf("empty caption: %v", e.desc)
	}
	long := make([]byte, 1025)
	for i := range long {
		long[i] = 'x'
	}
	if _, _, e := formatText(string(long), "", "", "caption"); e == nil || e.desc != "Bad Request: message caption is too long" {
		t.Fatalf("long caption: %v", e)
	}
	if _, _, e := formatText("\xff", "", "", "text"); e == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
}

func TestDetectEntities(t *testing.T) {
	for in, want := range map[string][]MessageEntity{
		"/start":                      {{Type: "bot_command", Offset: 0, Length: 6}},
		"/ask@deerflow_test_bot why":  {{Type: "bot_command", Offset: 0, Length: 22}},
		"😀 @deerflow_test_bot /new x": {{Type: "mention", Offset: 3, Length: 18}, {Type: "bot_command", Offset: 22, Length: 4}},
		"see https://x.org/a/b.":      {{Type: "url", Offset: 4, Length: 17}},
		"mail a@example.com or a/b":   nil,
		"@abc is too short":           nil,
	} {
		if got := DetectEntities(in); !slices.Equal(got, want) {
			t.Errorf("DetectEntities(%q) = %v, want %v", in, got, want)
		}
	}
}
