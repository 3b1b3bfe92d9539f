package channels

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitMarkdown(t *testing.T) {
	var code strings.Builder
	code.WriteString("Intro paragraph.\n\n```python\n")
	for i := 0; i < 400; i++ {
		code.WriteString("print('row', " + strings.Repeat("9", 30) + ")  # é\n")
	}
	code.WriteString("```\n\nOutro paragraph.")
	long := strings.Repeat("ü", 9000) // one 18,000-byte line
	tests := []struct {
		name  string
		in    string
		limit int
		parts int
	}{
		{"empty", "  \n", 100, 0},
		{"fits", "hello **world**", 100, 1},
		{"paragraphs", strings.Repeat("word ", 30) + "\n\n" + strings.Repeat("more ", 30), 200, 2},
		{"code block across the cut", code.String(), 6000, 4},
		{"one huge line", long, 12000, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := SplitMarkdown(tt.in, tt.limit)
			if len(parts) != tt.parts {
				t.Fatalf("%d parts, want %d", len(parts), tt.parts)
			}
			var joined strings.Builder
			for i, p := range parts {
				if len(p) > tt.limit {
					t.Errorf("part %d has %d bytes > %d", i, len(p), tt.limit)
				}
				if !utf8.ValidString(p) {
					t.Errorf("part %d splits a character", i)
				}
				if n := strings.Count(p, "```"); n%2 != 0 {
					t.Errorf("part %d leaves a code fence open (%d fences)", i, n)
				}
				joined.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "```python\n", ""), "```", ""))
			}
			want := strings.ReplaceAll(strings.ReplaceAll(tt.in, "```python\n", ""), "```", "")
			if strip(joined.String()) != strip(want) {
				t.Errorf("text was lost or changed in splitting")
			}
			if tt.name == "code block across the cut" && !strings.HasPrefix(parts[1], "```python\n") {
				t.Errorf("the code block was not reopened with its language: %q", parts[1][:20])
			}
		})
	}
}

func strip(s string) string { return strings.Join(strings.Fields(s), "") }
