package truncate

import (
	"strings"
	"testing"
)

func TestMiddleTruncate(t *testing.T) {
	if got := Middle("short", "", 0, 10); got != "short" {
		t.Errorf("short = %q", got)
	}
	got := Middle("ééééé"+"xxxxxxxxxx"+"ààààà", "", 0, 10)
	if !strings.HasPrefix(got, "ééééé\n\n[... 10 characters omitted") || !strings.HasSuffix(got, "...]\n\nààààà") {
		t.Errorf("middle = %q", got)
	}
}

func TestCapture(t *testing.T) {
	c := &Capture{Max: 8}
	for _, s := range []string{"0123", "4567", "89ab", "cdefgh", "ijklmnop", "q"} {
		c.Write([]byte(s))
	}
	head, tail, dropped := c.Parts()
	if head != "01234567" || tail != "jklmnopq" || dropped != 11 {
		t.Errorf("parts = %q %q %d", head, tail, dropped)
	}
	// A multi-byte rune split at the seam is dropped, not mangled.
	c = &Capture{Max: 4}
	c.Write([]byte("abcé" + strings.Repeat("z", 10) + "éxyz"))
	head, tail, dropped = c.Parts()
	if head != "abc" || tail != "xyz" || dropped != 2+10+2 {
		t.Errorf("seam parts = %q %q %d", head, tail, dropped)
	}
	got := Middle(head, tail, dropped, 100)
	if got != "abc\n\n[... 14 characters omitted from the middle of the output; redirect the output to a file and use grep or read_file to see all of it ...]\n\nxyz" {
		t.Errorf("truncated = %q", got)
	}
}

func TestHeadTruncate(t *testing.T) {
	s := strings.Repeat("line\n", 10)
	if got := Head(s, 100, "hint"); got != s {
		t.Errorf("untouched = %q", got)
	}
	got := Head(s, 12, "More with X.")
	if got != "line\nline\n[output truncated: showing the first 10 of 50 characters; 40 not shown. More with X.]" {
		t.Errorf("head = %q", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q", n, got)
		}
	}
}
