// Package api is the HTTP API under http.listen. It speaks LangGraph
// Server's protocol (assistants, threads, runs, and a run's stream as
// Server-Sent Events), so LangGraph's SDKs and DeerFlow's web UI work with
// base URL http://host:port/api; lgwire holds the wire shapes. It runs the
// same agent as the chat channels, one run per thread at a time. Every
// route needs the token http.api_token (as "Authorization: Bearer <t>" or
// "X-Api-Key: <t>"); without one the API is off and says so. Errors are
// {"detail": "…"}, as FastAPI's.
//
// Routes (JSON unless said otherwise):
//
//	POST   /api/assistants/search                     the assistants: lead_agent and each named agent
//	GET    /api/assistants/{id}                       one; /graph, /schemas, /subgraphs
//	POST   /api/threads                               create a thread (thread_id, if_exists, metadata)
//	POST   /api/threads/search                        find threads (metadata, ids, status, sort, select)
//	GET    /api/threads/{id}                          a thread with its values
//	PATCH  /api/threads/{id}                          merge its metadata
//	DELETE /api/threads/{id}                          delete it
//	POST   /api/threads/{id}/copy                     copy it
//	GET    /api/threads/{id}/state                    its state; POST updates values (title)
//	GET    /api/threads/{id}/history                  its states (POST with a body too)
//	POST   /api/threads/{id}/runs[/stream|/wait]      start a run [and stream it (SSE) | answer its final values]
//	GET    /api/threads/{id}/runs                     the thread's runs
//	GET    /api/threads/{id}/runs/{run}               one run; DELETE deletes a finished one
//	POST   /api/threads/{id}/runs/{run}/cancel        cancel it (wait, action interrupt|rollback)
//	GET    /api/threads/{id}/runs/{run}/join          wait for it and answer the thread's values
//	GET    /api/threads/{id}/runs/{run}/stream        stream it (Last-Event-ID resumes)
//	POST   /api/runs, /api/runs/stream, /api/runs/wait  the same on a new thread
//	GET    /api/threads/{id}/files/{name}             a file from the thread's outputs
//	GET    /api/agents                                the named agents
//	GET|POST /api/threads/{id}/schedules, DELETE …/schedules/{sid}   scheduled tasks (schedules.go)
//
// It imports agent, runner, scheduler, store and tools; never bus or the
// channels.
package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/scheduler"
	"github.com/deerflow/deerflow/store"
)

// Options configures a Server. Zero numbers take the documented defaults.
type Options struct {
	// Token is http.api_token. Empty: the API is off, and every route
	// says so.
	Token string
	Store *store.Store // required
	Agent *agent.Agent // required
	// Runner runs the API's runs (origin api); required. New registers
	// the API's handler with it.
	Runner *runner.Runner
	// Files finds a file in a thread's outputs by name (checked like a
	// presented file); nil: the files route finds nothing.
	Files func(threadID, name string) (event.File, error)
	// RemoveFiles deletes a thread's files on disk (workspace, uploads,
	// outputs) when the thread is deleted; nil: none are removed.
	RemoveFiles func(threadID string) error
	// BodyTimeout bounds reading a request's body (0 → 30 s): a client
	// that sends its headers and then trickles or stalls the body is
	// answered 408 and cannot hold the request open.
	BodyTimeout time.Duration
	// Heartbeat is how often an idle stream gets a comment (0 → 15 s).
	Heartbeat time.Duration
	// MaxBody bounds a request body (0 → 1 MiB); MaxInput a run's input
	// message (0 → 100,000 characters).
	MaxBody  int64
	MaxInput int
	// Keep is how long a finished run's events stay available (0 → 1 h);
	// its status stays readable from the store after that.
	Keep time.Duration
	// Schedules serves the schedule routes; nil: they answer that
	// scheduled tasks are off.
	Schedules *scheduler.Scheduler
	// Agents lists the named agents (GET /api/agents) and Persona gives
	// a run the one it names; nil: only the built-in agent.
	Agents  func() []lgwire.Agent
	Persona func(name string) (*agent.Persona, bool)
	// Prepare, when set, adjusts each run's input before it starts (the
	// tools plan mode offers).
	Prepare func(in *agent.Input)
	// Routes, when set, adds more routes under /api (DeerFlow's gateway
	// routes); they are served behind the same token check.
	Routes func(mux *http.ServeMux)
	// Uploads says which requests carry files (the gateway's uploads):
	// their bodies may be MaxUpload bytes and take 10 minutes.
	Uploads   func(r *http.Request) bool
	MaxUpload int64
	// UploadsNote is the note telling the model of the files a run's
	// message says it came with (virtual paths, which it checks are the
	// thread's uploads), "" for none; nil: the model is not told.
	UploadsNote func(threadID string, paths []string) string
	// CORSOrigins are the browser origins allowed to call the API
	// (http.cors_origins; "*" any); empty: none.
	CORSOrigins []string
	// TrustLoopback lets requests from this machine in without the token
	// (http.trust_loopback): for a web UI whose server proxies to the API
	// and cannot add a token, such as DeerFlow's.
	TrustLoopback bool
	Logger        *slog.Logger
	Now           func() time.Time
}

// Server serves the API. It is safe for concurrent use.
type Server struct {
	o   Options
	log *slog.Logger
	mux *http.ServeMux

	mu      sync.Mutex
	clients map[string]int // run id → stream clients watching it
	closing chan struct{}  // closed by Close: streams end
}

// New returns a Server.
func New(o Options) (*Server, error) {
	if o.Store == nil || o.Agent == nil || o.Runner == nil {
		return nil, errors.New("api: store, agent and runner are required")
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.MaxInput <= 0 {
		o.MaxInput = 100_000
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.Keep <= 0 {
		o.Keep = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{
		o: o, log: o.Logger,
		clients: map[string]int{}, closing: make(chan struct{}),
	}
	if o.Token != "" { // off: its stored runs wait for a configuration that serves them
		o.Runner.Handle(runner.OriginAPI, s.handler())
	}
	s.mux = http.NewServeMux()
	s.assistantRoutes()
	s.threadRoutes()
	s.runRoutes()
	s.mux.HandleFunc("GET /api/threads/{id}/files/{name}", s.file)
	s.scheduleRoutes()
	if o.Routes != nil {
		o.Routes(s.mux)
	}
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "There is no such API route: "+r.Method+" "+r.URL.Path+".")
	})
	return s, nil
}

// Enabled reports whether the API is on (a token is configured).
func (s *Server) Enabled() bool { return s.o.Token != "" }

// ServeHTTP serves the /api/ routes, after the CORS and token checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cors(w, r) {
		return
	}
	if s.o.Token == "" {
		fail(w, http.StatusServiceUnavailable, "The HTTP API is off: set http.api_token in the configuration to turn it on.")
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="deerflow"`)
		fail(w, http.StatusUnauthorized, "Send the API token as \"Authorization: Bearer <http.api_token>\" or \"X-Api-Key: <http.api_token>\".")
		return
	}
	limit, within := s.o.MaxBody, s.o.BodyTimeout
	if s.o.Uploads != nil && s.o.Uploads(r) {
		limit, within = s.o.MaxUpload, 10*time.Minute
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = newDeadlineBody(w, r.Body, time.Now().Add(within))
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	s.mux.ServeHTTP(w, r)
}

// cors adds the CORS headers for an allowed origin and answers a
// preflight itself (true: answered).
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || !slices.ContainsFunc(s.o.CORSOrigins, func(o string) bool { return o == "*" || strings.EqualFold(o, origin) }) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Content-Location, Location, Retry-After")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

func (s *Server) authorized(r *http.Request) bool {
	if s.o.TrustLoopback && fromLoopback(r) {
		return true
	}
	token := strings.TrimSpace(r.Header.Get("X-Api-Key"))
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		token = strings.TrimSpace(t)
	}
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.o.Token)) == 1
}

// Close ends the streams: each sends what its run's journal keeps, then
// ends. The runs themselves are the runner's (it stops them at shutdown;
// the waiting ones stay stored and run after a restart).
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
}

// apiError is the body of every error response, as FastAPI's.
type apiError struct {
	Detail string `json:"detail"`
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, apiError{Detail: msg})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// decode reads a JSON request body into v; an empty body leaves v as is.
// It answers the error itself and reports whether to go on.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(r.Body).Decode(v)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil || errors.Is(err, io.EOF):
		// The body is in: lift its deadline (see deadlineBody) even if
		// the decoder stopped short of its end.
		http.NewResponseController(w).SetReadDeadline(time.Time{})
		return true
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, "The request body is larger than the limit of "+sizeText(tooBig.Limit)+".")
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		fail(w, http.StatusRequestTimeout, "The request body did not arrive in time.")
	default:
		fail(w, http.StatusUnprocessableEntity, "The request body is not valid JSON: "+err.Error()+".")
	}
	return false
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// fromLoopback reports whether r came from this machine.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip, perr := netip.ParseAddr(host)
	return err == nil && perr == nil && ip.Unmap().IsLoopback()
}
