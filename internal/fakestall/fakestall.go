// Package fakestall makes a fake platform's endpoints hang like a platform
// that does not answer, so tests can see what a client does when it gives
// up (its context ends) or is shut down meanwhile. The fake servers
// (fakeslack, faketelegram, fakelark) each hold a Set.
package fakestall

import (
	"io"
	"net/http"
	"sync"
)

// Set is the endpoints of one fake that hang. The zero value is ready.
type Set struct {
	mu    sync.Mutex
	byKey map[string]*stall
}

type stall struct{ began, ended chan string }

// Add makes every later request that matches key (how is the fake's
// choice: a method name, a path suffix) hang, unanswered and unrecorded.
// began receives each such request's name as it arrives, ended as the
// client gives it up; both hold up to 64 requests.
func (s *Set) Add(key string) (began, ended <-chan string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = map[string]*stall{}
	}
	st := &stall{began: make(chan string, 64), ended: make(chan string, 64)}
	s.byKey[key] = st
	return st.began, st.ended
}

// Hold hangs r, reported as name, when match accepts one of the keys added,
// until the client gives up on it or stop closes; it reports whether it
// did. r's context sees the client go only once its body has been read to
// the end: with drain, Hold reads what is left of it first (a form parser
// may stop short of the end).
func (s *Set) Hold(r *http.Request, name string, match func(key string) bool, drain bool, stop <-chan struct{}) bool {
	var st *stall
	s.mu.Lock()
	for key, x := range s.byKey {
		if match(key) {
			st = x
		}
	}
	s.mu.Unlock()
	if st == nil {
		return false
	}
	if drain {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	send(st.began, name)
	select {
	case <-r.Context().Done():
		send(st.ended, name)
	case <-stop:
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
