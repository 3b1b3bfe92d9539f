package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// fixtureAgent is an agent on the real llm client, talking to a server on
// 127.0.0.1 that replays the llm package's provider fixtures in order.
func fixtureAgent(t *testing.T, fixtures []string, ts ...tools.Tool) (*Agent, *store.Store, func() [][]byte) {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		name := ""
		if len(fixtures) > 0 {
			name, fixtures = fixtures[0], fixtures[1:]
		}
		mu.Unlock()
		b, err := os.ReadFile(filepath.Join("..", "llm", "testdata", "streams", name))
		if err != nil || name == "" {
			http.Error(w, `{"error":{"message":"no fixture","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	st := testutil.Store(t)
	a, err := New(Options{
		Store:  st,
		Models: []ModelRef{{Name: "default", ID: "gpt-4o", Model: llm.New(llm.Options{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "gpt-4o", MaxRetries: -1})}},
		Tools:  tools.NewRegistry(ts...),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, st, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), bodies...)
	}
}

type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
}

// TestCutToolCallIsNotRun: a tool call cut by the length limit is not
// run; the model is told so and may call again. The complete call of the
// same answer runs.
func TestCutToolCallIsNotRun(t *testing.T) {
	var reads, writes atomic.Int32
	read := tools.Func("read_file", "Reads a file.", func(_ context.Context, in pathArgs) (string, error) {
		reads.Add(1)
		return "contents of " + in.Path, nil
	})
	write := tools.Func("write_file", "Writes a file.", func(_ context.Context, in pathArgs) (string, error) {
		writes.Add(1)
		return "written", nil
	})
	a, st, bodies := fixtureAgent(t, []string{"length_tool_call.sse", "openai_text_usage.sse"}, read, write)
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "copy a to b", RunID: "run_1"})
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 1 || writes.Load() != 0 {
		t.Errorf("read_file ran %d times, write_file %d; want 1, 0", reads.Load(), writes.Load())
	}
	var cut event.ToolResult
	for _, ev := range evs {
		if r, ok := ev.(event.ToolResult); ok && r.Name == "write_file" {
			cut = r
		}
	}
	if !cut.IsError || !strings.Contains(cut.Result, "cut off at the model's output length limit") {
		t.Errorf("write_file result %+v", cut)
	}
	msgs, err := st.Messages("t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := storedRoles(t, st, "t1"); got != "user,assistant,tool,tool,assistant" {
		t.Fatalf("stored roles %s", got)
	}
	if m := msgs[3]; m.ToolCallID != "call_write" || !strings.HasPrefix(m.Content, "Error: ") || !strings.Contains(m.Content, "call it again with shorter arguments") {
		t.Errorf("stored result of the cut call %+v", m)
	}
	if len(bodies()) != 2 || !strings.Contains(string(bodies()[1]), "cut off at the model") {
		t.Errorf("the model was not told: %d requests", len(bodies()))
	}
}

// TestLengthCutAnswerSaysSo: an answer the length limit cut is shown as
// far as it got, with a note, in the stream and in the thread.
func TestLengthCutAnswerSaysSo(t *testing.T) {
	a, st, _ := fixtureAgent(t, []string{"length_answer.sse"})
	evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "three reasons?"})
	if err != nil {
		t.Fatal(err)
	}
	want := "The three reasons are: first, the" + cutNote
	var streamed string
	for _, ev := range evs {
		if d, ok := ev.(event.TextDelta); ok {
			streamed += d.Text
		}
	}
	if last := evs[len(evs)-1]; !is[event.Answer](last) || text(last) != want || streamed != want {
		t.Errorf("answer %q, streamed %q; want %q", text(last), streamed, want)
	}
	msgs, _ := st.Messages("t1", 0)
	if len(msgs) != 2 || msgs[1].Content != want {
		t.Errorf("stored %+v", msgs)
	}
}

// TestErrorAfterPartialText: a provider error after part of the answer
// ends the run as failed, says why in the provider's words, and keeps
// the part in the thread.
func TestErrorAfterPartialText(t *testing.T) {
	for _, tt := range []struct{ fixture, partial, why string }{
		{"openrouter_finish_error.sse", "Here is the first part of", "Provider disconnected unexpectedly"},
		{"groq_error_event.sse", "The capital of", "Service Unavailable: the model is over capacity, please retry"},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			a, st, bodies := fixtureAgent(t, []string{tt.fixture, "openai_text_usage.sse"})
			evs, err := collect(a, context.Background(), Input{ThreadID: "t1", Text: "hi", RunID: "run_1"})
			if err == nil {
				t.Fatalf("no error: %s", kinds(evs))
			}
			want := "The model stopped with an error: " + tt.why + ". Send /retry to try again."
			if last := evs[len(evs)-1]; text(last) != want {
				t.Errorf("told %q, want %q", text(last), want)
			}
			if n := len(bodies()); n != 1 {
				t.Errorf("%d requests: an error after text is not retried", n)
			}
			msgs, _ := st.Messages("t1", 0)
			if len(msgs) != 2 || msgs[1].Role != "assistant" || !strings.HasPrefix(msgs[1].Content, tt.partial+"\n\n") {
				t.Errorf("stored %+v", msgs)
			}
			if run, _ := st.Run("run_1"); run.Status != store.RunError {
				t.Errorf("run status %s", run.Status)
			}
		})
	}
}
