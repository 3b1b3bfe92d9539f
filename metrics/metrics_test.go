package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// scrape returns what /metrics shows.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

func TestMetricsExposition(t *testing.T) {
	m := New()
	tg := m.Channel("telegram")
	tg.Inbound()
	tg.Inbound()
	tg.Sent(SendMessage, nil)
	tg.Sent(SendEdit, nil)
	tg.Sent(SendEdit, errors.New("boom"))
	tg.RateLimitWait(1500 * time.Millisecond)
	tg.RateLimitWait(0) // no wait
	m.Channel("telegram").Inbound()
	m.Run(Lead, Answered, 2*time.Second)
	m.Run(Subagent, "something new", time.Second)
	m.ModelCall("default", OK, 300*time.Millisecond, 120, 30)
	m.ModelCall("default", Unreachable, time.Second, 0, 0)
	m.ModelCall("default", Canceled, time.Second, 0, 0)
	m.Error(ErrTool)
	m.Error("free text that must not become a label")
	m.SubagentTask("completed")
	m.QueueDepth(func() (int, int) { return 4, 2 })
	m.QueueDepth(func() (int, int) { return 5, 3 }) // replaces, no double registration
	m.SubagentsRunning(func() int { return 7 })

	out := scrape(t, m)
	for _, want := range []string{
		`deerflow_inbound_messages_total{channel="telegram"} 3`,
		`deerflow_outbound_sends_total{channel="telegram",kind="message",result="ok"} 1`,
		`deerflow_outbound_sends_total{channel="telegram",kind="edit",result="ok"} 1`,
		`deerflow_outbound_sends_total{channel="telegram",kind="edit",result="error"} 1`,
		`deerflow_outbound_sends_total{channel="telegram",kind="file",result="ok"} 0`,
		`deerflow_rate_limit_waits_total{channel="telegram"} 1`,
		`deerflow_rate_limit_wait_seconds_total{channel="telegram"} 1.5`,
		`deerflow_runs_total{agent="lead",outcome="answered"} 1`,
		`deerflow_runs_total{agent="lead",outcome="error"} 0`,
		`deerflow_runs_total{agent="subagent",outcome="other"} 1`,
		`deerflow_run_duration_seconds_count{agent="lead"} 1`,
		`deerflow_run_duration_seconds_sum{agent="lead"} 2`,
		`deerflow_model_request_duration_seconds_count{model="default",result="ok"} 1`,
		`deerflow_model_request_duration_seconds_count{model="default",result="unreachable"} 1`,
		`deerflow_model_request_duration_seconds_count{model="default",result="canceled"} 1`,
		`deerflow_model_tokens_total{model="default",type="prompt"} 120`,
		`deerflow_model_tokens_total{model="default",type="completion"} 30`,
		`deerflow_errors_total{kind="send"} 1`,
		`deerflow_errors_total{kind="model"} 1`, // the canceled call is no error
		`deerflow_errors_total{kind="tool"} 1`,
		`deerflow_errors_total{kind="other"} 1`,
		`deerflow_errors_total{kind="store"} 0`,
		`deerflow_subagent_tasks_total{status="completed"} 1`,
		`deerflow_queued_messages 5`,
		`deerflow_running_runs 3`,
		`deerflow_running_subagents 7`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(out, "free text") {
		t.Error("an unknown error kind became a label value")
	}
	info, ok := m.LastModelCall("default")
	if !ok || info.Result != Unreachable {
		t.Errorf("LastModelCall = %+v, %v; want the unreachable call (a canceled one says nothing)", info, ok)
	}
	if _, ok := m.LastModelCall("other"); ok {
		t.Error("LastModelCall of a model never called")
	}
}

// Gauges nobody provides are absent rather than a misleading 0.
func TestMetricsUnprovidedGauges(t *testing.T) {
	out := scrape(t, New())
	for _, name := range []string{"deerflow_queued_messages", "deerflow_running_runs", "deerflow_running_subagents"} {
		if strings.Contains(out, name) {
			t.Errorf("/metrics shows %s before anything provides it", name)
		}
	}
}

// Two Metrics have separate registries: nothing is global.
func TestMetricsOwnRegistry(t *testing.T) {
	a, b := New(), New()
	a.Channel("slack").Inbound()
	if out := scrape(t, b); strings.Contains(out, `deerflow_inbound_messages_total{channel="slack"} 1`) {
		t.Error("a second Metrics sees the first one's counts")
	}
}

func TestMetricsNilSafe(t *testing.T) {
	var m *Metrics
	ch := m.Channel("telegram")
	ch.Inbound()
	ch.Sent(SendMessage, errors.New("x"))
	ch.RateLimitWait(time.Second)
	ch.Error(ErrChannel)
	m.Run(Lead, Answered, time.Second)
	m.ModelCall("default", OK, time.Second, 1, 1)
	m.Error(ErrStore)
	m.SubagentTask("completed")
	m.QueueDepth(func() (int, int) { return 1, 1 })
	m.SubagentsRunning(func() int { return 1 })
	if _, ok := m.LastModelCall("default"); ok {
		t.Error("nil Metrics remembered a call")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Errorf("nil Metrics handler: %d", rec.Code)
	}
}

func TestChannelHotPathDoesNotAllocate(t *testing.T) {
	ch := New().Channel("telegram")
	allocs := testing.AllocsPerRun(100, func() {
		ch.Inbound()
		ch.Sent(SendEdit, nil)
		ch.RateLimitWait(time.Millisecond)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per recorded event", allocs)
	}
}
