package faketelegram

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// formatText applies parse_mode (or the entities parameter) to a text or
// caption, trims it like the server does and checks its length in UTF-16
// code units. what is "text", "caption" or "draft".
func formatText(text, parseMode, entitiesJSON, what string) (string, []MessageEntity, *apiError) {
	if !utf8.ValidString(text) {
		return "", nil, badRequest("strings must be encoded in UTF-8")
	}
	var ents []MessageEntity
	switch strings.ToLower(parseMode) {
	case "":
		if entitiesJSON != "" && json.Unmarshal([]byte(entitiesJSON), &ents) != nil {
			return "", nil, badRequest("can't parse entities JSON object")
		}
	case "html":
		var err error
		if text, ents, err = parseHTML(text); err != nil {
			return "", nil, badRequest("can't parse entities: %v", err)
		}
	case "markdown", "markdownv2":
		// Not parsed: the fake takes the text verbatim.
	default:
		return "", nil, badRequest("unsupported parse_mode")
	}
	text, ents = trim(text, ents)
	n := utf16Len(text)
	switch {
	case what == "text" && n == 0:
		return "", nil, badRequest("message text is empty")
	case what != "caption" && n > 4096:
		return "", nil, badRequest("message is too long")
	case what == "caption" && n > 1024:
		return "", nil, badRequest("message caption is too long")
	}
	return text, ents, nil
}

// trim drops leading and trailing white space, moving the entities along.
func trim(text string, ents []MessageEntity) (string, []MessageEntity) {
	const space = " \t\r\n"
	left := len(text) - len(strings.TrimLeft(text, space)) // ASCII: bytes are UTF-16 units
	text = strings.Trim(text, space)
	n := utf16Len(text)
	var out []MessageEntity
	for _, e := range ents {
		start, end := max(0, e.Offset-left), min(n, e.Offset+e.Length-left)
		if end > start {
			e.Offset, e.Length = start, end-start
			out = append(out, e)
		}
	}
	return text, out
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

var htmlTags = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "span": "spoiler",
	"tg-spoiler": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
	"tg-emoji": "custom_emoji",
}

type openTag struct {
	name, arg  string
	offset     int // UTF-16
	textStart  int // byte offset in the output
	expandable bool
	language   string // of a <code class="language-x"> directly inside a <pre>
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseHTML turns Bot API HTML into plain text and entities, as tdlib's
// parse_html does, with its error messages.
func parseHTML(text string) (string, []MessageEntity, error) {
	var out strings.Builder
	var stack []openTag
	var ents []MessageEntity
	u16, n := 0, len(text)
	at := func(i int) byte { // NUL past the end, like tdlib's C string
		if i < n {
			return text[i]
		}
		return 0
	}
	for i := 0; i < n; {
		c := text[i]
		if c == '&' {
			if r, next, ok := decodeEntity(text, i); ok {
				out.WriteRune(r)
				u16 += utf16.RuneLen(r)
				i = next
				continue
			}
		}
		if c != '<' {
			r, size := utf8.DecodeRuneInString(text[i:])
			out.WriteString(text[i : i+size])
			u16 += utf16.RuneLen(r)
			i += size
			continue
		}
		begin := i
		i++
		if at(i) != '/' { // a start tag
			for i < n && !isSpace(text[i]) && text[i] != '>' {
				i++
			}
			if i >= n {
				return "", nil, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
			}
			tag := openTag{name: strings.ToLower(text[begin+1 : i]), offset: u16, textStart: out.Len()}
			if _, ok := htmlTags[tag.name]; !ok {
				return "", nil, fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", tag.name, begin)
			}
			for at(i) != '>' {
				for isSpace(at(i)) {
					i++
				}
				if at(i) == '>' {
					break
				}
				if i >= n {
					return "", nil, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
				}
				nameStart := i
				for i < n && !isSpace(text[i]) && text[i] != '=' && text[i] != '>' {
					i++
				}
				attr := strings.ToLower(text[nameStart:i])
				for isSpace(at(i)) {
					i++
				}
				if at(i) != '=' {
					if tag.name == "blockquote" && attr == "expandable" {
						tag.expandable = true
						continue
					}
					if i >= n {
						return "", nil, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
					}
					return "", nil, fmt.Errorf("Expected equal sign in declaration of an attribute of the tag \"%s\" at byte offset %d", tag.name, begin)
				}
				i++
				for isSpace(at(i)) {
					i++
				}
				if i >= n {
					return "", nil, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
				}
				var value strings.Builder
				if q := text[i]; q == '"' || q == '\'' {
					for i++; i < n && text[i] != q; {
						if r, next, ok := decodeEntity(text, i); ok {
							value.WriteRune(r)
							i = next
						} else {
							value.WriteByte(text[i])
							i++
						}
					}
					if i >= n {
						return "", nil, fmt.Errorf("Unclosed start tag at byte offset %d", begin)
					}
					i++
				} else {
					tokenStart := i
					for i < n && (isAlnum(text[i]) || text[i] == '.' || text[i] == '-') {
						i++
					}
					value.WriteString(strings.ToLower(text[tokenStart:i]))
					if c := at(i); !isSpace(c) && c != '>' {
						return "", nil, fmt.Errorf("Unexpected end of name token at byte offset %d", tokenStart)
					}
				}
				v := value.String()
				switch {
				case tag.name == "a" && attr == "href":
					tag.arg = v
				case tag.name == "code" && attr == "class" && strings.HasPrefix(v, "language-"):
					tag.arg = v[len("language-"):]
				case tag.name == "span" && attr == "class" && strings.HasPrefix(v, "tg-"):
					tag.arg = v[len("tg-"):]
				case tag.name == "tg-emoji" && attr == "emoji-id":
					tag.arg = v
				}
			}
			i++
			if tag.name == "span" && tag.arg != "spoiler" {
				return "", nil, fmt.Errorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
			}
			stack = append(stack, tag)
			continue
		}
		// an end tag
		if len(stack) == 0 {
			return "", nil, fmt.Errorf("Unexpected end tag at byte offset %d", begin)
		}
		i++
		for i < n && !isSpace(text[i]) && text[i] != '>' {
			i++
		}
		endName := strings.ToLower(text[begin+2 : i])
		for isSpace(at(i)) {
			i++
		}
		if at(i) != '>' {
			return "", nil, fmt.Errorf("Unclosed end tag at byte offset %d", begin)
		}
		i++
		tag := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if endName != "" && endName != tag.name {
			return "", nil, fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, tag.name, endName)
		}
		e := MessageEntity{Type: htmlTags[tag.name], Offset: tag.offset, Length: u16 - tag.offset}
		switch tag.name {
		case "a":
			e.URL = tag.arg
			if e.URL == "" {
				e.URL = out.String()[tag.textStart:]
			}
		case "code":
			if tag.arg != "" && len(stack) > 0 && stack[len(stack)-1].name == "pre" {
				stack[len(stack)-1].language = tag.arg
				continue
			}
		case "pre":
			e.Language = tag.language
		case "blockquote":
			if tag.expandable {
				e.Type = "expandable_blockquote"
			}
		case "tg-emoji":
			if id, err := strconv.ParseInt(tag.arg, 10, 64); err != nil || id == 0 {
				return "", nil, fmt.Errorf("Invalid custom emoji identifier specified")
			}
			e.CustomEmojiID = tag.arg
		}
		if e.Length > 0 && (e.Type != "text_link" || e.URL != "") {
			ents = append(ents, e)
		}
	}
	if len(stack) > 0 {
		return "", nil, fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	slices.SortStableFunc(ents, func(a, b MessageEntity) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(b.Length, a.Length))
	})
	return out.String(), ents, nil
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// decodeEntity decodes the character reference at text[i] ('&'): &lt;
// &gt; &amp; &quot; and numeric ones, the ';' being optional. Others are
// not references: the '&' is literal text.
func decodeEntity(text string, i int) (rune, int, bool) {
	j := i + 1
	var r rune
	if j < len(text) && text[j] == '#' {
		j++
		hex := j < len(text) && (text[j] == 'x' || text[j] == 'X')
		if hex {
			j++
		}
		start := j
		for j < len(text) && (text[j] >= '0' && text[j] <= '9' || hex && isAlnum(text[j]) && strings.ContainsRune("abcdefABCDEF", rune(text[j]))) {
			j++
		}
		base := 10
		if hex {
			base = 16
		}
		v, err := strconv.ParseUint(text[start:j], base, 32)
		if err != nil || v == 0 || v >= 0x10ffff || j-i >= 10 {
			return 0, 0, false
		}
		r = rune(v)
	} else {
		for j < len(text) && (text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z') {
			j++
		}
		switch text[i+1 : j] {
		case "lt":
			r = '<'
		case "gt":
			r = '>'
		case "amp":
			r = '&'
		case "quot":
			r = '"'
		default:
			return 0, 0, false
		}
	}
	if j < len(text) && text[j] == ';' {
		j++
	}
	return r, j, true
}
