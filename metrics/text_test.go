package metrics

import (
	"bytes"
	"math"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// series is one parsed series: its labels written name=value, sorted, and
// its value, or a histogram's buckets (upper bound → cumulative count).
type series struct {
	Labels  string
	Value   float64
	Buckets map[float64]uint64
	Count   uint64
	Sum     float64
}

type parsed struct {
	Type   string
	Series []series
}

// parse reads text the way Prometheus does (expfmt), so what we write is
// checked by a parser that is not ours.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt cannot parse /metrics: %v\n%s", err, text)
	}
	return fams
}

func view(f *dto.MetricFamily) parsed {
	out := parsed{Type: strings.ToLower(f.GetType().String())}
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		s := series{Labels: strings.Join(labels, ",")}
		switch {
		case m.Counter != nil:
			s.Value = m.Counter.GetValue()
		case m.Gauge != nil:
			s.Value = m.Gauge.GetValue()
		case m.Histogram != nil:
			s.Buckets = map[float64]uint64{}
			for _, b := range m.Histogram.GetBucket() {
				s.Buckets[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			s.Count, s.Sum = m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
		}
		out.Series = append(out.Series, s)
	}
	return out
}

// buckets pairs bounds, then +Inf, with cumulative counts.
func buckets(bounds []float64, counts ...uint64) map[float64]uint64 {
	b := map[float64]uint64{}
	for i, c := range counts {
		if i < len(bounds) {
			b[bounds[i]] = c
		} else {
			b[math.Inf(1)] = c
		}
	}
	return b
}

func TestHandlerParsesAsPrometheusText(t *testing.T) {
	m := New()
	tg := m.Channel("telegram")
	tg.Inbound()
	tg.Inbound()
	tg.Sent(SendFile, nil)
	tg.RateLimitWait(500 * time.Millisecond)
	m.Run(Lead, Answered, 250*time.Millisecond)
	m.Run(Lead, Answered, 2*time.Second)
	m.Run(Subagent, Capped, 2000*time.Second)
	m.ModelCall("default", OK, 250*time.Millisecond, 10, 5)
	m.Error(ErrTool)
	m.SubagentTask("timed_out")
	m.QueueDepth(func() (int, int) { return 1, 2 })
	m.SubagentsRunning(func() int { return 3 })

	runtime.GC() // go_gc_duration_seconds has a pause to count
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if got := rec.Header().Get("Content-Type"); got != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	fams := parse(t, rec.Body.String())

	got := map[string]parsed{}
	for name, f := range fams {
		if strings.HasPrefix(name, "deerflow_") {
			got[name] = view(f)
		}
	}
	if diff := cmp.Diff(wantDeerflow(), got); diff != "" {
		t.Errorf("deerflow families (-want +got):\n%s", diff)
	}
	checkRuntimeFamilies(t, fams)
}

func wantDeerflow() map[string]parsed {
	runBounds := []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800}
	modelBounds := []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}
	var sends, runs, errs []series
	for _, kind := range []string{"edit", "file", "message"} {
		for _, result := range []string{"error", "ok"} {
			s := series{Labels: "channel=telegram,kind=" + kind + ",result=" + result}
			if kind == "file" && result == "ok" {
				s.Value = 1
			}
			sends = append(sends, s)
		}
	}
	for _, a := range []string{"lead", "subagent"} {
		for _, o := range []string{"answered", "budget", "capped", "clarification", "error", "interrupted", "stopped"} {
			s := series{Labels: "agent=" + a + ",outcome=" + o}
			switch {
			case a == "lead" && o == "answered":
				s.Value = 2
			case a == "subagent" && o == "capped":
				s.Value = 1
			}
			runs = append(runs, s)
		}
	}
	for _, k := range []string{"channel", "model", "send", "store", "tool"} {
		s := series{Labels: "kind=" + k}
		if k == "tool" {
			s.Value = 1
		}
		errs = append(errs, s)
	}
	return map[string]parsed{
		"deerflow_inbound_messages_total":        {"counter", []series{{Labels: "channel=telegram", Value: 2}}},
		"deerflow_outbound_sends_total":          {"counter", sends},
		"deerflow_rate_limit_waits_total":        {"counter", []series{{Labels: "channel=telegram", Value: 1}}},
		"deerflow_rate_limit_wait_seconds_total": {"counter", []series{{Labels: "channel=telegram", Value: 0.5}}},
		"deerflow_runs_total":                    {"counter", runs},
		"deerflow_run_duration_seconds": {"histogram", []series{
			{Labels: "agent=lead", Count: 2, Sum: 2.25, Buckets: buckets(runBounds, 0, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)},
			{Labels: "agent=subagent", Count: 1, Sum: 2000, Buckets: buckets(runBounds, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)},
		}},
		"deerflow_model_request_duration_seconds": {"histogram", []series{
			{Labels: "model=default,result=ok", Count: 1, Sum: 0.25, Buckets: buckets(modelBounds, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
		}},
		"deerflow_model_tokens_total": {"counter", []series{
			{Labels: "model=default,type=completion", Value: 5},
			{Labels: "model=default,type=prompt", Value: 10},
		}},
		"deerflow_errors_total":         {"counter", errs},
		"deerflow_subagent_tasks_total": {"counter", []series{{Labels: "status=timed_out", Value: 1}}},
		"deerflow_queued_messages":      {"gauge", []series{{Value: 1}}},
		"deerflow_running_runs":         {"gauge", []series{{Value: 2}}},
		"deerflow_running_subagents":    {"gauge", []series{{Value: 3}}},
	}
}

// checkRuntimeFamilies checks the Go and process families: their types,
// and values that must hold whatever the machine.
func checkRuntimeFamilies(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	types := map[string]string{}
	values := map[string]float64{}
	for name, f := range fams {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			types[name] = strings.ToLower(f.GetType().String())
			if s := view(f).Series; len(s) == 1 {
				values[name] = s[0].Value
			}
		}
	}
	wantTypes := map[string]string{
		"go_goroutines":                 "gauge",
		"go_memstats_alloc_bytes":       "gauge",
		"go_memstats_heap_inuse_bytes":  "gauge",
		"go_memstats_sys_bytes":         "gauge",
		"go_gc_duration_seconds":        "summary",
		"process_cpu_seconds_total":     "counter",
		"process_resident_memory_bytes": "gauge",
		"process_virtual_memory_bytes":  "gauge",
		"process_open_fds":              "gauge",
		"process_max_fds":               "gauge",
		"process_start_time_seconds":    "gauge",
	}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("Go and process families (-want +got):\n%s", diff)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_resident_memory_bytes", "process_open_fds", "process_max_fds"} {
		if values[name] <= 0 {
			t.Errorf("%s = %v, want > 0", name, values[name])
		}
	}
	if values["go_memstats_heap_inuse_bytes"] < values["go_memstats_alloc_bytes"] ||
		values["go_memstats_sys_bytes"] < values["go_memstats_heap_inuse_bytes"] {
		t.Errorf("memory: alloc %v ≤ heap in use %v ≤ sys %v does not hold",
			values["go_memstats_alloc_bytes"], values["go_memstats_heap_inuse_bytes"], values["go_memstats_sys_bytes"])
	}
	if start, now := values["process_start_time_seconds"], float64(time.Now().Unix()); start > now+1 || start < now-24*3600 {
		t.Errorf("process_start_time_seconds = %v, now %v", start, now)
	}
	if gc := fams["go_gc_duration_seconds"].GetMetric()[0].GetSummary(); gc.GetSampleCount() < 1 || len(gc.GetQuantile()) != 5 {
		t.Errorf("go_gc_duration_seconds = %v, want a count ≥ 1 and 5 quantiles", gc)
	}
}

// Help texts and label values that need escaping survive a round trip
// through Prometheus's parser, and families come out sorted.
func TestWriteTextEscapes(t *testing.T) {
	value := "back\\slash \"quoted\"\nnew line, ünïcödé"
	help := "help with \\ and\nnewline and \"quotes\""
	var b bytes.Buffer
	writeText(&b, []family{
		{name: "z_total", help: "last", typ: typeCounter, labels: []string{"v"},
			samples: []sample{{values: []string{"b"}, value: 2}, {values: []string{"a"}, value: 1}}},
		{name: "a_gauge", help: help, typ: typeGauge, labels: []string{"v"},
			samples: []sample{{values: []string{value}, value: math.Inf(-1)}}},
		{name: "m_empty", help: "no samples: left out", typ: typeCounter},
	})
	want := "# HELP a_gauge help with \\\\ and\\nnewline and \"quotes\"\n" +
		"# TYPE a_gauge gauge\n" +
		"a_gauge{v=\"back\\\\slash \\\"quoted\\\"\\nnew line, ünïcödé\"} -Inf\n" +
		"# HELP z_total last\n" +
		"# TYPE z_total counter\n" +
		"z_total{v=\"a\"} 1\n" +
		"z_total{v=\"b\"} 2\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	fams := parse(t, b.String())
	g := fams["a_gauge"]
	if g.GetHelp() != help || g.GetMetric()[0].GetLabel()[0].GetValue() != value {
		t.Errorf("round trip: help %q, label %q", g.GetHelp(), g.GetMetric()[0].GetLabel()[0].GetValue())
	}
}
