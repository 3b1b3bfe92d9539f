package faketelegram

import (
	"io"
	"net/http"
)

// stall is a method whose calls hang (see Stall).
type stall struct{ began, ended chan string }

// Stall makes every later call of method (e.g. "getFile") hang,
// unanswered and unrecorded, until the client gives up on it (the
// request's context ends) or the test ends: a Bot API that does not
// answer. began receives each such call's method as it arrives, ended as
// the client gives it up; both hold up to 64 calls.
func (s *Server) Stall(method string) (began, ended <-chan string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &stall{began: make(chan string, 64), ended: make(chan string, 64)}
	s.stalls[method] = st
	return st.began, st.ended
}

// hold hangs r when method is stalled, and reports whether it did.
func (s *Server) hold(method string, r *http.Request) bool {
	s.mu.Lock()
	st := s.stalls[method]
	s.mu.Unlock()
	if st == nil {
		return false
	}
	// r's context sees the client go only once the body has been read
	// to its end (a form parser may stop short of it).
	_, _ = io.Copy(io.Discard, r.Body)
	send(st.began, method)
	select {
	case <-r.Context().Done():
		send(st.ended, method)
	case <-s.done:
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
