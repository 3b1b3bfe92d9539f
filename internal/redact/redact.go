// Package redact hides credentials inside URLs wherever a URL is printed:
// `deerflow check`, the printable copy of the configuration, every log
// line. A password in the user info (https://user:pass@host) and the
// values of query parameters that carry secrets (key=, api_key=, token=,
// access_token=, sig=, ...) become "***"; the rest of the URL stays, so a
// reader still sees which host and path were meant.
//
// It imports nothing of ours.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces a secret.
const Mask = "***"

// urlRe finds URLs in free text: a scheme, "://", and everything up to
// whitespace, a quote or an angle bracket (how Go errors and logs quote
// them).
var urlRe = regexp.MustCompile("(?i)\\b[a-z][a-z0-9+.-]*://[^\\s\"'<>`]+")

// URLs returns s with the credentials in every URL it contains masked.
// Text without "://" is returned as is, cheaply.
func URLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlRe.ReplaceAllStringFunc(s, url)
}

// url masks the credentials of one URL, by hand rather than through
// net/url, so that an unparsable or partly escaped URL is masked too and
// nothing else in it changes.
func url(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		user, _, hasPass := strings.Cut(authority[:at], ":")
		if !hasPass {
			user = Mask // a lone user name is often a token (https://TOKEN@host)
		} else {
			user += ":" + Mask
		}
		authority = user + authority[at:]
	}
	return scheme + "://" + authority + params(tail)
}

// params masks the values of secret-looking parameters in a URL's path,
// query and fragment (the fragment carries OAuth's access_token=).
func params(tail string) string {
	i := strings.IndexAny(tail, "?#")
	if i < 0 {
		return tail
	}
	var b strings.Builder
	b.WriteString(tail[:i+1])
	for j, part := range splitParams(tail[i+1:]) {
		if j > 0 {
			b.WriteByte(part.sep)
		}
		name, _, ok := strings.Cut(part.text, "=")
		if ok && Secret(name) {
			b.WriteString(name + "=" + Mask)
			continue
		}
		b.WriteString(part.text)
	}
	return b.String()
}

type param struct {
	sep  byte // the separator before it
	text string
}

func splitParams(q string) []param {
	var out []param
	sep := byte(0)
	start := 0
	for i := 0; i < len(q); i++ {
		if c := q[i]; c == '&' || c == ';' || c == '#' || c == '?' {
			out = append(out, param{sep, q[start:i]})
			sep, start = c, i+1
		}
	}
	return append(out, param{sep, q[start:]})
}

// secretNames are parameter names that are secrets whole; secretParts
// make any name containing them one (api_key, access_token, X-Amz-Signature).
var (
	secretNames = []string{"key", "sig", "code", "pass", "pwd", "sid", "session", "auth"}
	secretParts = []string{"token", "key", "secret", "passw", "signature", "credential", "auth", "sig"}
)

// Secret reports whether a query parameter or header of that name holds a
// secret.
func Secret(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range secretNames {
		if n == s {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}
