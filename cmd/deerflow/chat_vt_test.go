package main

import (
	"strconv"
	"strings"
	"testing"
)

// render is what a terminal cols wide shows after out was written to it:
// just enough VT100 for what the console and x/term's line editor emit
// (cursor moves, clearing, auto-wrap; styles are dropped). Rows are never
// scrolled away, so moving up stops at the first line written.
func render(out string, cols int) string {
	v := &vt{cols: cols, lines: [][]rune{nil}}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\x1b' && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < '@' || rs[j] > '~') {
				j++
			}
			if j < len(rs) {
				v.csi(string(rs[i+2:j]), rs[j])
			}
			i = j
		case r == '\r':
			v.x = 0
		case r == '\n':
			v.down(1)
		case r >= ' ':
			v.put(r)
		}
	}
	var b strings.Builder
	for _, l := range v.lines {
		b.WriteString(strings.TrimRight(string(l), " "))
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

type vt struct {
	cols  int
	lines [][]rune
	x, y  int
}

func (v *vt) down(n int) {
	v.y += n
	for len(v.lines) <= v.y {
		v.lines = append(v.lines, nil)
	}
}

func (v *vt) put(r rune) {
	if v.x >= v.cols {
		v.x = 0
		v.down(1)
	}
	l := v.lines[v.y]
	for len(l) <= v.x {
		l = append(l, ' ')
	}
	l[v.x] = r
	v.lines[v.y] = l
	v.x++
}

func (v *vt) csi(params string, final rune) {
	n, err := strconv.Atoi(strings.TrimPrefix(params, "?"))
	if err != nil || n == 0 {
		n = 1
	}
	switch final {
	case 'A':
		v.y = max(0, v.y-n)
	case 'B':
		v.down(n)
	case 'C':
		v.x = min(v.cols-1, v.x+n)
	case 'D':
		v.x = max(0, v.x-n)
	case 'K':
		if v.x < len(v.lines[v.y]) {
			v.lines[v.y] = v.lines[v.y][:v.x]
		}
	case 'J':
		if v.x < len(v.lines[v.y]) {
			v.lines[v.y] = v.lines[v.y][:v.x]
		}
		v.lines = v.lines[:v.y+1]
	}
}

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cols int
		want string
	}{
		{"abc\r\ndef", 10, "abc\ndef"},
		{"abcdef", 4, "abcd\nef"},
		{"one\r\ntwo\r\n\x1b[2A\r\x1b[Jthree\r\n", 10, "three"},
		{"\x1b[1mx\x1b[0m hello\x1b[3D\x1b[Kp", 10, "x hep"},
	} {
		if got := render(tc.in, tc.cols); got != tc.want {
			t.Errorf("render(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
