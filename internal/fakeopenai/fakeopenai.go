// Package fakeopenai is an OpenAI-compatible chat completions server for
// tests. It streams scripted answers in the real wire format (server-sent
// events, tool-call deltas, the usage chunk, [DONE]), records what it was
// sent, and refuses malformed conversations the way the real API does, so a
// test fails here rather than in production.
//
// Typical use:
//
//	s := fakeopenai.New(t)
//	s.Script(
//		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":"ls"}`}}},
//		fakeopenai.Turn{Text: "Done."},
//	)
//	model := llm.New(llm.Options{BaseURL: s.URL, Model: "fake-model"})
//	... run the agent ...
//	reqs := s.Requests() // what the model was sent
//
// For /stop tests, hold a reply (Turn.Hold, HoldAfter), wait for it with
// WaitRequests, cancel, then WaitCancelled.
//
// It must not import any package of ours (in particular not llm), so that
// every package's tests can use it.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is a fake OpenAI endpoint. Its zero value is not usable; call New.
type Server struct {
	URL string // base URL ending in /v1, for the client's BaseURL

	// Key, when set, is the only API key accepted ("Authorization: Bearer
	// <Key>"); others get 401 invalid_api_key. Set it before the first request.
	Key string
	// Models, when set, are the only models known; others get 404
	// model_not_found. Set it before the first request.
	Models []string
	// KeepRequests, when > 0, bounds Requests to the latest ones, for long
	// benchmarks. Set it before the first request.
	KeepRequests int

	srv  *httptest.Server
	done chan struct{} // closed when the test ends; releases held replies

	mu        sync.Mutex
	script    []Turn
	handle    func(Request) Turn
	reqs      []Request
	total     int // requests received, including ones no longer kept
	inFlight  int
	cancelled int
	changed   chan struct{} // closed and replaced on every change of the counters above
	audio     audioState    // POST /v1/audio/transcriptions (audio.go)
}

// New starts a Server on 127.0.0.1, shut down when the test ends.
func New(t testing.TB) *Server {
	s := &Server{done: make(chan struct{}), changed: make(chan struct{})}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// Script queues turns; each chat completion request takes the next one.
func (s *Server) Script(turns ...Turn) {
	s.mu.Lock()
	s.script = append(s.script, turns...)
	s.mu.Unlock()
}

// Handle sets a function deciding the reply to each request once the
// scripted turns are used up. It may be called concurrently.
func (s *Server) Handle(f func(Request) Turn) {
	s.mu.Lock()
	s.handle = f
	s.mu.Unlock()
}

// Requests returns the chat completion requests received so far (the
// latest KeepRequests, if set), rejected ones included, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// InFlight is the number of requests being answered right now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Cancelled is the number of requests whose client went away before the
// reply was complete. A disconnect is noticed while a reply waits (Hold,
// Delay) or when a write fails; use Hold to observe it reliably.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// WaitRequests blocks until at least n requests have arrived and returns
// them. A request counts as arrived before its reply starts, so this is how
// a test knows a held or slow reply is under way.
func (s *Server) WaitRequests(n int) []Request {
	s.wait(func() bool { return s.total >= n })
	return s.Requests()
}

// WaitCancelled blocks until at least n requests have seen their client go
// away mid-reply.
func (s *Server) WaitCancelled(n int) {
	s.wait(func() bool { return s.cancelled >= n })
}

// WaitIdle blocks until no request is being answered.
func (s *Server) WaitIdle() {
	s.wait(func() bool { return s.inFlight == 0 })
}

// wait blocks until cond, evaluated under s.mu, holds or the test ended.
func (s *Server) wait(cond func() bool) {
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-s.done:
			return
		}
	}
}

// notify wakes waiters; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		if e, status := s.authorize(r); status != 0 {
			writeError(w, status, "", e)
			return
		}
		s.listModels(w)
	case r.URL.Path == "/v1/audio/transcriptions" && r.Method == http.MethodPost:
		s.transcribe(w, r)
	case r.URL.Path != "/v1/chat/completions":
		writeError(w, http.StatusNotFound, "", apiError{
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
			Type:    "invalid_request_error",
		})
	case r.Method != http.MethodPost:
		writeError(w, http.StatusMethodNotAllowed, "", apiError{
			Message: fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path),
			Type:    "invalid_request_error",
		})
	default:
		s.chat(w, r)
	}
}

// chat answers POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, wire, decodeErr := decode(body)
	req.Header = r.Header.Clone()
	req.Time = time.Now()
	nth := s.begin(req)
	cancelled := false
	defer func() { s.end(cancelled) }()

	if e, status := s.authorize(r); status != 0 {
		writeError(w, status, "", e)
		return
	}
	if decodeErr != nil {
		writeError(w, http.StatusBadRequest, "", apiError{
			Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
			Type:    "invalid_request_error",
		})
		return
	}
	if e := validate(wire); e != nil {
		writeError(w, http.StatusBadRequest, "", *e)
		return
	}
	if len(s.Models) > 0 && !slices.Contains(s.Models, req.Model) {
		writeError(w, http.StatusNotFound, "", modelNotFound(req.Model))
		return
	}
	turn, ok := s.next(req)
	if !ok {
		writeError(w, http.StatusInternalServerError, "", apiError{
			Message: fmt.Sprintf("fakeopenai: no turn scripted for request #%d (model %q, %d messages)", nth, req.Model, len(req.Messages)),
			Type:    "server_error",
		})
		return
	}
	cancelled = !s.reply(w, r, &req, &turn, nth)
}

// begin records req as arrived and in flight; it returns its number.
func (s *Server) begin(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if s.KeepRequests > 0 && len(s.reqs) > s.KeepRequests {
		s.reqs = slices.Delete(s.reqs, 0, len(s.reqs)-s.KeepRequests)
	}
	s.total++
	s.inFlight++
	s.notify()
	return s.total
}

// end records a request as answered, or abandoned by its client.
func (s *Server) end(cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	if cancelled {
		s.cancelled++
	}
	s.notify()
}

func (s *Server) authorize(r *http.Request) (apiError, int) {
	if s.Key == "" {
		return apiError{}, 0
	}
	got := r.Header.Get("Authorization")
	if got == "" {
		return apiError{
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
			Type:    "invalid_request_error",
		}, http.StatusUnauthorized
	}
	if got != "Bearer "+s.Key {
		return apiError{Message: "Incorrect API key provided", Type: "invalid_request_error", Code: "invalid_api_key"}, http.StatusUnauthorized
	}
	return apiError{}, 0
}

// next takes the reply for req: the next scripted turn, else the handler's.
func (s *Server) next(req Request) (Turn, bool) {
	s.mu.Lock()
	if len(s.script) > 0 {
		t := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return t, true
	}
	h := s.handle
	s.mu.Unlock()
	if h == nil {
		return Turn{}, false
	}
	return h(req), true
}

// listModels answers GET /v1/models with Models, or one "fake-model".
func (s *Server) listModels(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	names := s.Models
	if len(names) == 0 {
		names = []string{"fake-model"}
	}
	for _, n := range names {
		list.Data = append(list.Data, model{n, "model", created, "fakeopenai"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}
