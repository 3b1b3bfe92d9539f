package sandbox

import (
	"strings"
	"testing"
)

func TestMiddleTruncate(t *testing.T) {
	if got := middleTruncate("short", "", 0, 10); got != "short" {
		t.Errorf("short = %q", got)
	}
	got := middleTruncate("ééééé"+"xxxxxxxxxx"+"ààààà", "", 0, 10)
	if !strings.HasPrefix(got, "ééééé\n\n[... 10 characters omitted") || !strings.HasSuffix(got, "...]\n\nààààà") {
		t.Errorf("middle = %q", got)
	}
}

func TestCapture(t *testing.T) {
	c := &capture{max: 8}
	for _, s := range []string{"0123", "4567", "89ab", "cdefgh", "ijklmnop", "q"} {
		c.Write([]byte(s))
	}
	head, tail, dropped := c.parts()
	if head != "01234567" || tail != "jklmnopq" || dropped != 11 {
		t.Errorf("parts = %q %q %d", head, tail, dropped)
	}
	// A multi-byte rune split at the seam is dropped, not mangled.
	c = &capture{max: 4}
	c.Write([]byte("abcé" + strings.Repeat("z", 10) + "éxyz"))
	head, tail, dropped = c.parts()
	if head != "abc" || tail != "xyz" || dropped != 2+10+2 {
		t.Errorf("seam parts = %q %q %d", head, tail, dropped)
	}
	got := middleTruncate(head, tail, dropped, 100)
	if got != "abc\n\n[... 14 characters omitted from the middle of the output; redirect the output to a file and use grep or read_file to see all of it ...]\n\nxyz" {
		t.Errorf("truncated = %q", got)
	}
}

func TestHeadTruncate(t *testing.T) {
	s := strings.Repeat("line\n", 10)
	if got := headTruncate(s, 100, "hint"); got != s {
		t.Errorf("untouched = %q", got)
	}
	got := headTruncate(s, 12, "More with X.")
	if got != "line\nline\n[output truncated: showing the first 10 of 50 characters; 40 not shown. More with X.]" {
		t.Errorf("head = %q", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q", n, got)
		}
	}
}
