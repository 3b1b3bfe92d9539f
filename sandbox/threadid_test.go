package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

// validThreadID replaced a regexp (compiled at every start); it must
// accept exactly what the regexp accepted.
func TestValidThreadIDMatchesTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	ids := []string{
		"", "t", "th_01HZY", "th-1", "-", "_", "../x", "a/b", "a b", "é", "a\n", "\na", "a.b",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65),
	}
	for _, alphabet := range []string{"aZ9_-", "a-./ \n\x00ÿ"} {
		for n := 0; n <= 66; n++ {
			var b strings.Builder
			for i := range n {
				b.WriteByte(alphabet[(i*7+n)%len(alphabet)])
			}
			ids = append(ids, b.String())
		}
	}
	for _, id := range ids {
		if got, want := validThreadID(id), re.MatchString(id); got != want {
			t.Errorf("validThreadID(%q) = %v, the regexp says %v", id, got, want)
		}
	}
}
