package tgmd

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var splitTagRE = regexp.MustCompile(`<[^>]*>`)

// splitVisibleText is what Telegram shows for our HTML: tags removed,
// entities decoded.
func splitVisibleText(s string) string {
	return html.UnescapeString(splitTagRE.ReplaceAllString(s, ""))
}

func splitNoSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func splitUTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// splitCheckChunks verifies every chunk is valid Telegram HTML, non-blank and
// within limit, and that no visible text was lost or duplicated.
func splitCheckChunks(t testing.TB, in string, chunks []string, limit int) {
	t.Helper()
	var all strings.Builder
	for i, c := range chunks {
		if err := mdValidateHTML(c); err != nil {
			t.Fatalf("chunk %d/%d invalid: %v\n%q", i, len(chunks), err, c)
		}
		if n := VisibleLen(c); n > limit {
			t.Fatalf("chunk %d/%d visible length %d > %d", i, len(chunks), n, limit)
		}
		if strings.TrimSpace(splitVisibleText(c)) == "" {
			t.Fatalf("chunk %d/%d is blank: %q", i, len(chunks), c)
		}
		all.WriteString(splitVisibleText(c))
	}
	if got, want := splitNoSpace(all.String()), splitNoSpace(splitVisibleText(in)); got != want {
		t.Fatalf("visible text changed by splitting:\n got %q\nwant %q", got, want)
	}
}

func TestVisibleLen(t *testing.T) {
	for in, want := range map[string]int{
		"":                                     0,
		"abc":                                  3,
		"<b>a&lt;b</b>":                        3,
		`<a href="https://x.y/?a&amp;b">t</a>`: 1,
		"😀":                                    2,
		"&#x1F600;&#128512;":                   4,
		"中文":                                   2,
		`<pre><code class="language-go">x</code></pre>`: 1,
		"a & b < c": 9, // malformed, counted as text
	} {
		if got := VisibleLen(in); got != want {
			t.Errorf("VisibleLen(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestSplitHTMLSmall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"fits", "<b>hello</b> world", 11, []string{"<b>hello</b> world"}},
		{"blank", " <b> </b>\n", 10, nil},
		{"empty", "", 10, nil},
		{"paragraph first", "aaa bbb\nccc\n\nddd eee", 16, []string{"aaa bbb\nccc", "ddd eee"}},
		{"line before space", "aaaa bbbb\ncc dd", 12, []string{"aaaa bbbb", "cc dd"}},
		{"space", "aaaa bbbb cccc", 12, []string{"aaaa bbbb", "cccc"}},
		{"early paragraph ignored", "ab\n\ncdefghij klmnop", 12, []string{"ab\n\ncdefghij", "klmnop"}},
		{"hard", "abcdefghijklmnop", 5, []string{"abcde", "fghij", "klmno", "p"}},
		{"reopen bold", "<b>hello world</b>", 6, []string{"<b>hello</b>", "<b>world</b>"}},
		{"reopen nested", "<i>x <b>hello world</b> y</i>", 8,
			[]string{"<i>x <b>hello</b></i>", "<i><b>world</b> y</i>"}},
		{"reopen link", `<a href="https://x.y/?a&amp;b">aaa bbb</a>`, 4,
			[]string{`<a href="https://x.y/?a&amp;b">aaa</a>`, `<a href="https://x.y/?a&amp;b">bbb</a>`}},
		{"reopen code", "<pre><code class=\"language-go\">line1\nline2</code></pre>", 8,
			[]string{`<pre><code class="language-go">line1</code></pre>`, `<pre><code class="language-go">line2</code></pre>`}},
		{"no empty tags", "aaaa <b>bbbb</b>", 6, []string{"aaaa", "<b>bbbb</b>"}},
		{"no empty tags after", "<b>aaaa</b> bbbb", 6, []string{"<b>aaaa</b>", "bbbb"}},
		{"entity boundary", "&lt;&lt;&lt;&amp;&amp;&amp;", 4, []string{"&lt;&lt;&lt;&amp;", "&amp;&amp;"}},
		{"surrogate boundary", "abc😀def", 4, []string{"abc", "😀de", "f"}},
		{"zwj cluster", "abc👨‍👩‍👧", 8, []string{"abc", "👨‍👩‍👧"}},
		{"combining mark", "abcde\u0301f", 5, []string{"abcd", "e\u0301f"}},
		{"tiny limit", "😀😀", 1, []string{"😀", "😀"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitHTML(tc.in, tc.limit)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SplitHTML(%q, %d)\n got %q\nwant %q", tc.in, tc.limit, got, tc.want)
			}
			splitCheckChunks(t, tc.in, got, max(tc.limit, 2))
		})
	}
}

func TestSplitHTMLLongAnswer(t *testing.T) {
	for _, tc := range []struct {
		name           string
		codeAt         int
		wantCodeReopen bool
	}{
		{"code split", 1800, true},
		{"code in middle", 3500, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := mdTestAnswer(tc.codeAt, 3000, 10000)
			if n := utf8.RuneCountInString(md); n < 10000 || n > 10500 {
				t.Fatalf("answer is %d characters", n)
			}
			h := RenderHTML(md)
			mdCheckRendered(t, md, h)
			chunks := SplitHTML(h, 4096)
			splitCheckChunks(t, h, chunks, 4096)
			if len(chunks) < 3 || len(chunks) > 4 {
				t.Errorf("%d chunks for visible length %d", len(chunks), VisibleLen(h))
			}
			const open = `<pre><code class="language-go">`
			reopened := false
			for i := 1; i < len(chunks); i++ {
				if strings.HasPrefix(chunks[i], open) && strings.HasSuffix(chunks[i-1], "</code></pre>") &&
					strings.Contains(chunks[i-1], open) {
					reopened = true
				}
			}
			if reopened != tc.wantCodeReopen {
				t.Errorf("code block reopened = %v, want %v", reopened, tc.wantCodeReopen)
			}
			if strings.Count(strings.Join(chunks, ""), open) != strings.Count(h, open)+splitBtoi(reopened) {
				t.Errorf("unexpected number of code block openings")
			}
			for i, c := range chunks {
				t.Logf("chunk %d: visible %d, raw %d bytes", i, VisibleLen(c), len(c))
			}
		})
	}
}

func splitBtoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSplitHTMLBoundaries(t *testing.T) {
	t.Run("emoji at 4096", func(t *testing.T) {
		in := strings.Repeat("x", 4095) + "😀" + strings.Repeat("y", 10)
		got := SplitHTML(in, 4096)
		splitCheckChunks(t, in, got, 4096)
		if len(got) != 2 || got[0] != strings.Repeat("x", 4095) || !strings.HasPrefix(got[1], "😀") {
			t.Errorf("got %d chunks, first len %d", len(got), len(got[0]))
		}
	})
	t.Run("long single word", func(t *testing.T) {
		in := strings.Repeat("a", 10000)
		got := SplitHTML(in, 4096)
		splitCheckChunks(t, in, got, 4096)
		if len(got) != 3 || len(got[0]) != 4096 || len(got[1]) != 4096 || len(got[2]) != 1808 {
			t.Errorf("chunk sizes wrong: %d chunks", len(got))
		}
	})
	t.Run("entities", func(t *testing.T) {
		in := "<b>" + strings.Repeat("&lt;&amp;", 3000) + "</b>"
		got := SplitHTML(in, 4096)
		splitCheckChunks(t, in, got, 4096)
		if len(got) != 2 || VisibleLen(got[0]) != 4096 || VisibleLen(got[1]) != 1904 {
			t.Errorf("got %d chunks", len(got))
		}
	})
	t.Run("long code line", func(t *testing.T) {
		in := RenderHTML("```sh\n" + strings.Repeat("echo 'x' && ", 1000) + "\n```")
		got := SplitHTML(in, 4096)
		splitCheckChunks(t, in, got, 4096)
		for _, c := range got {
			if !strings.HasPrefix(c, `<pre><code class="language-sh">`) {
				t.Errorf("chunk lost its code block: %.60q", c)
			}
		}
	})
}

func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  []string
	}{
		{"", 10, nil},
		{"  \n ", 10, nil},
		{"a <b> & c", 100, []string{"a <b> & c"}},
		{"one two\n\nthree <&> four", 12, []string{"one two", "three <&>", "four"}},
		{"&amp;&amp;", 5, []string{"&amp;", "&amp;"}},
		{"ab😀cd", 3, []string{"ab", "😀c", "d"}},
		{strings.Repeat("é", 7), 3, []string{"ééé", "ééé", "é"}},
	} {
		got := SplitText(tc.in, tc.limit)
		if !slices.Equal(got, tc.want) {
			t.Errorf("SplitText(%q, %d)\n got %q\nwant %q", tc.in, tc.limit, got, tc.want)
		}
		for _, c := range got {
			if n := splitUTF16Len(c); n > tc.limit {
				t.Errorf("chunk %q has %d units", c, n)
			}
		}
	}
}

func FuzzSplitHTML(f *testing.F) {
	for _, tc := range mdRenderCases {
		f.Add(tc.in, uint16(7))
	}
	f.Add(mdTestAnswer(300, 300, 1500), uint16(200))
	f.Add("```go\n"+strings.Repeat("x := 1 // <&>\n", 20)+"```", uint16(20))
	f.Add("` \f`", uint16(0)) // a visually blank chunk
	f.Fuzz(func(t *testing.T, md string, limit uint16) {
		h := RenderHTML(md)
		lim := 2 + int(limit)%300
		splitCheckChunks(t, h, SplitHTML(h, lim), lim)
		// Arbitrary (possibly malformed) markup: no panic, limit kept.
		for _, c := range SplitHTML(md, lim) {
			if n := VisibleLen(c); n > lim {
				t.Fatalf("raw input chunk has visible length %d > %d", n, lim)
			}
		}
	})
}

func FuzzSplitText(f *testing.F) {
	f.Add("one two\n\nthree <&> four", uint16(12))
	f.Add("ab😀cd👨‍👩‍👧 &amp; e\u0301", uint16(3))
	f.Add("00000000👨\u2001", uint16(3))                            // blank (U+2001) tail
	f.Add("00\xf0\x9f\x9800\xe2 \x8d\xa90000000000000", uint16(3)) // invalid UTF-8
	f.Fuzz(func(t *testing.T, s string, limit uint16) {
		lim := 2 + int(limit)%300
		chunks := SplitText(s, lim)
		var all strings.Builder
		for _, c := range chunks {
			if n := splitUTF16Len(c); n > lim {
				t.Fatalf("chunk %q has %d units > %d", c, n, lim)
			}
			if strings.TrimSpace(c) == "" {
				t.Fatalf("blank chunk")
			}
			if !utf8.ValidString(c) {
				t.Fatalf("chunk %q is not valid UTF-8", c)
			}
			all.WriteString(c)
		}
		if got, want := splitNoSpace(all.String()), splitNoSpace(strings.ToValidUTF8(s, "\uFFFD")); got != want {
			t.Fatalf("text changed:\n got %q\nwant %q", got, want)
		}
	})
}

func BenchmarkRenderSplitHTML10k(b *testing.B) {
	md := mdTestAnswer(3500, 3000, 10000)
	b.SetBytes(int64(len(md)))
	b.ReportAllocs()
	for b.Loop() {
		_ = SplitHTML(RenderHTML(md), 4096)
	}
}
