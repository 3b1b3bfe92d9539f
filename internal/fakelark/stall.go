package fakelark

import (
	"net/http"
	"strings"
)

// stall is a path whose requests hang (see Stall).
type stall struct{ began, ended chan string }

// Stall makes every later request whose path ends in suffix (such as
// "/reactions") hang, unanswered and unrecorded, until the client gives up
// on it (the request's context ends) or the fake closes: a Lark that does
// not answer. began receives each such request's path as it arrives, ended
// as the client gives it up; both hold up to 64 requests.
func (s *Server) Stall(suffix string) (began, ended <-chan string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &stall{began: make(chan string, 64), ended: make(chan string, 64)}
	s.stalls[suffix] = st
	return st.began, st.ended
}

// hold hangs r when its path is stalled, and reports whether it did.
func (s *Server) hold(r *http.Request) bool {
	var st *stall
	s.mu.Lock()
	for suffix, x := range s.stalls {
		if strings.HasSuffix(r.URL.Path, suffix) {
			st = x
		}
	}
	s.mu.Unlock()
	if st == nil {
		return false
	}
	send(st.began, r.URL.Path)
	select {
	case <-r.Context().Done():
		send(st.ended, r.URL.Path)
	case <-s.stop:
	}
	return true
}

// send sends v unless ch is full.
func send(ch chan string, v string) {
	select {
	case ch <- v:
	default:
	}
}
