// Package truncate keeps what the sandbox's tools return within the
// model's limits: the head of a long listing, the start and end of a
// command's output, counts written for people.
//
// It imports no package of ours.
package truncate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s holding at most n runes.
func Prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Suffix returns the longest suffix of s holding at most n runes.
func Suffix(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// Head keeps the first limit characters of s, cut at a line end when one
// is near, and says how much was cut and how to see more (hint).
func Head(s string, limit int, hint string) string {
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s
	}
	head := Prefix(s, limit)
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	shown := utf8.RuneCountInString(head)
	return fmt.Sprintf("%s\n[output truncated: showing the first %s of %s characters; %s not shown. %s]",
		strings.TrimRight(head, "\n"), Thousands(shown), Thousands(total), Thousands(total-shown), hint)
}

// Middle keeps the start and the end of an output whose middle may
// already have lost dropped characters (see Capture), limit characters in
// all.
func Middle(head, tail string, dropped int, limit int) string {
	if dropped == 0 {
		head, tail = head+tail, ""
	}
	nHead, nTail := utf8.RuneCountInString(head), utf8.RuneCountInString(tail)
	if dropped == 0 && nHead <= limit {
		return head
	}
	keep := limit / 2
	if tail == "" {
		tail = Suffix(head, keep)
		head = Prefix(head, keep)
		dropped = nHead - 2*keep
	} else {
		if nHead > keep {
			dropped += nHead - keep
			head = Prefix(head, keep)
		}
		if nTail > keep {
			dropped += nTail - keep
			tail = Suffix(tail, keep)
		}
	}
	return fmt.Sprintf("%s\n\n[... %s characters omitted from the middle of the output; redirect the output to a file and use grep or read_file to see all of it ...]\n\n%s",
		head, Thousands(dropped), tail)
}

// Capture is an io.Writer that keeps the first and last Max bytes of what
// is written and counts the rest, so a command's output costs bounded
// memory.
type Capture struct {
	Max     int
	head    []byte
	tail    []byte // ring buffer once full
	next    int    // ring write position
	dropped int
}

func (c *Capture) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.Max - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(c.tail) < c.Max {
			k := min(c.Max-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := min(c.Max-c.next, len(p))
		c.dropped += k
		copy(c.tail[c.next:], p[:k])
		c.next = (c.next + k) % c.Max
		p = p[k:]
	}
	return n, nil
}

// Parts returns the kept start and end of the output and how many bytes
// were dropped between them.
func (c *Capture) Parts() (head, tail string, dropped int) {
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

// Thousands formats n with comma separators.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
