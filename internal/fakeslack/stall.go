package fakeslack

import "net/http"

// Stall makes every later call of method hang, unanswered and unrecorded,
// until the client gives up on it (the request's context ends) or the fake
// closes: a Slack that does not answer (see fakestall.Set.Add).
func (s *Server) Stall(method string) (began, ended <-chan string) { return s.stalls.Add(method) }

// hold hangs r when its method is stalled, and reports whether it did.
func (s *Server) hold(method string, r *http.Request) bool {
	return s.stalls.Hold(r, method, func(k string) bool { return k == method }, true, s.stop)
}
