// Package fakelark is a faithful fake of the Lark/Feishu open platform for
// end-to-end tests of code that uses the real SDK
// (github.com/larksuite/oapi-sdk-go/v3 v3.12.0):
//
//	fake := fakelark.New(t)
//	cli := lark.NewClient(fake.AppID, fake.AppSecret, lark.WithOpenBaseUrl(fake.URL))
//	wsc := larkws.NewClient(fake.AppID, fake.AppSecret, larkws.WithEventHandler(d), larkws.WithDomain(fake.URL))
//
// It serves the tenant token endpoint, bot info, the long-connection
// bootstrap and WebSocket (protobuf frames, pings, event pushes, acks and
// re-pushes), and the im/v1 message, reaction, image, file and resource APIs
// with Lark's limits and error codes (see /work/shared/PROTOCOLS.md §3).
// Everything is thread-safe; WaitFor waits on state changes, never polls.
package fakelark

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakestall"
)

// Error codes answered by the fake (Lark's, or Lark-style where Lark has many).
const (
	CodeOK             = 0
	CodeInvalidParam   = 230001   // bad msg_type/content, not a card, not updatable, …
	CodeChatNotFound   = 230002   // the bot is not in the chat / unknown chat
	CodeMsgNotFound    = 230011   // unknown or recalled message
	CodeUserNotFound   = 230013   // bot has no availability to this user
	CodeEditLimit      = 230072   // more than 20 edits of one message
	CodeTokenInvalid   = 99991663 // missing or unknown tenant access token
	CodeRateLimited    = 99991400 // request trigger frequency limit
	CodeChatRateLimit  = 230020   // im: too many messages to one chat (HTTP 400)
	CodeSendRateLimit  = 11232    // im: the app's message sending is rate limited (HTTP 400)
	CodeAppSecretWrong = 10014    // token endpoint: wrong app_id/app_secret
	CodeResourceGone   = 234003   // resource not found in that message
	CodeBadUpload      = 234001   // invalid upload / download parameter
)

// Call is one REST request the fake answered.
type Call struct {
	Method, Path string
	Query        string
	Body         string    // the request body (multipart bodies are summarised)
	Status       int       // HTTP status answered
	Code         int       // Lark "code" answered (0 for raw downloads)
	Time         time.Time // when the fake answered it (for "did the client wait out the reset")
}

type failure struct {
	prefix                   string
	status, code, resetAfter int
	always                   bool // FailAlways: not used up
}

// Server is a running fake. Fields are read-only after New except
// WaitTimeout and AckTimeout, which may be set before use.
type Server struct {
	URL, AppID, AppSecret, BotOpenID string
	WaitTimeout                      time.Duration // WaitFor deadline; default 30 s
	AckTimeout                       time.Duration // re-push an event not acked 200 within this; default 3 s
	MaxRedeliveries                  int           // automatic re-pushes per event; default 3

	srv    *httptest.Server
	mu     sync.Mutex
	change chan struct{} // closed and replaced on every state change
	closed bool
	seq    int

	tokens    map[string]bool
	calls     []Call
	failures  []failure
	conns     map[*wsConn]bool
	connCount int
	devices   map[string]bool
	events    map[string]*event // by event_id
	frames    map[string]string // frame message_id -> event_id
	acks      map[string]int    // frame message_id -> ack code
	ackData   map[string][]byte // frame message_id -> the ack's data (a callback's response)
	queue     []string          // event_ids waiting for a connection
	timers    map[*time.Timer]bool

	chats     map[string]bool   // known chat IDs
	users     map[string]string // open_id -> p2p chat ID
	msgs      map[string]*msg
	order     []string          // message IDs in creation order
	uuids     map[string]string // uuid -> message_id
	uploads   map[string]*upload
	resources map[string][]byte // message_id/file_key -> data
	reactions map[string][]reaction
	stalls    fakestall.Set // by path suffix
	stop      chan struct{} // closed when the fake closes
}

var serverN atomic.Int64

// New starts a fake and closes it when the test ends. AppID is unique per
// Server because the SDK's token cache is process-global.
func New(t testing.TB) *Server {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	s := &Server{
		AppID:       fmt.Sprintf("cli_test_%d", serverN.Add(1)),
		AppSecret:   hex.EncodeToString(b),
		BotOpenID:   "ou_bot",
		WaitTimeout: 30 * time.Second, AckTimeout: 3 * time.Second, MaxRedeliveries: 3,
		change: make(chan struct{}), tokens: map[string]bool{}, conns: map[*wsConn]bool{},
		devices: map[string]bool{}, events: map[string]*event{}, frames: map[string]string{},
		acks: map[string]int{}, timers: map[*time.Timer]bool{}, chats: map[string]bool{},
		users: map[string]string{}, msgs: map[string]*msg{}, uuids: map[string]string{},
		uploads: map[string]*upload{}, resources: map[string][]byte{}, reactions: map[string][]reaction{},
		stop: make(chan struct{}),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	close(s.stop)
	for tm := range s.timers {
		tm.Stop()
	}
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
	s.srv.Close()
}

// notifyLocked wakes WaitFor callers; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.change)
	s.change = make(chan struct{})
}

func (s *Server) nextLocked() int { s.seq++; return s.seq }

// WaitFor blocks until cond() is true (re-checked on every state change) or
// WaitTimeout passes. cond may call the Server's accessors.
func (s *Server) WaitFor(cond func() bool) bool {
	timeout := s.WaitTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.change
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return cond()
		}
	}
}

// Calls returns every REST request answered so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// FailNext makes the next request whose path starts with pathPrefix fail with
// httpStatus and code (99991400 gets Lark's rate-limit message), plus the
// headers x-ogw-ratelimit-limit and x-ogw-ratelimit-reset (seconds).
func (s *Server) FailNext(pathPrefix string, httpStatus, code, resetSeconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{pathPrefix, httpStatus, code, resetSeconds, false})
}

// FailAlways makes every request whose path starts with pathPrefix fail as
// FailNext describes (after the failures queued before it), until
// ClearFailures: a Lark that keeps refusing for longer than any client
// retries.
func (s *Server) FailAlways(pathPrefix string, httpStatus, code, resetSeconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{pathPrefix, httpStatus, code, resetSeconds, true})
}

// ClearFailures drops the failures queued or set with FailAlways for
// exactly pathPrefix. It returns how many queued failures were left unused.
func (s *Server) ClearFailures(pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	kept := s.failures[:0]
	for _, f := range s.failures {
		switch {
		case f.prefix != pathPrefix:
			kept = append(kept, f)
		case !f.always:
			n++
		}
	}
	s.failures = kept
	return n
}

// InvalidateTokens forgets every issued tenant token. Requests then get
// 99991663; SDK v3.12.0 retries once with its cached token and does not
// refetch it (RUN-verified), so the caller sees the error.
func (s *Server) InvalidateTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]bool{}
}

// reply is the response being built for one request.
type reply struct {
	w      http.ResponseWriter
	status int
	code   int
	at     time.Time // when the answer was decided, before it was written
}

// json writes v with Lark's JSON content type; code is recorded in Calls.
func (r *reply) json(status, code int, v any) {
	r.status, r.code, r.at = status, code, time.Now()
	r.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	r.w.WriteHeader(status)
	_ = json.NewEncoder(r.w).Encode(v)
}

// ok answers {"code":0,"msg":"success","data":data}.
func (r *reply) ok(data any) {
	if data == nil {
		data = struct{}{}
	}
	r.json(http.StatusOK, 0, map[string]any{"code": 0, "msg": "success", "data": data})
}

// fail answers a Lark error with HTTP 400 (as Lark does for business errors).
func (r *reply) fail(code int, msg string) {
	r.json(http.StatusBadRequest, code, map[string]any{"code": code, "msg": msg})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ws" {
		s.serveWS(w, r)
		return
	}
	var body []byte
	var summary string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 64<<20))
		summary = fmt.Sprintf("<%s, %d bytes>", r.Header.Get("Content-Type"), len(body))
	} else {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
		summary = string(body)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if s.hold(r) { // after the body is read: only then does r's context see the client go
		return
	}
	rep := &reply{w: w}
	defer func() {
		s.mu.Lock()
		at := rep.at
		if at.IsZero() { // a raw download
			at = time.Now()
		}
		s.calls = append(s.calls, Call{r.Method, r.URL.Path, r.URL.RawQuery, summary, rep.status, rep.code, at})
		s.notifyLocked()
		s.mu.Unlock()
	}()
	if s.injectedFailure(rep, r.URL.Path) {
		return
	}
	switch r.URL.Path {
	case "/open-apis/auth/v3/tenant_access_token/internal":
		s.tokenEndpoint(rep, body)
		return
	case "/callback/ws/endpoint":
		s.wsEndpoint(rep, body)
		return
	}
	if !s.authorized(r) {
		rep.fail(CodeTokenInvalid, "Invalid access token for authorization. Please make a request with token attached.")
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/open-apis/bot/v3/info" {
		rep.json(http.StatusOK, 0, map[string]any{"code": 0, "msg": "ok", "bot": map[string]any{
			"activate_status": 2, "app_name": "deerflow", "avatar_url": "", "ip_white_list": []string{}, "open_id": s.BotOpenID}})
		return
	}
	if strings.HasPrefix(r.URL.Path, "/open-apis/im/v1/") {
		s.serveIM(rep, r, body)
		return
	}
	rep.json(http.StatusNotFound, 404, map[string]any{"code": 404, "msg": "404 page not found"})
}

func (s *Server) injectedFailure(rep *reply, path string) bool {
	s.mu.Lock()
	var f *failure
	for i := range s.failures {
		if strings.HasPrefix(path, s.failures[i].prefix) {
			ff := s.failures[i]
			f = &ff
			if !ff.always {
				s.failures = append(s.failures[:i], s.failures[i+1:]...)
			}
			break
		}
	}
	s.mu.Unlock()
	if f == nil {
		return false
	}
	msg := "injected failure"
	switch f.code {
	case CodeRateLimited:
		msg = "request trigger frequency limit"
	case CodeChatRateLimit:
		msg = "The chat has reached its message rate limit. ext=chat rate limit"
	case CodeSendRateLimit:
		msg = "create message trigger rate limit"
	}
	rep.w.Header().Set("x-ogw-ratelimit-limit", "50")
	rep.w.Header().Set("x-ogw-ratelimit-reset", strconv.Itoa(f.resetAfter))
	rep.json(f.status, f.code, map[string]any{"code": f.code, "msg": msg})
	return true
}

func (s *Server) tokenEndpoint(rep *reply, body []byte) {
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if json.Unmarshal(body, &req) != nil || req.AppID != s.AppID || req.AppSecret != s.AppSecret {
		rep.fail(CodeAppSecretWrong, "app secret invalid")
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := "t-" + hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = true
	s.mu.Unlock()
	rep.json(http.StatusOK, 0, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": 7200})
}

func (s *Server) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	return ok && s.tokens[tok]
}

// Tokens returns how many tenant tokens were issued (the SDK caches one).
func (s *Server) Tokens() int {
	n := 0
	for _, c := range s.Calls() {
		if c.Path == "/open-apis/auth/v3/tenant_access_token/internal" && c.Code == 0 {
			n++
		}
	}
	return n
}
