package channels

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// splitSeeds are Markdown answers that stress the splitter: code fences
// across cuts, unclosed and nested fences, huge lines, invalid UTF-8, RTL
// and zero-width characters.
func splitSeeds() []string {
	var code strings.Builder
	code.WriteString("Intro.\n\n```python\n")
	for i := range 60 {
		code.WriteString("print('row', " + strings.Repeat("9", i%40) + ")  # é\n")
	}
	code.WriteString("```\n\nOutro paragraph.")
	return []string{
		"",
		" \n\t\n ",
		"hello **world**",
		code.String(),
		"```go\nunclosed := true\n" + strings.Repeat("x := 1\n", 50),
		"````md\n```go\nx\n```\n````\n\n" + strings.Repeat("text ", 60),
		"```" + strings.Repeat("x", 300) + "\nhello world\n```\n" + strings.Repeat("after ", 40),
		"use ```inline``` code " + strings.Repeat("word ", 50),
		strings.Repeat("ü", 400),
		strings.Repeat("\x80", 500),
		strings.Repeat("a", 90) + "```python\n" + strings.Repeat("b", 200),
		"```\n" + strings.Repeat("`", 200) + "\n```\n" + strings.Repeat("z ", 100),
		"\u202Eשלום עולם\u202C " + strings.Repeat("\u200B\u200D\uFEFFمرحبا ", 40),
		"a\x00b\r\n\r\n" + strings.Repeat("c\\d ../ ", 50),
		strings.Repeat("para\n\n\n", 60),
		"   ```\n" + strings.Repeat("  indented code\n", 30) + "   ```",
	}
}

// FuzzSplitMarkdown checks the shared splitter (Slack markdown blocks, Lark
// cards): every part is within the limit, not blank, starts and ends
// without a line break, is valid UTF-8 when the input is, and (but the
// last) leaves no code fence open, by the fence rule SplitMarkdown
// documents; and removing the fences it added at the cuts gives back the
// input, whitespace aside.
func FuzzSplitMarkdown(f *testing.F) {
	for i, s := range splitSeeds() {
		f.Add(s, uint16(i*37))
	}
	f.Fuzz(func(t *testing.T, md string, l uint16) {
		limit := 16 + int(l)%1024
		parts := SplitMarkdown(md, limit)
		if trimmed := strings.TrimSpace(md); len(trimmed) <= limit {
			if trimmed == "" && parts != nil || trimmed != "" && (len(parts) != 1 || parts[0] != trimmed) {
				t.Fatalf("input that fits: got %q", parts)
			}
			return
		}
		for i, p := range parts {
			switch {
			case len(p) > limit:
				t.Fatalf("part %d has %d bytes > %d: %q", i, len(p), limit, p)
			case strings.TrimSpace(p) == "":
				t.Fatalf("part %d is blank: %q", i, p)
			case strings.HasPrefix(p, "\n") || strings.HasSuffix(p, "\n"):
				t.Fatalf("part %d starts or ends with a line break: %q", i, p)
			case utf8.ValidString(md) && !utf8.ValidString(p):
				t.Fatalf("part %d cuts a character: %q", i, p)
			}
			if i < len(parts)-1 {
				if f, _, _ := splitFenceState(p, limit); f != "" {
					t.Fatalf("part %d/%d leaves fence %q open:\n%s", i, len(parts), f, p)
				}
			}
		}
		if !splitRejoins(parts, md, limit) {
			t.Fatalf("parts do not rejoin to the input (limit %d):\n%q\nparts:\n%q", limit, md, parts)
		}
	})
}

// splitFenceLine classifies line by the documented fence rule: it is a
// fence line when it has at most limit/8 bytes (its line break counted) and,
// trimmed, starts with three or more backticks. It returns the backticks,
// the info string, and whether the line is nothing but backticks.
func splitFenceLine(line string, limit int) (marker, info string, bare, ok bool) {
	if len(line) > limit/8 {
		return "", "", false, false
	}
	t := strings.TrimSpace(line)
	n := 0
	for n < len(t) && t[n] == '`' {
		n++
	}
	if n < 3 {
		return "", "", false, false
	}
	return t[:n], t[n:], n == len(t), true
}

// splitFenceState runs the fence rule over a part and returns the fence
// (its backticks) open at its end, and the fence open before its last line
// with the line that reopens it. The last line of a part lost its line
// break, so it is counted only as a closing fence (a cut line's first piece
// may look like an opening one).
func splitFenceState(part string, limit int) (open, before, head string) {
	lines := strings.SplitAfter(part, "\n")
	var marker, reopen string
	for i, line := range lines {
		last := i == len(lines)-1
		if last {
			before, head = marker, reopen
			line += "\n"
		}
		m, info, bare, ok := splitFenceLine(line, limit)
		switch {
		case !ok:
		case marker != "":
			if bare && len(m) >= len(marker) {
				marker, reopen = "", ""
			}
		case !last && !strings.Contains(info, "`"):
			marker = m
			lang := ""
			if f := strings.Fields(info); len(f) > 0 && len(f[0]) <= 32 {
				lang = f[0]
			}
			reopen = m + lang + "\n"
		}
	}
	return marker, before, head
}

// splitRejoins reports whether parts are md cut into pieces, allowing for
// whitespace dropped at the cuts and, at a cut inside a code fence, a
// closing fence line ending one part and the fence's reopening line
// starting the next. Such a pair can look like a fence that really ends
// at the cut followed by one that starts there, so both readings are tried.
func splitRejoins(parts []string, md string, limit int) bool {
	want := splitNoSpace(md)
	type key struct {
		i, pos   int
		reopened bool
	}
	memo := map[key]bool{}
	var match func(i, pos int, reopened bool) bool
	match = func(i, pos int, reopened bool) bool {
		k := key{i, pos, reopened}
		if v, ok := memo[k]; ok {
			return v
		}
		p := parts[i]
		if reopened {
			_, p, _ = strings.Cut(p, "\n")
		}
		ok := false
		try := func(content string, next bool) {
			s := splitNoSpace(content)
			if ok || !strings.HasPrefix(want[pos:], s) {
				return
			}
			if i == len(parts)-1 {
				ok = pos+len(s) == len(want)
			} else {
				ok = match(i+1, pos+len(s), next)
			}
		}
		try(p, false)
		// A fence closed at the cut and reopened in the next part.
		if i < len(parts)-1 {
			open, before, head := splitFenceState(parts[i], limit)
			j := strings.LastIndexByte(p, '\n')
			if open == "" && before != "" && j >= 0 && p[j+1:] == before && strings.HasPrefix(parts[i+1], head) {
				try(p[:j], true)
			}
		}
		memo[k] = ok
		return ok
	}
	if len(parts) == 0 {
		return want == ""
	}
	return match(0, 0, false)
}

func splitNoSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// TestSplitMarkdownFences holds what FuzzSplitMarkdown found in the first
// SplitMarkdown: a long fence line panicked, invalid UTF-8 looped forever,
// a fence opened by a part's last line pushed the part past the limit,
// "````" fences (which may hold "```" lines) and inline ```code``` at a
// line's start were taken for fences left open, so the prose after them
// was reopened as code in the next parts.
func TestSplitMarkdownFences(t *testing.T) {
	for _, tc := range []struct {
		name  string
		md    string
		limit int
		want  []string
	}{
		{"long fence line", "```" + strings.Repeat("x", 93) + "\nhello world\n```", 100,
			[]string{"```" + strings.Repeat("x", 93), "hello world\n```"}},
		{"invalid UTF-8", strings.Repeat("\x80", 50), 20,
			[]string{strings.Repeat("\x80", 20), strings.Repeat("\x80", 20), strings.Repeat("\x80", 10)}},
		// A valid character among invalid bytes is not cut (the fuzzer
		// found "耀" split between two parts).
		{"valid among invalid UTF-8", strings.Repeat("\x80", 18) + "耀" + strings.Repeat("\x80", 20), 20,
			[]string{strings.Repeat("\x80", 18), "耀" + strings.Repeat("\x80", 17), strings.Repeat("\x80", 3)}},
		{"fence opened at the end", strings.Repeat("a", 70) + "\n```py\nx\n```", 80,
			[]string{strings.Repeat("a", 70), "```py\nx\n```"}},
		{"four backticks", "````md\n```go\nx\n```\n````\n\n" + strings.Repeat("text\n", 20), 80,
			[]string{"````md\n```go\nx\n```\n````\n\n" + strings.Repeat("text\n", 10) + "text", strings.Repeat("text\n", 8) + "text"}},
		{"inline code", "```inline``` code\n\n" + strings.Repeat("word\n", 30), 80,
			[]string{"```inline``` code\n\n" + strings.Repeat("word\n", 11) + "word", strings.Repeat("word\n", 15) + "word", "word\nword"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitMarkdown(tc.md, tc.limit)
			if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
				t.Errorf("SplitMarkdown(%q, %d)\n got %q\nwant %q", tc.md, tc.limit, got, tc.want)
			}
		})
	}
}
