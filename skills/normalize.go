package skills

import (
	"encoding/base64"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deerflow/deerflow/internal/lazyre"
)

// The static rules do not read a file as written but as a shell or an
// interpreter would run it: an attacker hides "curl … | sh" as c""url,
// cu\rl, $(printf '\x63\x75\x72\x6c'), 'cu'+'rl', a line split with "\",
// CURL, or a base64 or hex blob decoded at run time. normalize undoes
// each of these, so that one rule catches every spelling.

// Limits of the decoding: how deep blobs inside blobs are followed, and
// how many decoded bytes one file may add (a file is at most 1 MiB).
const (
	maxDecodeDepth = 3
	maxDecoded     = 256 << 10
)

var (
	// A backslash-newline joins two lines in a shell, and in Python
	// and C outside strings.
	continuationRe = lazyre.New(`\\\r?\n[ \t]*`)
	// Escapes that spell a character: \x63, \u0063, \143, %63, chr(99),
	// String.fromCharCode(99,117).
	escapeRe   = lazyre.New(`\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\([0-3][0-7]{2})|%([0-9a-fA-F]{2})`)
	chrRe      = lazyre.New(`\bchr\s*\(\s*(\d{1,3})\s*\)`)
	charCodeRe = lazyre.New(`(?i)fromcharcode\s*\(\s*([\d\s,]+)\)`)
	// 'cu'+'rl', "cu" + "rl": string concatenation.
	concatRe = lazyre.New(`["']\s*\+\s*["']`)
	// Shell spellings of nothing or a space: $IFS, ${IFS}, $(), $@, ``.
	nothingRe = lazyre.New(`\$\{?IFS\}?|\$\(\)|\$[@*]|\x60\x60`)
	// Encoded blobs: base64 (standard or URL-safe) and hex.
	base64Re = lazyre.New(`[A-Za-z0-9+/_-]{16,}={0,2}`)
	hexRe    = lazyre.New(`(?:[0-9a-fA-F]{2}){8,}`)
)

// normalize returns content as the static rules read it: lines joined,
// escapes decoded, quotes and backslashes removed, case folded, and the
// text of every encoded blob appended (itself normalized). It also returns
// the decoded blobs, for the model's review.
func normalize(content string) (view string, decoded []string) {
	budget := maxDecoded
	var b strings.Builder
	normalizeInto(&b, content, 0, &budget, &decoded)
	return b.String(), decoded
}

func normalizeInto(b *strings.Builder, s string, depth int, budget *int, decoded *[]string) {
	s = continuationRe().ReplaceAllString(s, "")
	s = unescape(s)
	s = concatRe().ReplaceAllString(s, "")
	s = nothingRe().ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, "IFS") {
			return " "
		}
		return ""
	})
	s = strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(s)
	b.WriteString(strings.ToLower(s))
	if depth >= maxDecodeDepth {
		return
	}
	for _, d := range blobs(s) {
		if *budget < len(d) {
			return
		}
		*budget -= len(d)
		*decoded = append(*decoded, d)
		b.WriteString("\n")
		normalizeInto(b, d, depth+1, budget, decoded)
	}
}

// unescape decodes escapes that spell printable characters; others (a
// \x00, a %d in a format string) stay as they are.
func unescape(s string) string {
	s = escapeRe().ReplaceAllStringFunc(s, func(m string) string {
		var n uint64
		var err error
		switch {
		case strings.HasPrefix(m, `\x`), strings.HasPrefix(m, `\u`):
			n, err = strconv.ParseUint(m[2:], 16, 32)
		case strings.HasPrefix(m, `%`):
			n, err = strconv.ParseUint(m[1:], 16, 32)
		default:
			n, err = strconv.ParseUint(m[1:], 8, 32)
		}
		if err != nil || !printableRune(rune(n)) {
			return m
		}
		return string(rune(n))
	})
	s = chrRe().ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.Atoi(chrRe().FindStringSubmatch(m)[1])
		if err != nil || !printableRune(rune(n)) {
			return m
		}
		return "'" + string(rune(n)) + "'"
	})
	return charCodeRe().ReplaceAllStringFunc(s, func(m string) string {
		var out strings.Builder
		for _, f := range strings.Split(charCodeRe().FindStringSubmatch(m)[1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || !printableRune(rune(n)) {
				return m
			}
			out.WriteRune(rune(n))
		}
		return "('" + out.String() + "')"
	})
}

func printableRune(r rune) bool {
	return r == '\n' || r == '\t' || (r < unicode.MaxRune && unicode.IsPrint(r))
}

// blobs returns the text hidden in s's base64 and hex blobs: only what
// decodes to readable text, so hashes and long identifiers are skipped.
func blobs(s string) []string {
	var out []string
	for _, m := range base64Re().FindAllString(s, -1) {
		if t, ok := decodeBase64(m); ok {
			out = append(out, t)
		}
	}
	for _, m := range hexRe().FindAllString(s, -1) {
		if raw, err := hex.DecodeString(m); err == nil {
			if t, ok := readable(raw); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

func decodeBase64(m string) (string, bool) {
	m = strings.TrimRight(m, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(m, "-_") {
		enc = base64.RawURLEncoding
	}
	// A blob run into the next word: drop the odd characters at the end.
	for cut := 0; cut < 3 && len(m)-cut >= 16; cut++ {
		if raw, err := enc.DecodeString(m[:len(m)-cut]); err == nil {
			return readable(raw)
		}
	}
	return "", false
}

// readable returns raw as text when it is text: UTF-8 (or UTF-16LE, what
// PowerShell's -EncodedCommand takes) that is almost all printable and has
// some letters.
func readable(raw []byte) (string, bool) {
	if utf16 := len(raw) >= 4 && len(raw)%2 == 0; utf16 {
		narrow := make([]byte, 0, len(raw)/2)
		for i := 0; i < len(raw) && utf16; i += 2 {
			utf16 = raw[i+1] == 0
			narrow = append(narrow, raw[i])
		}
		if utf16 {
			raw = narrow
		}
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	s := string(raw)
	var total, bad, letters int
	for _, r := range s {
		total++
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '\r' || printableRune(r):
		default:
			bad++
		}
	}
	if total == 0 || bad*20 > total || letters*3 < total {
		return "", false
	}
	return s, true
}

// scriptExts are the extensions of files something runs.
var scriptExts = map[string]bool{
	".sh": true, ".bash": true, ".zsh": true, ".ksh": true, ".fish": true, ".csh": true,
	".py": true, ".pyw": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true,
	".rb": true, ".pl": true, ".php": true, ".lua": true, ".r": true, ".tcl": true,
	".ps1": true, ".psm1": true, ".bat": true, ".cmd": true, ".vbs": true, ".applescript": true,
	".go": true, ".awk": true, ".exe": true, ".bin": true, ".jar": true, ".command": true,
}

// executable reports whether a skill file is something that runs: under
// scripts/, a script by its extension, with a shebang, or already on disk
// with an execute bit.
func executable(file, content string, execBit bool) bool {
	return execBit || strings.HasPrefix(file, "scripts/") ||
		scriptExts[strings.ToLower(path.Ext(file))] ||
		strings.HasPrefix(strings.TrimLeft(content, "\ufeff \t\r\n"), "#!")
}
