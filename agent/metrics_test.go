package agent

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/tools"
)

// What /metrics shows after runs that end every way a run can.
func TestRunMetrics(t *testing.T) {
	m := &scriptModel{}
	a, _ := newTestAgent(t, m, echoTool(), tools.Clarify())
	met := metrics.New()
	a.opts.Metrics = met

	// Answered, after a tool call that failed and one that worked; the
	// provider reported tokens.
	m.add(call(llm.ToolCall{ID: "c1", Name: "echo", Arguments: `{"text":`}, llm.ToolCall{ID: "c2", Name: "echo", Arguments: `{"text":"hi"}`}),
		func(context.Context, *llm.Request) (*llm.Response, error) {
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "done"}, FinishReason: "stop",
				Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 7, TotalTokens: 107}}, nil
		})
	collect(a, context.Background(), Input{ThreadID: "t1", Text: "go"})
	// A question back to the person.
	m.add(call(llm.ToolCall{ID: "c3", Name: "ask_clarification", Arguments: `{"question":"Which one?","clarification_type":"missing_info"}`}))
	collect(a, context.Background(), Input{ThreadID: "t2", Text: "pick"})
	// The key refused.
	m.add(func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, &llm.Error{Kind: llm.KindAuth, Status: 401, Err: errors.New("bad key")}
	})
	collect(a, context.Background(), Input{ThreadID: "t3", Text: "hi"})
	// Stopped by a person while the model streams.
	entered := make(chan struct{})
	m.add(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	go func() { <-entered; a.Stop("t4") }()
	collect(a, context.Background(), Input{ThreadID: "t4", Text: "slow"})
	// Out of turns.
	a.opts.MaxTurns = 1
	m.add(call(llm.ToolCall{ID: "c4", Name: "echo", Arguments: `{"text":"again"}`}))
	collect(a, context.Background(), Input{ThreadID: "t5", Text: "loop"})

	rec := httptest.NewRecorder()
	met.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	out := string(body)
	for _, want := range []string{
		`deerflow_runs_total{agent="lead",outcome="answered"} 1`,
		`deerflow_runs_total{agent="lead",outcome="clarification"} 1`,
		`deerflow_runs_total{agent="lead",outcome="error"} 1`,
		`deerflow_runs_total{agent="lead",outcome="stopped"} 1`,
		`deerflow_runs_total{agent="lead",outcome="capped"} 1`,
		`deerflow_run_duration_seconds_count{agent="lead"} 5`,
		`deerflow_model_request_duration_seconds_count{model="default",result="ok"} 4`,
		`deerflow_model_request_duration_seconds_count{model="default",result="rejected"} 1`,
		`deerflow_model_request_duration_seconds_count{model="default",result="canceled"} 1`,
		`deerflow_model_tokens_total{model="default",type="prompt"} 100`,
		`deerflow_model_tokens_total{model="default",type="completion"} 7`,
		`deerflow_errors_total{kind="model"} 1`,
		`deerflow_errors_total{kind="tool"} 1`,
		`deerflow_errors_total{kind="store"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if c, ok := met.LastModelCall("default"); !ok || c.Result != metrics.OK {
		t.Errorf("the last model call = %+v %v, want ok (the canceled one says nothing)", c, ok)
	}
}

func TestModelResult(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{context.Background(), nil, metrics.OK},
		{canceled, context.Canceled, metrics.Canceled},
		{context.Background(), &llm.Error{Kind: llm.KindUnreachable}, metrics.Unreachable},
		{context.Background(), &llm.Error{Kind: llm.KindNoKey}, metrics.Rejected},
		{context.Background(), &llm.Error{Kind: llm.KindAuth, Status: 403}, metrics.Rejected},
		{context.Background(), &llm.Error{Kind: llm.KindRateLimit, Status: 429}, metrics.RateLimited},
		{context.Background(), &llm.Error{Kind: llm.KindServer, Status: 502}, metrics.ServerError},
		{context.Background(), &llm.Error{Kind: llm.KindBadRequest, Status: 400}, metrics.Refused},
		{context.Background(), &llm.Error{Kind: llm.KindTruncated}, metrics.Refused},
		{context.Background(), errors.New("odd"), metrics.Refused},
	} {
		if got := modelResult(tt.ctx, tt.err); got != tt.want {
			t.Errorf("modelResult(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
