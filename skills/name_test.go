package skills

import (
	"regexp"
	"strings"
	"testing"
)

// validName replaced a regexp (compiled at every start); it must accept
// exactly what the regexp accepted.
func TestValidNameMatchesTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	names := []string{
		"", "a", "0", "-", "-a", "a-", "deep-research", "Deep", "a_b", "a b", "é", "a\n", "\na", "a.b",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), "-" + strings.Repeat("a", 63),
	}
	for _, alphabet := range []string{"az9-", "aZ_-. \n\x00ÿ"} {
		for n := 0; n <= 66; n++ {
			var b strings.Builder
			for i := range n {
				b.WriteByte(alphabet[(i*7+n)%len(alphabet)])
			}
			names = append(names, b.String())
		}
	}
	for _, s := range names {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
