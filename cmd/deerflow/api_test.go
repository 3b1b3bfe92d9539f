package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

const apiToken = "api-e2e-token-secret-9c1d-0123456789ab"

// apiClient talks to the HTTP API of a running deerflow.
type apiClient struct {
	t    *testing.T
	base string // http://addr
}

// do sends method path with body as JSON (nil: none) and the token, and
// returns the status and body.
func (c apiClient) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// call is do expecting status, decoding the answer into v (nil: none).
func (c apiClient) call(method, path string, body any, status int, v any) {
	c.t.Helper()
	got, data := c.do(method, path, body)
	if got != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, got, data, status)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			c.t.Fatalf("%s %s: %q: %v", method, path, data, err)
		}
	}
}

type apiThread struct {
	ThreadID string `json:"thread_id"`
	Values   struct {
		Messages []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"messages"`
	} `json:"values"`
}

type apiRun struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// msg is a run's input: the person's message, as LangGraph's SDKs send it.
func msg(text string) map[string]any {
	return map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}}
}

func (c apiClient) thread() string {
	c.t.Helper()
	var th apiThread
	c.call("POST", "/api/threads", nil, http.StatusOK, &th)
	return th.ThreadID
}

func (c apiClient) run(thread, input string) string {
	c.t.Helper()
	var r apiRun
	c.call("POST", "/api/threads/"+thread+"/runs", map[string]any{"input": msg(input)}, http.StatusOK, &r)
	return r.RunID
}

// apiEvent is one Server-Sent Event.
type apiEvent struct {
	id   int
	kind string
	data string
}

// apiStream reads a run's event stream.
type apiStream struct {
	t      *testing.T
	body   io.ReadCloser
	sc     *bufio.Scanner
	cancel context.CancelFunc
	last   int // the last id sent
}

func (c apiClient) stream(thread, run string) *apiStream {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a timing assertion
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/api/threads/"+thread+"/runs/"+run+"/stream?stream_mode=values&stream_mode=custom", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("stream: %d %s", resp.StatusCode, data)
	}
	s := &apiStream{t: c.t, body: resp.Body, sc: bufio.NewScanner(resp.Body), cancel: cancel}
	c.t.Cleanup(func() { cancel(); resp.Body.Close() })
	return s
}

// next returns the next event (comments skipped); ok is false at the
// end of the stream.
func (s *apiStream) next() (ev apiEvent, ok bool) {
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if seen {
				if ev.id == 0 {
					ev.id = s.last
				}
				return ev, true
			}
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "id: "))
			if err != nil {
				s.t.Fatalf("id line %q", line)
			}
			ev.id, seen = n, true
			s.last = n
		case strings.HasPrefix(line, "event: "):
			ev.kind, seen = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			ev.data, seen = strings.TrimPrefix(line, "data: "), true
		default:
			s.t.Fatalf("unexpected line %q", line)
		}
	}
	return apiEvent{}, false
}

// until reads events up to one of kind.
func (s *apiStream) until(kind string) []apiEvent {
	s.t.Helper()
	var evs []apiEvent
	for {
		ev, ok := s.next()
		if !ok {
			s.t.Fatalf("the stream ended before a %s event: %v", kind, evs)
		}
		evs = append(evs, ev)
		if ev.kind == kind {
			return evs
		}
	}
}

// rest reads the events to the end of the stream.
func (s *apiStream) rest() []apiEvent {
	var evs []apiEvent
	for {
		ev, ok := s.next()
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

// ended checks that evs end with the end event of status, after ids
// from 1 that grow (a record that makes several events sends its id on
// the last).
func ended(t *testing.T, evs []apiEvent, status string) {
	t.Helper()
	for i, ev := range evs {
		if i > 0 && ev.id < evs[i-1].id || i == 0 && ev.id > 1 {
			t.Fatalf("event %d has id %d: %v", i, ev.id, evs)
		}
	}
	if len(evs) == 0 || evs[len(evs)-1].kind != "end" || !strings.Contains(evs[len(evs)-1].data, `"status":"`+status+`"`) {
		t.Fatalf("the stream did not end %s: %v", status, evs)
	}
}

// answerOf is the last ai message of the last values event of evs.
func answerOf(t *testing.T, evs []apiEvent) string {
	t.Helper()
	for _, ev := range slices.Backward(evs) {
		if ev.kind == "values" {
			var v apiThread
			if err := json.Unmarshal([]byte(ev.data), &v.Values); err != nil {
				t.Fatal(err)
			}
			if n := len(v.Values.Messages); n > 0 && v.Values.Messages[n-1].Type == "ai" {
				return v.Values.Messages[n-1].Content
			}
			break
		}
	}
	t.Fatalf("no answer in the values: %v", evs)
	return ""
}

// apiOnlyConfig is a config with the HTTP API on and no chat channel.
func apiOnlyConfig(t *testing.T, dir, addr, modelURL string) string {
	return writeConfig(t, dir, fmt.Sprintf(`
http:
  listen: %s
  api_token: ${DEERFLOW_API_TOKEN}
models:
  - {name: default, model: fake-model, base_url: %s, api_key: test}
memory:
  enabled: false
shutdown:
  grace_seconds: 0
`, addr, modelURL))
}

// TestBinaryAPIOnlyServe: `deerflow serve` with http.listen and
// http.api_token and no chat channel serves the API: a thread, a run
// streamed to its end, its answer in the thread, a presented file
// downloaded through the files event's url; SIGTERM during a run ends its
// stream and the run reads interrupted after the restart.
func TestBinaryAPIOnlyServe(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "answer to: " + r.Last().Content}
	})
	addr := freeAddr(t)
	dir := t.TempDir()
	cfg := apiOnlyConfig(t, dir, addr, model.URL)
	env := "DEERFLOW_API_TOKEN=" + apiToken
	cmd := startBinaryServe(t, dir, cfg, env)
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	c := apiClient{t: t, base: "http://" + addr}

	if code, body := fetch(c.base + "/api/threads/x"); code != http.StatusUnauthorized || strings.Contains(body, apiToken) {
		t.Errorf("no token: %d %s", code, body)
	}

	id := c.thread()
	run := c.run(id, "hello there")
	evs := c.stream(id, run).rest()
	ended(t, evs, "success")
	if got := answerOf(t, evs); got != "answer to: hello there" {
		t.Errorf("answer = %q", got)
	}
	var th apiThread
	c.call("GET", "/api/threads/"+id, nil, http.StatusOK, &th)
	if len(th.Values.Messages) != 2 || th.Values.Messages[0].Content != "hello there" || th.Values.Messages[1].Content != "answer to: hello there" {
		t.Errorf("thread = %+v", th)
	}

	// A tool writes a file and presents it: the files event's url
	// downloads it.
	report := "# Report\n\nWritten in the sandbox.\n"
	write, _ := json.Marshal(map[string]string{"description": "write", "path": "/mnt/user-data/outputs/report.md", "content": report})
	model.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: string(write)}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/report.md"]}`}}},
		fakeopenai.Turn{Text: "Your report is ready."},
	)
	run = c.run(id, "write a report")
	evs = c.stream(id, run).rest()
	ended(t, evs, "success")
	var files struct {
		Files []struct{ Name, Path, URL string } `json:"files"`
	}
	for _, ev := range evs {
		if ev.kind == "custom" && strings.Contains(ev.data, `"type":"files_presented"`) {
			if err := json.Unmarshal([]byte(ev.data), &files); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(files.Files) != 1 || files.Files[0].Name != "report.md" || files.Files[0].URL == "" {
		t.Fatalf("files event: %+v in %v", files, evs)
	}
	code, body := c.do("GET", files.Files[0].URL, nil)
	if code != http.StatusOK || string(body) != report {
		t.Errorf("download %s: %d %q", files.Files[0].URL, code, body)
	}
	if code, _ := fetch(c.base + files.Files[0].URL); code != http.StatusUnauthorized {
		t.Errorf("download without the token: %d", code)
	}

	// SIGTERM while a run streams: the stream ends (interrupted), the
	// process exits 0, and after the restart the run reads interrupted.
	model.Script(fakeopenai.Turn{Text: "never finished", Hold: make(chan struct{})})
	held := len(model.Requests()) + 1
	run = c.run(id, "a long one")
	s := c.stream(id, run)
	s.until("values")
	model.WaitRequests(held)
	// A run waiting behind it is stored: it runs after the restart.
	queued := c.run(id, "queued one")
	qs := c.stream(id, queued)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest := s.rest()
	if len(rest) == 0 || rest[len(rest)-1].kind != "end" || !strings.Contains(rest[len(rest)-1].data, `"interrupted"`) {
		t.Errorf("the stream at shutdown: %v", rest)
	}
	if qrest := qs.rest(); len(qrest) == 0 || qrest[len(qrest)-1].kind != "end" || !strings.Contains(qrest[len(qrest)-1].data, `"pending"`) {
		t.Errorf("the waiting run's stream at shutdown: %v", qrest)
	}
	if err := <-exited; err != nil {
		t.Fatalf("exit after SIGTERM: %v, want status 0", err)
	}

	startBinaryServe(t, dir, cfg, env)
	waitHealth(t, addr, "200 after the restart", func(code int, _ health) bool { return code == 200 })
	var st apiRun
	c.call("GET", "/api/threads/"+id+"/runs/"+run, nil, http.StatusOK, &st)
	if st.Status != "interrupted" {
		t.Errorf("after the restart the run = %+v", st)
	}
	// The waiting run ran after the restart, under its id.
	evs = c.stream(id, queued).rest()
	ended(t, evs, "success")
	if got := answerOf(t, evs); got != "answer to: queued one" {
		t.Errorf("the resumed run's answer = %q", got)
	}
	c.call("GET", "/api/threads/"+id, nil, http.StatusOK, &th)
	if n := len(th.Values.Messages); n < 3 || th.Values.Messages[n-3].Content != "a long one" || th.Values.Messages[n-2].Content != "queued one" {
		t.Errorf("thread after the restart = %+v", th)
	}
	// The thread goes on.
	run = c.run(id, "and now?")
	evs = c.stream(id, run).rest()
	ended(t, evs, "success")
	if got := answerOf(t, evs); got != "answer to: and now?" {
		t.Errorf("answer after the restart = %q", got)
	}
}

// serveAPIInProcess runs serve (API only, an echoing model) in this
// process until cancel; done gets serve's result.
func serveAPIInProcess(t *testing.T) (model *fakeopenai.Server, cfg *config.Config, c apiClient, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	model = fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "answer to: " + r.Last().Content}
	})
	addr := freeAddr(t)
	cfg = testConfig(t, model, t.TempDir())
	cfg.HTTP = config.HTTP{Listen: addr, APIToken: apiToken}
	cfg.Shutdown.GraceSeconds = 0
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, io.Discard, nil) }()
	waitHealth(t, addr, "200", func(code int, _ health) bool { return code == 200 })
	return model, cfg, apiClient{t: t, base: "http://" + addr}, cancel, served
}

// TestAPIServeInProcess runs serve itself (API only) in this process, so
// that the race detector sees the wiring: a run streamed to its end, then
// a shutdown (the context ends, as on SIGTERM) while a run is held ends
// its stream, and serve returns.
func TestAPIServeInProcess(t *testing.T) {
	model, _, c, cancel, done := serveAPIInProcess(t)
	defer cancel()

	id := c.thread()
	evs := c.stream(id, c.run(id, "in process")).rest()
	ended(t, evs, "success")
	if got := answerOf(t, evs); got != "answer to: in process" {
		t.Errorf("answer = %q", got)
	}

	model.Script(fakeopenai.Turn{Text: "never", Hold: make(chan struct{})})
	run := c.run(id, "held")
	s := c.stream(id, run)
	s.until("values")
	model.WaitRequests(2)
	cancel()
	rest := s.rest()
	kinds := make([]string, len(rest))
	for i, ev := range rest {
		kinds[i] = ev.kind
	}
	if kinds[len(kinds)-1] != "end" || slices.Contains(kinds, "messages") || !strings.Contains(rest[len(rest)-1].data, `"interrupted"`) {
		t.Errorf("the stream at shutdown: %v", rest)
	}
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestBinaryAPICheckAndServeWithoutToken: check tells whether the API is
// on without showing the token; serve with http.listen but no token and
// no channel refuses to start, naming http.api_token.
func TestBinaryAPICheckAndServeWithoutToken(t *testing.T) {
	dir := t.TempDir()
	cfg := apiOnlyConfig(t, dir, freeAddr(t), "http://127.0.0.1:1/v1")
	out, errOut, code := deerflow(t, dir, "", []string{"DEERFLOW_API_TOKEN=" + apiToken}, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "HTTP API under /api") || strings.Contains(out+errOut, apiToken) {
		t.Errorf("check: %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = deerflow(t, dir, "", nil, "check", "--config", cfg)
	if code != 0 || !strings.Contains(out, "HTTP API is off") {
		t.Errorf("check without the token: %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = deerflow(t, dir, "", nil, "serve", "--config", cfg)
	if code == 0 || !strings.Contains(errOut, "http.api_token") {
		t.Errorf("serve without a token or a channel: %d %s", code, errOut)
	}
}
