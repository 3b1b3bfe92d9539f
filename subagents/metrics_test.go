package subagents

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// The running gauge follows the subagents; finished tasks and their runs
// are counted.
func TestSubagentMetrics(t *testing.T) {
	met := metrics.New()
	h := newHarness(t, Options{Metrics: met})
	release := make(chan struct{})
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if !isLead(r) {
			return fakeopenai.Turn{Text: "found it", Hold: release}
		}
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Text: "all done"}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Look it up", "look", GeneralPurpose)}}
	})
	done := make(chan string, 1)
	go func() { done <- text(last(h.run(context.Background(), "th_1", "go"))) }()
	h.fake.WaitRequests(2) // the subagent's model call is held
	if out := scrape(t, met); !strings.Contains(out, "deerflow_running_subagents 1\n") {
		t.Errorf("while a subagent runs, /metrics shows:\n%s", grep(out, "deerflow_running_subagents"))
	}
	close(release)
	if got := <-done; got != "all done" {
		t.Fatalf("lead answered %q", got)
	}
	out := scrape(t, met)
	for _, want := range []string{
		"deerflow_running_subagents 0\n",
		`deerflow_subagent_tasks_total{status="completed"} 1`,
		`deerflow_runs_total{agent="subagent",outcome="answered"} 1`,
		`deerflow_model_request_duration_seconds_count{model="default",result="ok"} 1`, // the subagent's; the lead has no Metrics here
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
