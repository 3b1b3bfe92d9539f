package fakelark

import (
	"net/http"
	"strings"
)

// Stall makes every later request whose path ends in suffix (such as
// "/reactions") hang, unanswered and unrecorded, until the client gives up
// on it (the request's context ends) or the fake closes: a Lark that does
// not answer (see fakestall.Set.Add). The channels report request paths.
func (s *Server) Stall(suffix string) (began, ended <-chan string) { return s.stalls.Add(suffix) }

// hold hangs r when its path is stalled, and reports whether it did.
func (s *Server) hold(r *http.Request) bool {
	match := func(suffix string) bool { return strings.HasSuffix(r.URL.Path, suffix) }
	return s.stalls.Hold(r, r.URL.Path, match, false, s.stop)
}
