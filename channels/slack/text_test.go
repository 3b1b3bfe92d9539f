package slack

import "testing"

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"see <https://x.io|the docs> &amp; <https://y.io>": "see the docs (https://x.io) & https://y.io",
		"a &lt;b&gt;  ": "a <b>",
	} {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}
