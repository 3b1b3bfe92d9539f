// Package envvar expands $VAR, ${VAR} and ${VAR:-default} references in
// configuration values. It imports no package of ours.
package envvar

import (
	"errors"
	"strings"
)

// Lookup reports an environment variable's value and whether it is set,
// as os.LookupEnv does.
type Lookup func(name string) (string, bool)

// Expand replaces $VAR, ${VAR} and ${VAR:-default} in s with values from
// lookup, and $$ with a literal $. An unset variable expands to "". The
// default of ${VAR:-default} is used when VAR is unset or empty, and may
// itself contain references. A $ not followed by a name, { or $ is kept.
//
// The result is never parsed again as YAML, so a variable's value cannot
// add keys or change a value's type: it is always the text of one scalar.
func Expand(s string, lookup Lookup) (string, error) {
	v, _, err := ExpandNamed(s, lookup)
	return v, err
}

// ExpandNamed is Expand that also returns the variables referenced
// without a default that were unset or empty, in order, so a message can
// say "$OPENAI_API_KEY is not set" instead of "required".
func ExpandNamed(s string, lookup Lookup) (string, []string, error) {
	var missing []string
	v, err := expand(s, lookup, &missing)
	return v, missing, err
}

func expand(s string, lookup Lookup, missing *[]string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch next := s[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i += 2
		case next == '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				return "", errors.New("unterminated ${ in value")
			}
			v, err := expandBraced(s[i+2:end], lookup, missing)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = end + 1
		case isNameStart(next):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			b.WriteString(get(s[i+1:j], lookup, missing))
			i = j
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String(), nil
}

// expandBraced expands the inside of ${...}: NAME or NAME:-default.
func expandBraced(inner string, lookup Lookup, missing *[]string) (string, error) {
	name, def, hasDef := strings.Cut(inner, ":-")
	if !validName(name) {
		return "", errors.New("bad variable reference in value (want ${NAME} or ${NAME:-default})")
	}
	if !hasDef {
		return get(name, lookup, missing), nil
	}
	if v, _ := lookup(name); v != "" {
		return v, nil
	}
	return expand(def, lookup, missing)
}

// get looks name up, noting it in missing when it is unset or empty.
func get(name string, lookup Lookup, missing *[]string) string {
	v, _ := lookup(name)
	if v == "" {
		*missing = append(*missing, name)
	}
	return v
}

// closingBrace returns the index of the } matching an opening ${ whose body
// starts at from, allowing nested ${...} in a default, or -1.
func closingBrace(s string, from int) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '$':
			i++ // an escaped $ never opens a brace
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			depth++
			i++
		case s[i] == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func validName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isNameChar(c byte) bool { return isNameStart(c) || ('0' <= c && c <= '9') }
