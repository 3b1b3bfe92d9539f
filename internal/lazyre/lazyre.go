// Package lazyre compiles a regular expression the first time it is
// used, not while the program starts: package-level regexps are compiled
// by every process that links the package, most of which (a serve that
// never writes a research report or runs `deerflow init`) never use them.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr once, on its first call,
// and returns it; it panics there if expr is not valid (as
// regexp.MustCompile does).
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
