// Package fakeslack is a faithful in-process fake of Slack for end-to-end
// tests: the Web API under /api/<method>, Socket Mode (apps.connections.open,
// hello, events_api/slash_commands envelopes, acks, redelivery of unacked
// envelopes, disconnect/refresh, server pings) and the files v2 upload flow.
// Installed from an app manifest (SetApp, LoadManifest) it grants only the
// manifest's scopes, events and slash commands, as Slack does.
//
// Point the real slack-go client at it with
//
//	api := slack.New(fake.BotToken, slack.OptionAppLevelToken(fake.AppToken),
//		slack.OptionAPIURL(fake.URL+"/api/"))
//	sm := socketmode.New(api)
//
// All methods are safe for concurrent use. Configuration fields (WaitTimeout,
// AckTimeout, PingInterval, EchoBotMessages) should be set right after New,
// before the client connects.
package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakestall"
)

// Call is one Web API call (or upload / private file download) the client made.
type Call struct {
	Method string            // e.g. "chat.postMessage"; "upload" for POSTs to an upload_url, "files-pri" for downloads
	Form   map[string]string // form fields (JSON bodies are flattened: non-string values as JSON)
	Status int               // HTTP status answered
	Error  string            // Slack error code, "" when ok
	Time   time.Time         // when the fake answered it (for "did the client wait out Retry-After")
}

// UploadedFile is a file attached to a Posted message.
type UploadedFile struct {
	ID, Name, Title string
	Data            []byte
}

// Posted is a message the bot posted (chat.postMessage, chat.postEphemeral or
// files.completeUploadExternal with a channel).
type Posted struct {
	Channel   string
	TS        string
	ThreadTS  string
	Text      string
	Blocks    json.RawMessage // raw JSON array as sent, nil if none
	Updates   int             // number of successful chat.update calls
	Files     []UploadedFile
	Ephemeral bool
	User      string // recipient of an ephemeral message
	Deleted   bool   // removed with chat.delete
}

// message is any message in the workspace (users' and the bot's).
type message struct {
	Posted
	author    string // user ID
	bot       bool
	clientID  string
	reactions []string // reactions added by the bot
}

type ack struct {
	envelopeID string
	payload    json.RawMessage
}

type failure struct {
	status, retryAfter int
	err                string
}

// Server is the fake Slack. Create it with New.
type Server struct {
	URL                      string // http://127.0.0.1:port
	BotToken, AppToken       string // "xoxb-test", "xapp-test"
	BotUserID, BotID, TeamID string // "U0BOT", "B0BOT", "T0TEAM"
	AppID                    string // "A0APP"
	WaitTimeout              time.Duration
	AckTimeout               time.Duration // unacked events_api envelopes are redelivered after this (default 3s, <0 disables)
	PingInterval             time.Duration // WebSocket PING period (default 2s)
	EchoBotMessages          bool          // bot posts/updates come back as message events (default true)
	t                        testing.TB
	srv                      *httptest.Server
	mu                       sync.Mutex
	changed                  chan struct{}
	closed                   bool
	base                     int64
	seq, ids                 int64
	calls                    []Call
	acks                     []ack
	connections              int
	tickets                  map[string]bool // ticket -> used
	cur                      *wsConn
	conns                    map[*wsConn]bool
	pending                  []outFrame
	events                   map[string]*eventRec
	deliveries               map[string]*delivery
	channels                 map[string]string // id -> channel_type
	msgs                     map[string]*message
	posted                   map[string][]*message
	failures                 map[string][]failure
	always                   map[string]failure // FailAlways, by method
	files                    map[string]*fileRec
	statuses                 map[string]string
	timers                   []*time.Timer
	stalls                   fakestall.Set
	stop                     chan struct{} // closed when the fake closes
	app                      App           // what the app was granted (SetApp)
}

// New starts a fake Slack on 127.0.0.1; it is closed on t.Cleanup.
func New(t testing.TB) *Server {
	s := &Server{
		BotToken: "xoxb-test", AppToken: "xapp-test",
		BotUserID: "U0BOT", BotID: "B0BOT", TeamID: "T0TEAM", AppID: "A0APP",
		WaitTimeout: 30 * time.Second, AckTimeout: 3 * time.Second, PingInterval: 2 * time.Second,
		EchoBotMessages: true,
		t:               t, changed: make(chan struct{}), base: time.Now().Unix(),
		tickets: map[string]bool{}, conns: map[*wsConn]bool{}, events: map[string]*eventRec{},
		deliveries: map[string]*delivery{}, channels: map[string]string{}, msgs: map[string]*message{},
		posted: map[string][]*message{}, failures: map[string][]failure{}, always: map[string]failure{}, files: map[string]*fileRec{},
		statuses: map[string]string{}, stop: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.handleAPI)
	mux.HandleFunc("/link/", s.handleLink)
	mux.HandleFunc("/upload/", s.handleUpload)
	mux.HandleFunc("/files-pri/", s.handleDownload)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	for _, tm := range s.timers {
		tm.Stop()
	}
	s.cur = nil
	close(s.stop)
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	s.srv.Close()
}

// bump wakes WaitFor; s.mu must be held.
func (s *Server) bump() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// logf logs unless the test has finished.
func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.t.Logf("fakeslack: "+format, args...)
	}
}

// nextTS returns a new unique, increasing message timestamp; s.mu must be held.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", s.base+s.seq/1000000, s.seq%1000000)
}

// newID returns a new identifier like "Ev0000000001"; s.mu must be held.
func (s *Server) newID(prefix string) string {
	s.ids++
	return fmt.Sprintf("%s%010d", prefix, s.ids)
}

// newEnvelopeID returns a new UUID-like envelope_id; s.mu must be held.
func (s *Server) newEnvelopeID() string {
	s.ids++
	return newUUID(s.ids)
}

func newUUID(n int64) string {
	return fmt.Sprintf("5c1a%04x-9d3b-4f2e-8a7c-%012x", n>>48&0xffff, n&0xffffffffffff)
}

// AddChannel makes a channel known (channels seen in inbound events are known
// automatically). channelType is "channel", "group", "im" or "mpim"; "" infers
// it from the ID prefix (D → im, G → group, else channel).
func (s *Server) AddChannel(id, channelType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addChannel(id, channelType)
}

func (s *Server) addChannel(id, channelType string) string {
	if channelType == "" {
		channelType = s.channels[id]
	}
	if channelType == "" {
		switch {
		case len(id) > 0 && id[0] == 'D':
			channelType = "im"
		case len(id) > 0 && id[0] == 'G':
			channelType = "group"
		default:
			channelType = "channel"
		}
	}
	s.channels[id] = channelType
	return channelType
}

// FailNext makes the next call of method fail: status 429 answers HTTP 429
// with "Retry-After: retryAfter"; status 0 or 200 answers 200
// {"ok":false,"error":slackError}; other statuses are sent as is with that body.
// Calls queue up: FailNext twice fails the next two calls.
func (s *Server) FailNext(method string, status int, retryAfter int, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], failure{status, retryAfter, slackError})
}

// FailAlways makes every call of method fail as FailNext describes, after
// the failures queued with FailNext, until ClearFailures: a Slack that
// keeps refusing for longer than any client retries.
func (s *Server) FailAlways(method string, status int, retryAfter int, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always[method] = failure{status, retryAfter, slackError}
}

// ClearFailures drops the failures queued for method and ends FailAlways.
// It returns how many queued failures were left unused.
func (s *Server) ClearFailures(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.failures[method])
	delete(s.failures, method)
	delete(s.always, method)
	return n
}

// takeFailure pops the failure queued for method, else the FailAlways one;
// s.mu must be held.
func (s *Server) takeFailure(method string) (failure, bool) {
	if q := s.failures[method]; len(q) > 0 {
		s.failures[method] = q[1:]
		return q[0], true
	}
	f, ok := s.always[method]
	return f, ok
}

// Calls returns all Web API calls so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the calls of one method.
func (s *Server) CallsTo(method string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns snapshots of the messages the bot posted in channel, in order.
func (s *Server) Messages(channel string) []*Posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Posted
	for _, m := range s.posted[channel] {
		p := m.Posted
		p.Blocks = append(json.RawMessage(nil), p.Blocks...)
		p.Files = append([]UploadedFile(nil), p.Files...)
		out = append(out, &p)
	}
	return out
}

// Reactions returns the reaction names the bot currently has on a message.
func (s *Server) Reactions(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.msgs[channel+"/"+ts]; m != nil {
		return append([]string(nil), m.reactions...)
	}
	return nil
}

// Status returns the last assistant.threads.setStatus status of a thread.
func (s *Server) Status(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[channel+"/"+threadTS]
}

// Acks returns the envelope_ids acked by the client, in order.
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.acks))
	for i, a := range s.acks {
		out[i] = a.envelopeID
	}
	return out
}

// Acked reports whether envelopeID was acked.
func (s *Server) Acked(envelopeID string) bool {
	_, ok := s.AckPayload(envelopeID)
	return ok
}

// AckPayload returns the payload of the ack of envelopeID (nil if the ack had none).
func (s *Server) AckPayload(envelopeID string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.acks {
		if a.envelopeID == envelopeID {
			return a.payload, true
		}
	}
	return nil, false
}

// Connections returns the number of successful socket connections so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// WaitFor waits until cond returns true. cond is re-evaluated on every
// call, ack, upload and connection change (and every 100ms as a fallback).
// After WaitTimeout it reports t.Errorf and returns false.
func (s *Server) WaitFor(cond func() bool) bool {
	s.t.Helper()
	deadline := time.NewTimer(s.WaitTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			if cond() {
				return true
			}
			s.t.Errorf("fakeslack: WaitFor: condition not met after %v", s.WaitTimeout)
			return false
		}
	}
}
