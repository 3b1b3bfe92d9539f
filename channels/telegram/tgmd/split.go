package tgmd

import (
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Atom kinds of the split tokenizer.
const (
	splitText  = iota // one visible character: a rune or an entity
	splitOpen         // an opening tag (pushed on the tag stack)
	splitClose        // a closing tag
	splitVoid         // a self-closing tag (no effect on the stack)
)

// splitAtom is an indivisible piece of Telegram HTML. It holds no pointers,
// so a slice of them is cheap for the garbage collector.
type splitAtom struct {
	start, end int   // byte range in the input
	r          rune  // the character (text only; 0 for multi-rune entities)
	kind       uint8 // splitText, splitOpen, ...
	w          uint8 // visible width in UTF-16 code units (text only)
	ws         byte  // ' ' or '\n' for whitespace text, else 0
	nameLen    uint8 // length of the tag name (tags only)
}

// name returns the tag name of a tag atom.
func (a *splitAtom) name(s string) string {
	off := a.start + 1
	if a.kind == splitClose {
		off++
	}
	return s[off : off+int(a.nameLen)]
}

// splitTag is an element of a persistent (immutable) stack of open tags.
type splitTag struct {
	name string
	raw  string // the opening tag as written, attributes included
	up   *splitTag
}

// VisibleLen returns the length of the text Telegram shows for html, in
// UTF-16 code units: tags do not count and an entity such as &lt; counts as
// the character it stands for.
func VisibleLen(html string) int {
	n := 0
	splitTokenize(html, func(a splitAtom) { n += int(a.w) })
	return n
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// PlainText is the visible text of rendered HTML: what a client shows
// when the HTML is sent as plain text.
func PlainText(s string) string {
	return html.UnescapeString(tagRE.ReplaceAllString(s, ""))
}

// SplitHTML splits Telegram HTML (as produced by RenderHTML) into chunks
// whose visible length (see VisibleLen) is at most limit UTF-16 code units.
// It prefers to split at a blank line, then a line break, then a space, and
// otherwise splits between characters; never inside a tag, an entity or a
// surrogate pair. Tags open at a split are closed at the end of the chunk and
// reopened, with their attributes, at the start of the next one, so each
// chunk is valid on its own and a code block stays a code block. Whitespace
// at split points is dropped and blank chunks are never returned. Input that
// fits is returned unchanged as a single chunk. A limit below 2 is treated
// as 2. Invalid UTF-8 is replaced with U+FFFD.
func SplitHTML(html string, limit int) []string {
	limit = max(limit, 2)
	html = strings.ToValidUTF8(html, "\uFFFD")
	total, count := 0, 0
	blank := true
	splitTokenize(html, func(a splitAtom) {
		count++
		total += int(a.w)
		if blank && a.kind == splitText && a.ws == 0 && !splitIsSpace(a.r) {
			blank = false
		}
	})
	if blank {
		return nil
	}
	if total <= limit {
		return []string{html}
	}
	atoms := make([]splitAtom, 0, count)
	splitTokenize(html, func(a splitAtom) { atoms = append(atoms, a) })
	var out []string
	start := 0
	var stack *splitTag
	for start < len(atoms) {
		end, endStack, next, nextStack := splitScan(html, atoms, start, stack, limit)
		if c, ok := splitEmit(html, atoms, start, stack, end, endStack); ok {
			out = append(out, c)
		}
		start, stack = next, nextStack
	}
	return out
}

// SplitText splits plain text into chunks of at most limit UTF-16 code units
// with the same preferences as SplitHTML. Invalid UTF-8 is replaced with
// U+FFFD.
func SplitText(text string, limit int) []string {
	chunks := SplitHTML(mdEscape(text), limit)
	for i, c := range chunks {
		chunks[i] = html.UnescapeString(c)
	}
	return chunks
}

const (
	splitPara = iota
	splitLine
	splitSpace
)

type splitCand struct {
	ok                  bool
	end, next           int
	endStack, nextStack *splitTag
	off                 int // visible length of the chunk if split here
}

// splitScan finds where the chunk starting at atom start (with stack open)
// ends: the chunk is atoms[start:end] (open tags endStack at its end) and the
// next chunk starts at next (open tags nextStack).
func splitScan(s string, atoms []splitAtom, start int, stack *splitTag, limit int) (int, *splitTag, int, *splitTag) {
	cur := 0
	lastVis := -1 // last visible non-space atom in this chunk
	var lastVisStack *splitTag
	lastVisOff := 0
	var cands [3]splitCand
	prevNL := false
	for i := start; i < len(atoms); i++ {
		a := &atoms[i]
		switch a.kind {
		case splitOpen:
			stack = &splitTag{name: a.name(s), raw: s[a.start:a.end], up: stack}
			continue
		case splitClose:
			stack = splitPop(stack, a.name(s))
			continue
		case splitVoid:
			continue
		}
		if a.ws != 0 {
			class := splitSpace
			if a.ws == '\n' {
				class = splitLine
				if prevNL {
					class = splitPara
				}
			}
			if lastVis >= 0 {
				cands[class] = splitCand{ok: true, end: lastVis + 1, endStack: lastVisStack,
					next: i + 1, nextStack: stack, off: lastVisOff}
			}
			prevNL = a.ws == '\n'
		} else {
			prevNL = false
		}
		if cur+int(a.w) > limit {
			for _, c := range cands {
				if c.ok && c.off >= limit/2 {
					return c.end, c.endStack, c.next, c.nextStack
				}
			}
			if cur == 0 { // a single character wider than the limit
				return i + 1, stack, i + 1, stack
			}
			k := splitHard(atoms, start, i)
			return k, stack, k, stack
		}
		cur += int(a.w)
		if a.ws == 0 {
			lastVis, lastVisStack, lastVisOff = i, stack, cur
		}
	}
	return len(atoms), stack, len(atoms), stack
}

// splitHard is where a chunk without a good break ends: before atom i,
// moved back (a little) so as not to cut a grapheme cluster.
func splitHard(atoms []splitAtom, start, i int) int {
	k := i
	for back := 0; back < 16 && k-1 > start && atoms[k-1].kind == splitText && splitJoined(atoms, k); back++ {
		k--
	}
	if splitJoined(atoms, k) || atoms[k-1].kind != splitText {
		k = i
	}
	return k
}

// splitJoined reports whether splitting before atoms[k] would break a
// grapheme cluster (combining marks, joiners, variation selectors).
func splitJoined(atoms []splitAtom, k int) bool {
	if k <= 0 || k >= len(atoms) || atoms[k].kind != splitText {
		return false
	}
	r := atoms[k].r
	if r == 0x200D || r >= 0xFE00 && r <= 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF ||
		r >= 0xE0020 && r <= 0xE007F || unicode.In(r, unicode.Mn, unicode.Me) {
		return true
	}
	return atoms[k-1].kind == splitText && atoms[k-1].r == 0x200D
}

// splitPop closes name: it pops the stack down to and including the nearest
// tag of that name; a stray closing tag leaves the stack as is.
func splitPop(stack *splitTag, name string) *splitTag {
	for t := stack; t != nil; t = t.up {
		if strings.EqualFold(t.name, name) {
			return t.up
		}
	}
	return stack
}

// splitEmit builds the chunk atoms[start:end], reopening the tags in open and
// closing those in endStack. It drops tags that would be empty at the edges
// and reports false for a chunk with no visible non-space text.
func splitEmit(s string, atoms []splitAtom, start int, open *splitTag, end int, endStack *splitTag) (string, bool) {
	for end > start && atoms[end-1].kind == splitOpen && endStack != nil {
		end--
		endStack = endStack.up
	}
	for start < end && atoms[start].kind == splitClose && open != nil && strings.EqualFold(open.name, atoms[start].name(s)) {
		start++
		open = open.up
	}
	visible := false
	for i := start; i < end; i++ {
		a := &atoms[i]
		if a.kind == splitText && a.ws == 0 && !splitIsSpace(a.r) {
			visible = true
			break
		}
	}
	if !visible {
		return "", false
	}
	var b strings.Builder
	var reopen []string
	for t := open; t != nil; t = t.up {
		reopen = append(reopen, t.raw)
	}
	for i := len(reopen) - 1; i >= 0; i-- {
		b.WriteString(reopen[i])
	}
	b.WriteString(s[atoms[start].start:atoms[end-1].end])
	for t := endStack; t != nil; t = t.up {
		b.WriteString("</" + t.name + ">")
	}
	return b.String(), true
}

// splitIsSpace reports whether r is whitespace for the purpose of dropping
// blank chunks (Telegram rejects messages that are empty after trimming).
func splitIsSpace(r rune) bool {
	return r == ' ' || r == '\n' || unicode.IsSpace(r)
}

// splitTokenize cuts s into atoms and calls emit for each. Malformed markup
// is treated as text: a '<' that does not start a tag and a '&' that does
// not start a known entity are single visible characters.
func splitTokenize(s string, emit func(splitAtom)) {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '<' {
			if a, ok := splitTagAt(s, i); ok {
				emit(a)
				i = a.end
				continue
			}
		}
		if c == '&' {
			if a, ok := splitEntityAt(s, i); ok {
				emit(a)
				i = a.end
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		a := splitAtom{start: i, end: i + size, kind: splitText, w: 1, r: r}
		if r >= 0x10000 {
			a.w = 2
		}
		if c == ' ' || c == '\n' {
			a.ws = c
		}
		emit(a)
		i += size
	}
}

func splitTagAt(s string, i int) (splitAtom, bool) {
	j := i + 1
	closing := j < len(s) && s[j] == '/'
	if closing {
		j++
	}
	ns := j
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '-') {
		j++
	}
	if j == ns {
		return splitAtom{}, false
	}
	if j-ns > 255 {
		return splitAtom{}, false
	}
	nameLen := uint8(j - ns)
	var quote byte
	for ; j < len(s); j++ {
		switch c := s[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			return splitAtom{}, false
		case c == '>':
			a := splitAtom{start: i, end: j + 1, kind: splitOpen, nameLen: nameLen}
			if closing {
				a.kind = splitClose
			} else if s[j-1] == '/' {
				a.kind = splitVoid
			}
			return a, true
		}
	}
	return splitAtom{}, false
}

// numericRef reports whether ref (between "&#" and ";") is all decimal
// digits, or x and all hex digits.
func numericRef(ref string) bool {
	digits := "0123456789"
	if len(ref) > 0 && (ref[0] == 'x' || ref[0] == 'X') {
		ref, digits = ref[1:], "0123456789abcdefABCDEF"
	}
	if ref == "" {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if !strings.ContainsRune(digits, rune(ref[i])) {
			return false
		}
	}
	return true
}

func splitEntityAt(s string, i int) (splitAtom, bool) {
	j := i + 1
	for j < len(s) && j-i <= 40 && s[j] != ';' {
		c := s[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '#') {
			return splitAtom{}, false
		}
		j++
	}
	if j >= len(s) || s[j] != ';' || j == i+1 {
		return splitAtom{}, false
	}
	ent := s[i : j+1]
	if ent[1] == '#' && !numericRef(ent[2:len(ent)-1]) {
		// "&#00A000;" is not one reference: UnescapeString would read
		// "&#00" and leave the rest as text, one atom of many characters.
		return splitAtom{}, false
	}
	dec := html.UnescapeString(ent)
	if dec == ent || len(dec) > 1 && strings.HasSuffix(dec, ";") {
		// Unchanged, or read as a legacy entity without its ";" followed
		// by text ("&copy0;" is "©0;"): not one reference, and as one atom
		// it would be wider than a chunk may be.
		return splitAtom{}, false
	}
	w := 0
	for _, r := range dec {
		w++
		if r >= 0x10000 {
			w++
		}
	}
	a := splitAtom{start: i, end: j + 1, kind: splitText, w: uint8(min(w, 255))}
	if r, size := utf8.DecodeRuneInString(dec); size == len(dec) {
		a.r = r
	}
	return a, true
}
