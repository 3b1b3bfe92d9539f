package sandbox

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Output limits, in characters, as in DeerFlow.
const (
	bashMaxChars = 20_000 // middle-truncated
	readMaxChars = 50_000 // head-truncated
	lsMaxChars   = 20_000 // head-truncated
)

// prefixRunes returns the longest prefix of s holding at most n runes.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// suffixRunes returns the longest suffix of s holding at most n runes.
func suffixRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// headTruncate keeps the first limit characters of s, cut at a line end when
// one is near, and says how much was cut and how to see more (hint).
func headTruncate(s string, limit int, hint string) string {
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s
	}
	head := prefixRunes(s, limit)
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	shown := utf8.RuneCountInString(head)
	return fmt.Sprintf("%s\n[output truncated: showing the first %s of %s characters; %s not shown. %s]",
		strings.TrimRight(head, "\n"), thousands(shown), thousands(total), thousands(total-shown), hint)
}

// middleTruncate keeps the start and the end of an output whose middle may
// already have lost dropped characters (see capture), limit characters in
// all.
func middleTruncate(head, tail string, dropped int, limit int) string {
	if dropped == 0 {
		head, tail = head+tail, ""
	}
	nHead, nTail := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
	if dropped == 0 && nHead <= limit {
		return head
	}
	keep := limit / 2
	if tail == "" {
		tail = suffixRunes(head, keep)
		head = prefixRunes(head, keep)
		dropped = nHead - 2*keep
	} else {
		if nHead > keep {
			dropped += nHead - keep
			head = prefixRunes(head, keep)
		}
		if nTail > keep {
			dropped += nTail - keep
			tail = suffixRunes(tail, keep)
		}
	}
	return fmt.Sprintf("%s\n\n[... %s characters omitted from the middle of the output; redirect the output to a file and use grep or read_file to see all of it ...]\n\n%s",
		head, thousands(dropped), tail)
}

// capture is an io.Writer that keeps the first and last max bytes of what is
// written and counts the rest, so a command's output costs bounded memory.
type capture struct {
	max     int
	head    []byte
	tail    []byte // ring buffer once full
	next    int    // ring write position
	dropped int
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.max - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(c.tail) < c.max {
			k := min(c.max-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := min(c.max-c.next, len(p))
		c.dropped += k
		copy(c.tail[c.next:], p[:k])
		c.next = (c.next + k) % c.max
		p = p[k:]
	}
	return n, nil
}

// parts returns the kept start and end of the output and how many bytes
// were dropped between them.
func (c *capture) parts() (head, tail string, dropped int) {
	h := c.head
	t := append(append([]byte(nil), c.tail[c.next:]...), c.tail[:c.next]...)
	dropped = c.dropped
	if dropped > 0 { // the seam may split a rune on either side
		for len(t) > 0 && !utf8.RuneStart(t[0]) {
			t, dropped = t[1:], dropped+1
		}
		i := len(h)
		for i > 0 && len(h)-i < utf8.UTFMax && !utf8.RuneStart(h[i-1]) {
			i--
		}
		if i > 0 && !utf8.FullRune(h[i-1:]) {
			dropped += len(h) - (i - 1)
			h = h[:i-1]
		}
	}
	return string(h), string(t), dropped
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
