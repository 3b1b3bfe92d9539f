package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

// The stream layer's provider quirks through the built binary: `deerflow
// serve` with Telegram pointed at the fake Bot API and its models at a
// server on 127.0.0.1 that replays SSE fixtures byte for byte, one per
// request in a scripted order. The fixtures are llm/testdata/streams
// (each provider's stream as its documentation shows it) and, where a
// fixture calls a tool deerflow does not have, testdata/streams: the same
// shape calling write_file. A person writes in a private chat; the tests
// assert what the chat shows, and what the binary sends the model next.

// llmStream and ownStream are the paths of a fixture of
// llm/testdata/streams and of testdata/streams.
func llmStream(name string) string {
	return filepath.Join("..", "..", "llm", "testdata", "streams", name)
}

func ownStream(name string) string { return filepath.Join("testdata", "streams", name) }

// replayModel answers POST /v1/chat/completions with the next fixture of
// its script, as sent on the wire, and records the request bodies.
type replayModel struct {
	*httptest.Server
	t          *testing.T
	mu         sync.Mutex
	script     [][]byte
	bodies     [][]byte
	holds      map[int]chan struct{} // request n (1-based) is answered once closed
	strictArgs bool                  // see refuseBadArgs
	changed    chan struct{}         // closed (and replaced) at each request
}

func newReplayModel(t *testing.T, fixtures ...string) *replayModel {
	m := &replayModel{t: t, holds: map[int]chan struct{}{}, changed: make(chan struct{})}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m.script = append(m.script, b)
	}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *replayModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	refuse := m.strictArgs && !argsAreJSON(body)
	m.bodies = append(m.bodies, body)
	hold := m.holds[len(m.bodies)]
	var reply []byte
	if len(m.script) > 0 && !refuse {
		reply, m.script = m.script[0], m.script[1:]
	}
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	if refuse {
		// Ollama's answer (openai.FromCompletionToolCall).
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"invalid tool call arguments","type":"invalid_request_error","param":null}}`)
		return
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if reply == nil {
		// Not retried: a request the test did not expect fails at once.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"the test scripted no answer for this request","type":"invalid_request_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Write(reply)
}

// argsAreJSON reports whether every tool call in the request body has
// JSON arguments.
func argsAreJSON(body []byte) bool {
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string } `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if !json.Valid([]byte(c.Function.Arguments)) {
				return false
			}
		}
	}
	return true
}

// refuseBadArgs makes the model refuse, as Ollama does, a request with a
// tool call whose arguments are not JSON.
func (m *replayModel) refuseBadArgs() {
	m.mu.Lock()
	m.strictArgs = true
	m.mu.Unlock()
}

// holdAt makes the answer to request n wait until release is called.
func (m *replayModel) holdAt(n int) (release func()) {
	ch := make(chan struct{})
	m.mu.Lock()
	m.holds[n] = ch
	m.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	m.t.Cleanup(release)
	return release
}

func (m *replayModel) requests() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.bodies...)
}

// waitRequests waits (at most 30 s) until the model has received n
// requests and returns them all.
func (m *replayModel) waitRequests(n int) [][]byte {
	m.t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		m.mu.Lock()
		got, ch := len(m.bodies), m.changed
		m.mu.Unlock()
		if got >= n {
			return m.requests()
		}
		select {
		case <-ch:
		case <-timeout.C:
			m.t.Fatalf("the model received %d requests, want %d", got, n)
		}
	}
}

// sentRequest is a chat request as the binary sent it: the messages with
// all their fields.
type sentRequest struct {
	Model    string           `json:"model"`
	Messages []map[string]any `json:"messages"`
}

func decodeRequest(t *testing.T, body []byte) sentRequest {
	t.Helper()
	var r sentRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	return r
}

// roles is the request's message roles, comma separated.
func (r sentRequest) roles() string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, fmt.Sprint(m["role"]))
	}
	return strings.Join(out, ",")
}

// toolCalls is the tool_calls of the request's first assistant message
// that has any.
func (r sentRequest) toolCalls() []any {
	for _, m := range r.Messages {
		if calls, ok := m["tool_calls"].([]any); ok && m["role"] == "assistant" && len(calls) > 0 {
			return calls
		}
	}
	return nil
}

// toolResults maps each tool message's tool_call_id to its content.
func (r sentRequest) toolResults() map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m["role"] == "tool" {
			out[fmt.Sprint(m["tool_call_id"])] = fmt.Sprint(m["content"])
		}
	}
	return out
}

func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// quirkChat is Ann's private chat with a `deerflow serve` process whose
// models are served by model.
type quirkChat struct {
	t        *testing.T
	tg       *faketelegram.Server
	model    *replayModel
	dir, cfg string
	cmd      *exec.Cmd
}

// startQuirkChat starts the fakes and the binary; the model answers with
// fixtures, in order.
func startQuirkChat(t *testing.T, fixtures ...string) *quirkChat {
	t.Helper()
	c := &quirkChat{t: t, tg: newTelegram(t), model: newReplayModel(t, fixtures...), dir: t.TempDir()}
	c.cfg = writeConfig(t, c.dir, quirkConfig(c.model.URL+"/v1", c.tg))
	c.cmd = startBinaryServe(t, c.dir, c.cfg)
	return c
}

// quirkConfig has two models on the same server, m (the default) and
// other, Telegram with our send limits off, and no memory (which would
// ask the model on its own).
func quirkConfig(modelURL string, tg *faketelegram.Server) string {
	return fmt.Sprintf(`models:
  - {name: m, model: m, base_url: %s, api_key: k}
  - {name: other, model: other-model, base_url: %[1]s, api_key: k}
channels:
  telegram: {enabled: true, bot_token: %q, api_url: %s, limits: {per_chat_per_second: 0, per_group_per_minute: 0, global_per_second: 0}}
memory: {enabled: false}
`, modelURL, tg.Token, tg.URL)
}

// restart stops the binary with SIGTERM, which must exit 0, and starts it
// again on the same data.
func (c *quirkChat) restart() {
	c.t.Helper()
	c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		c.t.Errorf("serve after SIGTERM: %v, want exit 0", err)
	}
	c.cmd = startBinaryServe(c.t, c.dir, c.cfg)
}

func (c *quirkChat) say(text string) { c.tg.PushMessage(faketelegram.Private(ann, text)) }

// shown is what Ann sees: the bot's messages in her chat, in order, as
// Telegram shows them, without the notices that a message was queued
// behind one still finishing (whether one shows is a matter of timing).
func (c *quirkChat) shown() []string {
	var out []string
	for _, m := range c.tg.Messages(ann.ID) {
		if !strings.HasPrefix(m.PlainText, "Queued: ") {
			out = append(out, m.PlainText)
		}
	}
	return out
}

// waitShown waits until the chat shows exactly want, message by message.
func (c *quirkChat) waitShown(want ...string) {
	c.t.Helper()
	c.tg.WaitFor(func() bool { return cmp.Equal(c.shown(), want) })
	if diff := cmp.Diff(want, c.shown()); diff != "" {
		c.t.Fatalf("the chat (-want +got):\n%s", diff)
	}
}

// workspaceFiles is every file the tools wrote in a conversation's
// workspace, by name, with its content.
func (c *quirkChat) workspaceFiles() map[string]string {
	c.t.Helper()
	out := map[string]string{}
	root := filepath.Join(c.dir, ".deerflow", "threads")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "workspace" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			c.t.Error(err)
		}
		out[d.Name()] = string(b)
		return nil
	})
	return out
}

// checkRequests fails the test unless the model received exactly n
// requests.
func (c *quirkChat) checkRequests(n int) {
	c.t.Helper()
	if got := len(c.model.requests()); got != n {
		c.t.Errorf("the model received %d requests, want %d", got, n)
	}
}

const (
	hello    = "Hello! How can I help?" // openai_text_usage.sse's answer
	switched = "This conversation now uses other (other-model). It applies from your next message."
)

// TestBinaryProviderAnswers: each provider's way of streaming an answer
// (reasoning under its own name, content as typed parts, SSE framing, a
// finish_reason "length", an error frame before any data, a cut stream)
// shows in the chat as the answer alone, and a stream that may be asked
// again is asked again, once.
func TestBinaryProviderAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		then    []string // fixtures for the next requests
		chat    string   // what the chat shows at the end
	}{
		{"mistral_content_parts.sse", nil, "2 + 2 = 4."},
		{"deepseek_reasoning_content.sse", nil, "9.8 is greater."},
		{"qwen_dashscope_thinking.sse", nil, "我是通义千问。"},
		{"ollama_reasoning.sse", nil, "Hello!"},
		{"sse_framing.sse", nil, "Line one, line two"},
		{"length_answer.sse", nil, "The three reasons are: first, the\n\n…(answer cut at the length limit)"},
		// Asked again: an error frame before any data, as an error
		// response would be; a stream cut before its finish_reason.
		{"error_frame_first.sse", []string{"openai_text_usage.sse"}, hello},
		{"cut_mid_stream.sse", []string{"openai_text_usage.sse"}, hello},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".sse"), func(t *testing.T) {
			t.Parallel()
			fixtures := []string{llmStream(tt.fixture)}
			for _, f := range tt.then {
				fixtures = append(fixtures, llmStream(f))
			}
			c := startQuirkChat(t, fixtures...)
			c.say("a question")
			c.waitShown(tt.chat)
			c.checkRequests(len(fixtures))
		})
	}
}

// TestBinaryProviderErrorMidAnswer: an error after part of the answer
// (Groq's "event: error" frame, OpenRouter's finish_reason "error") is not
// asked again: the chat keeps the part, says in the provider's words that
// the model stopped with an error, and /retry asks the same question
// again.
func TestBinaryProviderErrorMidAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture, partial, why string
	}{
		{"groq_error_event.sse", "The capital of", "Service Unavailable: the model is over capacity, please retry"},
		{"openrouter_finish_error.sse", "Here is the first part of", "Provider disconnected unexpectedly"},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.fixture, ".sse"), func(t *testing.T) {
			t.Parallel()
			c := startQuirkChat(t, llmStream(tt.fixture), llmStream("openai_text_usage.sse"))
			c.say("tell me a story")
			// The whole stream arrives within the first-show delay, so the
			// part never reached the screen: the chat shows the sentence
			// alone (a part already on screen would stay above it).
			stopped := "The model stopped with an error: " + tt.why + ". Send /retry to try again."
			c.waitShown(stopped)
			c.checkRequests(1)

			c.say("/retry")
			c.waitShown(stopped, hello)
			c.checkRequests(2)
			// The part stays in the thread, marked as cut, and the
			// question is asked again after it.
			again := decodeRequest(t, c.model.requests()[1])
			var got []string
			for _, m := range again.Messages[1:] {
				got = append(got, fmt.Sprint(m["role"], ": ", m["content"]))
			}
			want := []string{"user: tell me a story",
				"assistant: " + tt.partial + "\n\n(The answer stopped here: the model failed with an error.)",
				"user: tell me a story"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the request after /retry (-want +got):\n%s", diff)
			}
		})
	}
}
