// Package faketelegram is a fake Telegram Bot API server for end-to-end
// tests of a bot that uses a real client (e.g. go-telegram/bot with
// bot.WithServerURL(s.URL)). It is as strict as the real API where that
// catches bugs: unknown chats, threads and replied-to messages, malformed
// HTML, over-long texts, "message is not modified" and concurrent
// getUpdates are refused with the real error answers.
//
// Typical use:
//
//	s := faketelegram.New(t, "123:secret")
//	b, _ := bot.New(s.Token, bot.WithServerURL(s.URL), ...)
//	go b.Start(ctx)
//	s.PushMessage(faketelegram.Private(ann, "hello"))
//	s.WaitCalls("sendMessage", 1)
//	msgs := s.Messages(ann.ID) // what the bot sent, as last edited
//
// Inbound: Push, PushMessage (helpers Private, Group, ReplyTo, InTopic
// build realistic messages), AddChat, AddTopic, AddFile. Outbound: Calls,
// Messages, Reactions, Commands, Offsets, and WaitCalls / WaitFor to block
// until the bot has acted. FailNext, FailAlways and ClearFailures inject
// error answers.
//
// Deliberate simplifications: parse_mode Markdown and MarkdownV2 are
// accepted but not parsed (the text is taken verbatim); no flood control
// unless injected with FailNext; photos must be PNG, JPEG or GIF, and all
// their sizes serve the uploaded bytes; HTTP URLs as files are refused
// (the fake fetches nothing); webhooks are never delivered. It must not
// import any package of ours, nor a Telegram client.
package faketelegram

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakestall"
)

// Server is a fake Bot API endpoint. Its zero value is not usable; call New.
type Server struct {
	URL   string // for bot.WithServerURL
	Token string // the only token accepted
	Bot   User   // what getMe returns; the sender of the bot's messages

	// WaitTimeout bounds WaitCalls and WaitFor; on expiry they report a
	// test error and return. Default 30s.
	WaitTimeout time.Duration

	t    testing.TB
	srv  *httptest.Server
	done chan struct{} // closed when the test ends

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change
	pushed     chan struct{} // closed and replaced when updates are queued
	calls      []Call
	offsets    []int
	failures   map[string][]Failure
	always     map[string]Failure // FailAlways, by method
	chats      map[int64]*chatState
	updates    []Update // queued, not yet confirmed, by update_id
	nextUpdate int
	allowed    []string // the allowed_updates in force
	poll       *poll    // the getUpdates being held
	webhook    string
	files      map[string]*file // by file_id
	paths      map[string]*file // by file_path
	nFiles     int
	commands   []BotCommand
	callbacks  map[string]bool // callback query IDs pushed and not answered
	stalls     fakestall.Set   // by method
}

// New starts a Server on 127.0.0.1, shut down when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{
		Token:       token,
		Bot:         User{ID: 777000111, IsBot: true, FirstName: "DeerFlow", Username: "deerflow_test_bot"},
		WaitTimeout: 30 * time.Second,
		t:           t,
		done:        make(chan struct{}),
		changed:     make(chan struct{}),
		pushed:      make(chan struct{}),
		failures:    map[string][]Failure{},
		always:      map[string]Failure{},
		chats:       map[int64]*chatState{},
		nextUpdate:  1000,
		files:       map[string]*file{},
		paths:       map[string]*file{},
		callbacks:   map[string]bool{},
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

type apiError struct {
	code       int
	desc       string
	retryAfter int
	migrate    int64
	body       string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

type handler func(s *Server, req *request) (any, *apiError)

// methods maps lower-cased method names (the API ignores case) to the
// documented name and the handler, which runs with s.mu held.
var methods = map[string]struct {
	name string
	h    handler
}{}

func init() {
	for name, h := range map[string]handler{
		"getMe":               (*Server).getMe,
		"getUpdates":          nil, // special: it blocks
		"deleteWebhook":       (*Server).deleteWebhook,
		"setWebhook":          (*Server).setWebhook,
		"getWebhookInfo":      (*Server).getWebhookInfo,
		"sendMessage":         (*Server).sendMessage,
		"editMessageText":     (*Server).editMessageText,
		"deleteMessage":       (*Server).deleteMessage,
		"sendMessageDraft":    (*Server).sendMessageDraft,
		"sendChatAction":      (*Server).sendChatAction,
		"setMessageReaction":  (*Server).setMessageReaction,
		"sendDocument":        (*Server).sendDocument,
		"sendPhoto":           (*Server).sendPhoto,
		"getFile":             (*Server).getFile,
		"setMyCommands":       (*Server).setMyCommands,
		"getMyCommands":       (*Server).getMyCommands,
		"deleteMyCommands":    (*Server).deleteMyCommands,
		"answerCallbackQuery": (*Server).answerCallbackQuery,
	} {
		methods[strings.ToLower(name)] = struct {
			name string
			h    handler
		}{name, h}
	}
}

// ServeHTTP answers /bot<token>/<method> and /file/bot<token>/<path>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		s.download(w, r)
		return
	}
	token, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/bot"), "/")
	if !strings.HasPrefix(r.URL.Path, "/bot") || !ok {
		writeAnswer(w, nil, &apiError{code: 404, desc: "Not Found"})
		return
	}
	req, perr := parseRequest(w, r)
	m, known := methods[strings.ToLower(method)]
	if known {
		method = m.name
	}
	if known && token == s.Token && perr == nil && s.hold(method, r) {
		return // after the body is read: only then does r's context see the client go
	}
	var e *apiError
	switch {
	case token != s.Token:
		e = &apiError{code: 401, desc: "Unauthorized"}
	case !known:
		e = &apiError{code: 404, desc: "Not Found"}
	case perr != nil:
		e = perr
	case m.h == nil:
		s.getUpdates(w, r, req)
		return
	}
	s.mu.Lock()
	var result any
	if e == nil {
		e = s.takeFailure(method)
	}
	if e == nil {
		result, e = m.h(s, req)
	}
	s.record(method, req, e)
	s.mu.Unlock()
	writeAnswer(w, result, e)
}

// writeAnswer writes the {"ok":…} envelope.
func writeAnswer(w http.ResponseWriter, result any, e *apiError) {
	if e != nil && e.body != "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(e.code)
		_, _ = w.Write([]byte(e.body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if e == nil {
		_, _ = w.Write(marshal(struct {
			OK     bool `json:"ok"`
			Result any  `json:"result"`
		}{true, result}))
		return
	}
	type params struct {
		RetryAfter int   `json:"retry_after,omitempty"`
		Migrate    int64 `json:"migrate_to_chat_id,omitempty"`
	}
	var p *params
	if e.retryAfter != 0 || e.migrate != 0 {
		p = &params{e.retryAfter, e.migrate}
	}
	w.WriteHeader(e.code)
	_, _ = w.Write(marshal(struct {
		OK          bool    `json:"ok"`
		ErrorCode   int     `json:"error_code"`
		Description string  `json:"description"`
		Parameters  *params `json:"parameters,omitempty"`
	}{false, e.code, e.desc, p}))
}

// marshal encodes v as the real API does: "<", ">" and "&" unescaped.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // our types always marshal
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// record appends a Call and wakes waiters; s.mu must be held.
func (s *Server) record(method string, req *request, e *apiError) {
	c := Call{Method: method, Params: req.params, Files: req.parts, Status: 200, Time: time.Now()}
	if e != nil {
		c.Status, c.Error = e.code, e.desc
	}
	s.calls = append(s.calls, c)
	s.notify()
}

// notify wakes waiters; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// FailNext makes the next call of method (e.g. "sendMessage") fail with f
// instead of taking effect. Several failures for a method queue up.
func (s *Server) FailNext(method string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := methods[strings.ToLower(method)]
	if !ok {
		s.t.Errorf("faketelegram: FailNext: the fake has no method %q", method)
		return
	}
	s.failures[m.name] = append(s.failures[m.name], f)
}

// FailAlways makes every call of method fail with f, after the failures
// queued with FailNext, until ClearFailures: a platform that keeps
// refusing for longer than any client retries.
func (s *Server) FailAlways(method string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := methods[strings.ToLower(method)]
	if !ok {
		s.t.Errorf("faketelegram: FailAlways: the fake has no method %q", method)
		return
	}
	s.always[m.name] = f
}

// ClearFailures drops the failures queued for method and ends FailAlways.
// It returns how many queued failures were left unused.
func (s *Server) ClearFailures(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := methods[strings.ToLower(method)]
	if !ok {
		s.t.Errorf("faketelegram: ClearFailures: the fake has no method %q", method)
		return 0
	}
	n := len(s.failures[m.name])
	delete(s.failures, m.name)
	delete(s.always, m.name)
	return n
}

// takeFailure pops the failure queued for method, if any, else the one
// set with FailAlways; s.mu must be held.
func (s *Server) takeFailure(method string) *apiError {
	q := s.failures[method]
	f, always := s.always[method]
	if len(q) == 0 && !always {
		return nil
	}
	if len(q) > 0 {
		f = q[0]
		s.failures[method] = q[1:]
	}
	e := &apiError{code: f.Code, desc: f.Description, retryAfter: f.RetryAfter, migrate: f.MigrateToChatID, body: f.Body}
	if e.code == 0 {
		e.code = 400
	}
	if e.desc == "" {
		switch e.code {
		case 400:
			e.desc = "Bad Request"
		case 403:
			e.desc = "Forbidden: bot was blocked by the user"
		case 429:
			e.desc = "Too Many Requests: retry after " + strconv.Itoa(f.RetryAfter)
		default:
			e.desc = http.StatusText(e.code)
		}
	}
	return e
}

// Calls returns every API call answered so far, in order, failed ones
// included. A long poll is recorded when it returns.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsOf returns the calls of one method.
func (s *Server) CallsOf(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callsOf(method)
}

func (s *Server) callsOf(method string) []Call {
	var out []Call
	for _, c := range s.calls {
		if strings.EqualFold(c.Method, method) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls blocks until at least n calls of method were answered and
// returns all calls of that method.
func (s *Server) WaitCalls(method string, n int) []Call {
	s.t.Helper()
	if _, ok := methods[strings.ToLower(method)]; !ok {
		s.t.Errorf("faketelegram: WaitCalls: the fake has no method %q", method)
	}
	s.waitFor(func() bool { return len(s.CallsOf(method)) >= n }, fmt.Sprintf("%d %s calls", n, method))
	return s.CallsOf(method)
}

// WaitFor blocks until cond returns true. cond is evaluated now and after
// every change (a call answered, a getUpdates begun, an update pushed); it
// may call the Server's methods.
func (s *Server) WaitFor(cond func() bool) {
	s.t.Helper()
	s.waitFor(cond, "a condition")
}

func (s *Server) waitFor(cond func() bool, what string) {
	s.t.Helper()
	timer := time.NewTimer(s.WaitTimeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-s.done:
			return
		case <-timer.C:
			s.t.Errorf("faketelegram: gave up after %v waiting for %s; calls: %s", s.WaitTimeout, what, s.summary())
			return
		}
	}
}

// summary lists the methods called, for failure messages.
func (s *Server) summary() string {
	var b strings.Builder
	for i, c := range s.Calls() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Method)
		if c.Status != 200 {
			fmt.Fprintf(&b, "(%d)", c.Status)
		}
	}
	return b.String()
}
