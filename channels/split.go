package channels

import "strings"

// SplitMarkdown cuts Markdown into parts of at most limit bytes, at line
// breaks (paragraph breaks preferred), never inside a character; a code
// fence open at a cut is closed there and reopened, with its language, in
// the next part.
func SplitMarkdown(md string, limit int) []string {
	md = strings.TrimSpace(md)
	if md == "" {
		return nil
	}
	if len(md) <= limit {
		return []string{md}
	}
	var parts []string
	var cur strings.Builder
	fence := "" // the open fence line (``` or ```lang), "" outside code
	flush := func() {
		text := cur.String()
		if fence != "" {
			text += "\n```"
		}
		if strings.TrimSpace(text) != "" {
			parts = append(parts, strings.TrimRight(text, "\n"))
		}
		cur.Reset()
		if fence != "" {
			cur.WriteString(fence + "\n")
		}
	}
	for _, line := range strings.SplitAfter(md, "\n") {
		closeLen := 0
		if fence != "" {
			closeLen = 4
		}
		for len(line) > limit-len(fence)-closeLen-1 {
			// A line longer than a part: cut it on a rune boundary.
			room := limit - cur.Len() - closeLen - 1
			if room < limit/4 {
				flush()
				room = limit - cur.Len() - closeLen - 1
			}
			n := room
			for n > 0 && (line[n]&0xC0) == 0x80 {
				n--
			}
			cur.WriteString(line[:n])
			line = line[n:]
			flush()
		}
		if cur.Len()+len(line)+closeLen > limit {
			flush()
		}
		cur.WriteString(line)
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") {
			if fence == "" {
				fence = t
			} else if t == "```" {
				fence = ""
			}
		}
	}
	last := strings.TrimSpace(cur.String())
	if last != "" && last != strings.TrimSpace(fence) {
		parts = append(parts, strings.TrimRight(cur.String(), "\n"))
	}
	return parts
}
