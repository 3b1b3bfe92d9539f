package api_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// waitLimit bounds every wait of these tests, so that a bug makes a test
// fail rather than hang. It is never a timing assertion.
const waitLimit = 60 * time.Second

const token = "test-api-token-7f3a-0123456789abcdef"

// harness is the API over the real agent, store and llm client, talking
// to a fake model; the server is an httptest server.
type harness struct {
	t      testing.TB
	fake   *fakeopenai.Server
	st     *store.Store
	agent  *agent.Agent
	runner *runner.Runner
	api    *api.Server
	srv    *httptest.Server
	opts   api.Options
}

// config changes the harness before it starts.
type config struct {
	api   func(*api.Options)
	agent func(*agent.Options)
	tools []tools.Tool
	// buffer is how many events of a run the runner keeps (0 → 64).
	buffer int
}

func newHarness(t testing.TB, cfg config) *harness {
	t.Helper()
	h := &harness{t: t, fake: fakeopenai.New(t), st: testutil.Store(t)}
	// Runs the scripts do not cover are echoed.
	h.fake.Handle(func(req fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "answer to: " + lastUser(req)}
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	models := []agent.ModelRef{
		{Name: "default", ID: "fake-model", Model: llm.New(llm.Options{BaseURL: h.fake.URL, APIKey: "k", Model: "fake-model", MaxRetries: -1})},
		{Name: "big", ID: "fake-big", Model: llm.New(llm.Options{BaseURL: h.fake.URL, APIKey: "k", Model: "fake-big", MaxRetries: -1})},
	}
	var err error
	ao := agent.Options{Store: h.st, Models: models, Tools: tools.NewRegistry(cfg.tools...), Logger: log}
	if cfg.agent != nil {
		cfg.agent(&ao)
	}
	h.agent, err = agent.New(ao)
	if err != nil {
		t.Fatal(err)
	}
	h.runner = newRunner(t, h.st, h.agent, cmp.Or(cfg.buffer, 64))
	h.opts = api.Options{Token: token, Store: h.st, Agent: h.agent, Runner: h.runner, Heartbeat: 50 * time.Millisecond, Logger: log}
	if cfg.api != nil {
		cfg.api(&h.opts)
	}
	if h.api, err = api.New(h.opts); err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(h.api)
	t.Cleanup(func() {
		// Runs still blocked are cancelled; their streams end; then the
		// server can close (it waits for its handlers).
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		h.runner.Close(ctx, 0, errors.New("test over"))
		h.api.Close()
		h.srv.Close()
	})
	return h
}

// newRunner is the runner of one process of the harness, keeping buffer
// events per run (small, so tests can outrun the journal).
func newRunner(t testing.TB, st *store.Store, a *agent.Agent, buffer int) *runner.Runner {
	t.Helper()
	r, err := runner.New(runner.Options{Store: st, Buffer: buffer, Forget: a.ForgetHistory, Stop: a.StopAll,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	return r
}

// lastUser is the text of the last user message of a model request.
func lastUser(req fakeopenai.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// response is an HTTP answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// decode reads the JSON body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// request sends method path with body (a string as is, anything else as
// JSON; nil: none) and the bearer token unless hdr sets Authorization
// (an empty value sends none).
func (h *harness) request(method, path string, body any, hdr ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

// apiError is an error body, as FastAPI's.
type apiError struct {
	Detail string `json:"detail"`
}

// wantError checks r is an error with status, as JSON with a detail. (why
// names what the error is about, for the reader.)
func wantError(t *testing.T, r response, status int, why string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %s, want %d (%s)", r, status, why)
		return
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type = %q, want JSON (%s)", ct, r)
	}
	var e apiError
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Errorf("error body %q is not JSON: %v", r.body, err)
		return
	}
	if e.Detail == "" {
		t.Errorf("error %s has no detail (%s)", r.body, why)
	}
}

// threadJSON is a thread as the API shows it (LangGraph's Thread).
type threadJSON struct {
	ThreadID string         `json:"thread_id"`
	Created  time.Time      `json:"created_at"`
	Updated  time.Time      `json:"updated_at"`
	Status   string         `json:"status"`
	Metadata map[string]any `json:"metadata"`
	Values   struct {
		Title     string        `json:"title"`
		Messages  []messageJSON `json:"messages"`
		Artifacts []string      `json:"artifacts"`
	} `json:"values"`
}

// messageJSON is a LangChain message of a thread's values.
type messageJSON struct {
	Type       string `json:"type"` // human, ai, tool
	ID         string `json:"id"`
	Content    string `json:"content"`
	ToolCalls  []any  `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// runJSON is a run as the API shows it (LangGraph's Run).
type runJSON struct {
	RunID       string         `json:"run_id"`
	ThreadID    string         `json:"thread_id"`
	AssistantID string         `json:"assistant_id"`
	Status      string         `json:"status"`
	Error       string         `json:"error"`
	Created     time.Time      `json:"created_at"`
	Updated     time.Time      `json:"updated_at"`
	Strategy    string         `json:"multitask_strategy"`
	Metadata    map[string]any `json:"metadata"`
}

// busyThread makes a thread whose first run (input) is held at the model,
// answering answer once hold closes.
func (h *harness) busyThread(input, answer string) (thread string, first runJSON, hold chan struct{}) {
	h.t.Helper()
	hold = make(chan struct{})
	h.fake.Script(fakeopenai.Turn{Text: answer, Hold: hold})
	thread = h.createThread()
	seen := len(h.fake.Requests())
	first = h.startRun(thread, input)
	h.fake.WaitRequests(seen + 1)
	return thread, first, hold
}

func (h *harness) createThread() string {
	h.t.Helper()
	r := h.request("POST", "/api/threads", nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("create thread: %s", r)
	}
	var th threadJSON
	r.decode(h.t, &th)
	if th.ThreadID == "" {
		h.t.Fatalf("create thread: no id: %s", r)
	}
	return th.ThreadID
}

func (h *harness) getThread(id string) threadJSON {
	h.t.Helper()
	r := h.request("GET", "/api/threads/"+id, nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("get thread: %s", r)
	}
	var th threadJSON
	r.decode(h.t, &th)
	return th
}

// startRun posts a run with body (a string is the input) and returns its
// answer.
func (h *harness) startRun(thread string, body any) runJSON {
	h.t.Helper()
	if s, ok := body.(string); ok {
		body = map[string]any{"input": msg(s)}
	}
	r := h.request("POST", "/api/threads/"+thread+"/runs", body)
	if r.status != http.StatusOK {
		h.t.Fatalf("start run: %s", r)
	}
	var run runJSON
	r.decode(h.t, &run)
	if run.RunID == "" || run.ThreadID != thread {
		h.t.Fatalf("start run: %s", r)
	}
	return run
}

func (h *harness) runStatus(thread, run string) runJSON {
	h.t.Helper()
	r := h.request("GET", "/api/threads/"+thread+"/runs/"+run, nil)
	if r.status != http.StatusOK {
		h.t.Fatalf("run status: %s", r)
	}
	var out runJSON
	r.decode(h.t, &out)
	return out
}

// waitStatus polls a run's status until it is want (a wait for a
// condition, bounded by waitLimit).
func (h *harness) waitStatus(thread, run, want string) runJSON {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		got := h.runStatus(thread, run)
		if got.Status == want {
			return got
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("run %s stayed %q, want %q", run, got.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sseEvent is one Server-Sent Event, or one comment line.
type sseEvent struct {
	ID      int  // its id, or the last one sent before it (0: none yet), as an SSE client's last event id
	HasID   bool // an id line was sent
	Kind    string
	Data    string
	Comment string // set for a comment line (": …"), which is no event
}

func (e sseEvent) String() string {
	if e.Comment != "" {
		return ":" + e.Comment
	}
	return fmt.Sprintf("#%d %s %s", e.ID, e.Kind, e.Data)
}

// decode reads the event's data into v.
func (e sseEvent) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(e.Data), v); err != nil {
		t.Fatalf("event %s: data is not JSON: %v", e, err)
	}
}

// sse is a client of one event stream: a minimal reader of the
// text/event-stream format (id, event, data, retry and comment lines).
type sse struct {
	t        testing.TB
	resp     *http.Response
	r        *bufio.Reader
	cancel   context.CancelFunc
	retry    int // the retry field, when sent
	lastID   int // the last id sent
	comments int // comment lines read
}

// allModes asks a stream for every mode the tests look at.
const allModes = "stream_mode=values&stream_mode=messages-tuple&stream_mode=updates&stream_mode=custom"

// openStream connects to a run's events, after lastID when it is not "".
func (h *harness) openStream(thread, run, lastID string) *sse {
	h.t.Helper()
	s, resp := h.tryStream(thread, run, lastID)
	if s == nil {
		h.t.Fatalf("stream: %s", resp)
	}
	return s
}

// tryStream is openStream returning the answer when it is not a stream.
func (h *harness) tryStream(thread, run, lastID string) (*sse, response) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	req, err := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/api/threads/"+thread+"/runs/"+run+"/stream?"+allModes, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, response{resp.StatusCode, resp.Header, data}
	}
	s := &sse{t: h.t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	s.lastID, _ = strconv.Atoi(lastID)
	h.t.Cleanup(s.close)
	return s, response{}
}

// close drops the connection.
func (s *sse) close() {
	s.cancel()
	s.resp.Body.Close()
}

// item reads the next event or comment; ok is false at the end of the
// stream.
func (s *sse) item() (ev sseEvent, ok bool, err error) {
	var data []string
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && !seen {
				return sseEvent{}, false, nil
			}
			return sseEvent{}, false, fmt.Errorf("stream cut mid-event (%q): %w", line, err)
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if !seen {
				continue
			}
			ev.Data = strings.Join(data, "\n")
			if ev.HasID {
				s.lastID = ev.ID
			} else {
				ev.ID = s.lastID
			}
			return ev, true, nil
		}
		if c, ok := strings.CutPrefix(line, ":"); ok {
			if seen {
				continue // a comment inside an event is ignored
			}
			s.comments++
			return sseEvent{Comment: strings.TrimPrefix(c, " ")}, true, nil
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			n, err := strconv.Atoi(value)
			if err != nil {
				return sseEvent{}, false, fmt.Errorf("bad id line %q", line)
			}
			ev.ID, ev.HasID, seen = n, true, true
		case "event":
			ev.Kind, seen = value, true
		case "data":
			data, seen = append(data, value), true
		case "retry":
			n, err := strconv.Atoi(value)
			if err != nil {
				return sseEvent{}, false, fmt.Errorf("bad retry line %q", line)
			}
			s.retry = n
		default:
			return sseEvent{}, false, fmt.Errorf("unknown field in line %q", line)
		}
	}
}

// next reads the next event, skipping comments; ok is false at the end.
func (s *sse) next() (sseEvent, bool) {
	s.t.Helper()
	for {
		ev, ok, err := s.item()
		if err != nil {
			s.t.Fatal(err)
		}
		if !ok || ev.Comment == "" {
			return ev, ok
		}
	}
}

// until reads events until one of kind (returned with everything read).
func (s *sse) until(kind string) []sseEvent {
	s.t.Helper()
	var evs []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			s.t.Fatalf("the stream ended before a %s event; read:\n%s", kind, dump(evs))
		}
		evs = append(evs, ev)
		if ev.Kind == kind {
			return evs
		}
	}
}

// untilText reads events until a piece of the answer's text.
func (s *sse) untilText() []sseEvent {
	s.t.Helper()
	var evs []sseEvent
	for {
		evs = append(evs, s.until("messages")...)
		if c := chunks(s.t, evs[len(evs)-1:]); c[0].Type == "AIMessageChunk" && c[0].Content != "" {
			return evs
		}
	}
}

// rest reads events to the end of the stream.
func (s *sse) rest() []sseEvent {
	s.t.Helper()
	var evs []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

// collect streams a run from its start to its end.
func (h *harness) collect(thread, run string) []sseEvent {
	h.t.Helper()
	s := h.openStream(thread, run, "")
	defer s.close()
	evs := s.rest()
	checkEnded(h.t, evs)
	return evs
}

func dump(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

// checkEnded fails unless evs end with the end event.
func checkEnded(t testing.TB, evs []sseEvent) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Kind != "end" {
		t.Fatalf("the stream did not end with an end event:\n%s", dump(evs))
	}
}

// msg is a run's input: the person's message, as LangGraph's SDKs send it.
func msg(text string) map[string]any {
	return map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}}
}

// endStatus is the status the end event of evs reports (deerflow's
// addition to LangGraph's end, which has no data).
func (h *harness) endStatus(evs []sseEvent) string {
	h.t.Helper()
	checkEnded(h.t, evs)
	var end struct {
		Status string `json:"status"`
	}
	evs[len(evs)-1].decode(h.t, &end)
	return end.Status
}

// checkIDs fails unless the events' ids grow, the first being first.
// The ids are the run journal's sequence numbers: events the stream does
// not show (how a stop was caused, a research's status panel) leave
// holes, and a record that makes several events sends its id on the last
// only.
func checkIDs(t testing.TB, evs []sseEvent, first int) {
	t.Helper()
	last := first - 1
	seen := false
	for _, ev := range evs {
		if !ev.HasID {
			continue
		}
		if ev.ID <= last || !seen && ev.ID != first {
			t.Fatalf("event %s: id %d after %d (first %d):\n%s", ev, ev.ID, last, first, dump(evs))
		}
		last, seen = ev.ID, true
	}
	if !seen && len(evs) > 0 {
		t.Fatalf("no event has an id:\n%s", dump(evs))
	}
}

// customs returns the custom events of type typ.
func customs(t testing.TB, evs []sseEvent, typ string) []sseEvent {
	var out []sseEvent
	for _, e := range of(evs, "custom") {
		var c struct{ Type string }
		e.decode(t, &c)
		if c.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// kinds lists the events' kinds.
func kinds(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// of returns the events of kind.
func of(evs []sseEvent, kind string) []sseEvent {
	var out []sseEvent
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// chunk is a messages event: [message chunk, metadata].
type chunk struct {
	Type           string
	ID             string
	Content        string
	ToolCallID     string `json:"tool_call_id"`
	Name           string
	ToolCallChunks []struct{ ID, Name string } `json:"tool_call_chunks"`
	Kwargs         struct {
		Reasoning string `json:"reasoning_content"`
	} `json:"additional_kwargs"`
	Node string // from the metadata: langgraph_node
}

// chunks are the messages events of evs.
func chunks(t testing.TB, evs []sseEvent) []chunk {
	var out []chunk
	for _, e := range of(evs, "messages") {
		var pair []json.RawMessage
		e.decode(t, &pair)
		var c chunk
		var meta struct {
			Node string `json:"langgraph_node"`
		}
		if len(pair) != 2 || json.Unmarshal(pair[0], &c) != nil || json.Unmarshal(pair[1], &meta) != nil {
			t.Fatalf("messages event %s is not [chunk, metadata]", e)
		}
		c.Node = meta.Node
		out = append(out, c)
	}
	return out
}

// answers are the messages events that end an answer (finish_reason
// stop).
func answers(t testing.TB, evs []sseEvent) []sseEvent {
	var out []sseEvent
	for _, e := range of(evs, "messages") {
		var pair []struct {
			Meta struct {
				Finish string `json:"finish_reason"`
			} `json:"response_metadata"`
		}
		e.decode(t, &pair)
		if len(pair) > 0 && pair[0].Meta.Finish == "stop" {
			out = append(out, e)
		}
	}
	return out
}

// streamed is the text of the ai message chunks (after the last
// llm_retry) and the last ai message of the last values event.
func streamed(t testing.TB, evs []sseEvent) (deltas, final string) {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		switch e.Kind {
		case "custom":
			if len(customs(t, []sseEvent{e}, "llm_retry")) > 0 {
				b.Reset()
			}
		case "messages":
			if c := chunks(t, []sseEvent{e})[0]; c.Type == "AIMessageChunk" {
				b.WriteString(c.Content)
			}
		case "values":
			var v struct{ Messages []messageJSON }
			e.decode(t, &v)
			if n := len(v.Messages); n > 0 && v.Messages[n-1].Type == "ai" {
				final = v.Messages[n-1].Content
			}
		}
	}
	return b.String(), final
}

// blocker is a tool that blocks until released, whatever its context
// says: a run inside it cannot end before the test lets it.
type blocker struct {
	entered chan struct{} // receives once per call that started
	release chan struct{} // closing it lets every call return
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

type blockArgs struct {
	Text string `json:"text"`
}

func (b *blocker) tool() tools.Tool {
	return tools.Func("block", "Waits.", func(_ context.Context, in blockArgs) (string, error) {
		b.entered <- struct{}{}
		<-b.release
		return "unblocked: " + in.Text, nil
	})
}

// noteTool answers at once.
func noteTool() tools.Tool {
	return tools.Func("note", "Notes something.", func(_ context.Context, in blockArgs) (string, error) {
		return "noted: " + in.Text, nil
	})
}

func call(name, text string) fakeopenai.Turn {
	args, _ := json.Marshal(blockArgs{Text: text})
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: name, Arguments: string(args)}}}
}

// dbKey names one key of the database.
type dbKey struct{ bucket, key string }

// dumpThreads returns every key and value of the threads, messages and
// seqs buckets, read from a copy of the database file taken while no
// write is under way (the caller makes sure of that): the stored bytes,
// not what the store's accessors make of them.
func dumpThreads(t *testing.T, st *store.Store) map[dbKey]string {
	t.Helper()
	data, err := os.ReadFile(st.Path())
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(cp, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[dbKey]string{}
	err = db.View(func(tx *bbolt.Tx) error {
		for _, name := range []string{"threads", "messages", "seqs"} {
			b := tx.Bucket([]byte(name))
			if b == nil {
				return fmt.Errorf("no bucket %s", name)
			}
			if err := b.ForEach(func(k, v []byte) error {
				out[dbKey{name, string(k)}] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameDump reports every key where got differs from want.
func sameDump(t *testing.T, got, want map[dbKey]string) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s %q: missing, want %q", k.bucket, k.key, w)
		case g != w:
			t.Errorf("%s %q: value %q, want %q", k.bucket, k.key, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s %q: extra key, value %q", k.bucket, k.key, g)
		}
	}
}

// storedMessages is the thread's messages as stored.
func storedMessages(t *testing.T, st *store.Store, thread string) []*store.Message {
	t.Helper()
	msgs, err := st.Messages(thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// roles lists messages as "role: content" (tool calls by name).
func roles(msgs []*store.Message) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role + ": " + m.Content
		for _, c := range m.ToolCalls {
			s += "[" + c.Name + "]"
		}
		out = append(out, s)
	}
	return out
}

// newServer serves s on its own httptest server, closed when the test
// ends.
func newServer(t *testing.T, s *api.Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = ctx
		s.Close()
		srv.Close()
	})
	return srv
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
