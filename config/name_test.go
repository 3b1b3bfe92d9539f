package config

import (
	"regexp"
	"strings"
	"testing"
)

// isName replaced two regexps (compiled at every start); it must accept
// exactly what they accepted.
func TestIsNameMatchesTheRegexps(t *testing.T) {
	mcp := regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	subagent := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`)
	names := []string{
		"", "a", "Z", "0", "-", "_", "-a", "_a", "a-", "a_b", "web-search", "my tool", "é", "a.b", "a\n",
		"\na", "a/b", strings.Repeat("a", 31), strings.Repeat("a", 32), strings.Repeat("a", 33),
		strings.Repeat("b", 39), strings.Repeat("b", 40), strings.Repeat("b", 41), "-" + strings.Repeat("b", 39),
	}
	for _, alphabet := range []string{"aZ9_-", "a-. \n\x00ÿ"} { // generated names of every length up to 42
		for n := 0; n <= 42; n++ {
			var b strings.Builder
			for i := range n {
				b.WriteByte(alphabet[(i*7+n)%len(alphabet)])
			}
			names = append(names, b.String())
		}
	}
	for _, s := range names {
		if got, want := isName(s, 32, false), mcp.MatchString(s); got != want {
			t.Errorf("isName(%q, 32, false) = %v, the mcp regexp says %v", s, got, want)
		}
		if got, want := isName(s, 40, true), subagent.MatchString(s); got != want {
			t.Errorf("isName(%q, 40, true) = %v, the subagent regexp says %v", s, got, want)
		}
	}
}
