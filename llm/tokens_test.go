package llm

import (
	"strings"
	"testing"
)

// tokensByRune is Tokens as first written, one rune at a time: the
// reference for the word-at-a-time version.
func tokensByRune(s string) int {
	ascii, other := 0, 0
	for _, r := range s {
		if r < 0x80 {
			ascii++
		} else {
			other++
		}
	}
	return (ascii+3)/4 + other
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "a", "hello world, a longer line of plain text", "中文和English混合 text",
		"bad \xff\xfe utf-8 \xe4\xb8", "🦌🦌🦌🦌 deer", strings.Repeat("x", 17) + "é" + strings.Repeat("y", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Tokens(s), tokensByRune(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkTokens counts a 60 KB history of mostly ASCII text.
func BenchmarkTokens(b *testing.B) {
	s := strings.Repeat("a line of the file, with \"quotes\" and a tab\t;\n", 1200) + "les idées, 中文"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Tokens(s)
	}
}
