// Package metrics is deerflow's Prometheus instrumentation: what came in
// and went out on each channel, how runs ended and how long they took,
// model latency and tokens, queue depth, running subagents, errors and
// rate-limit waits, served by Handler for /metrics.
//
// A *Metrics is built by cmd/deerflow only when http.listen is set, and is
// passed down in each package's Options. Every method is safe on a nil
// *Metrics (and on a nil *Channel) and then does nothing, so a package
// records unconditionally: `o.Metrics.Inbound(...)`.
//
// Labels are bounded: channel and model names come from the config, every
// other label takes one of the constants below (anything else is recorded
// as "other"). Never pass a chat id, user id or free text.
//
// It imports no deerflow package.
package metrics

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Run outcomes (Run).
const (
	Answered      = "answered"      // the run finished with an answer
	Capped        = "capped"        // it used all of its turns
	Clarification = "clarification" // it ended by asking the person a question
	Failed        = "error"         // it failed; the person got an apology
	OverBudget    = "budget"        // the conversation's daily token budget was spent
	Stopped       = "stopped"       // a person stopped it (/stop)
	Interrupted   = "interrupted"   // shutdown, or a timeout, ended it
)

// Agents (Run): the lead agent, or a subagent.
const (
	Lead     = "lead"
	Subagent = "subagent"
)

// Model call results (ModelCall).
const (
	OK          = "ok"           // the model answered
	Refused     = "error"        // the provider answered with an error about this request (4xx, bad output, cut stream)
	RateLimited = "rate_limited" // 429, after the client's retries
	ServerError = "server_error" // 5xx, after the client's retries
	Unreachable = "unreachable"  // no answer: connection refused, DNS, TLS, timeout
	Rejected    = "rejected"     // 401/403 or no key: the API key was refused
	Canceled    = "canceled"     // the run was stopped while the call was under way
)

// Error kinds (Error).
const (
	ErrModel   = "model"   // a model call failed
	ErrTool    = "tool"    // a tool call returned an error
	ErrSend    = "send"    // a message could not be delivered to a platform
	ErrStore   = "store"   // the database refused a read or write
	ErrChannel = "channel" // a platform connection or poll failed
)

// Send kinds (Channel.Sent).
const (
	SendMessage = "message"
	SendEdit    = "edit"
	SendFile    = "file"
)

const other = "other"

var (
	outcomes     = []string{Answered, Capped, Clarification, Failed, OverBudget, Stopped, Interrupted}
	agents       = []string{Lead, Subagent}
	results      = []string{OK, Refused, RateLimited, ServerError, Unreachable, Rejected, Canceled}
	errorKinds   = []string{ErrModel, ErrTool, ErrSend, ErrStore, ErrChannel}
	sendKinds    = []string{SendMessage, SendEdit, SendFile}
	taskStatuses = []string{"completed", "failed", "timed_out", "cancelled", "interrupted"}
)

// Metrics holds deerflow's metrics on a registry of its own (with the Go
// runtime and process collectors), never the global default one.
type Metrics struct {
	reg *prometheus.Registry

	inbound      *prometheus.CounterVec   // channel
	sent         *prometheus.CounterVec   // channel, kind, result
	waits        *prometheus.CounterVec   // channel
	waitSeconds  *prometheus.CounterVec   // channel
	runs         *prometheus.CounterVec   // agent, outcome
	runSeconds   *prometheus.HistogramVec // agent
	modelSeconds *prometheus.HistogramVec // model, result
	tokens       *prometheus.CounterVec   // model, type
	errs         *prometheus.CounterVec   // kind
	tasks        *prometheus.CounterVec   // status

	queue    funcGauges // queued messages, running runs
	subs     funcGauges // running subagents
	channels sync.Map   // name → *Channel
	models   sync.Map   // name → *model
}

// New returns Metrics on a new registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "deerflow_" + name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "deerflow_" + name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.inbound = counter("inbound_messages_total", "Messages from people accepted by a channel (allow-listed and addressed to the bot).", "channel")
	m.sent = counter("outbound_sends_total", "Messages, edits and files a channel delivered to its platform, by result (ok, error).", "channel", "kind", "result")
	m.waits = counter("rate_limit_waits_total", "Times a send waited for a rate limit: the bot's own spacing or the platform's retry-after.", "channel")
	m.waitSeconds = counter("rate_limit_wait_seconds_total", "Seconds sends spent waiting for rate limits.", "channel")
	m.runs = counter("runs_total", "Finished agent runs by outcome.", "agent", "outcome")
	m.runSeconds = histogram("run_duration_seconds", "How long agent runs took, from start to their last event.",
		[]float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800}, "agent")
	m.modelSeconds = histogram("model_request_duration_seconds", "Model calls, from request to the end of the streamed answer, by result.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}, "model", "result")
	m.tokens = counter("model_tokens_total", "Tokens the model provider reported, by type (prompt, completion).", "model", "type")
	m.errs = counter("errors_total", "Errors by kind: model, tool, send, store, channel.", "kind")
	m.tasks = counter("subagent_tasks_total", "Finished subagent tasks by status.", "status")
	// Known series start at zero, so rates and alerts work before the
	// first event.
	for _, k := range errorKinds {
		m.errs.WithLabelValues(k)
	}
	for _, a := range agents {
		for _, o := range outcomes {
			m.runs.WithLabelValues(a, o)
		}
	}
	m.queue = funcGauges{reg: m.reg, gauges: []gaugeSpec{
		{"deerflow_queued_messages", "Messages waiting for their conversation's current run to end, across conversations."},
		{"deerflow_running_runs", "Agent runs in progress."},
	}}
	m.subs = funcGauges{reg: m.reg, gauges: []gaugeSpec{{"deerflow_running_subagents", "Subagents running now, across conversations."}}}
	return m
}

// Handler serves the metrics in the Prometheus text format (/metrics).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Run records a finished run of agent (Lead or Subagent) with its outcome
// (Answered, Capped, ...).
func (m *Metrics) Run(agent, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	agent = known(agent, agents)
	// The duration first: a scrape that sees the run counted sees its
	// duration too.
	m.runSeconds.WithLabelValues(agent).Observe(d.Seconds())
	m.runs.WithLabelValues(agent, known(outcome, outcomes)).Inc()
}

// Error counts an error of kind (ErrModel, ErrTool, ...).
func (m *Metrics) Error(kind string) {
	if m == nil {
		return
	}
	m.errs.WithLabelValues(known(kind, errorKinds)).Inc()
}

// SubagentTask counts a finished subagent task by its status (completed,
// failed, timed_out, cancelled, interrupted).
func (m *Metrics) SubagentTask(status string) {
	if m == nil {
		return
	}
	m.tasks.WithLabelValues(known(status, taskStatuses)).Inc()
}

// QueueDepth exposes deerflow_queued_messages and deerflow_running_runs,
// read from f at every scrape (f must be cheap and safe to call from any
// goroutine). The router owns these numbers; it calls QueueDepth once
// (a later call replaces f).
func (m *Metrics) QueueDepth(f func() (queued, running int)) {
	if m == nil || f == nil {
		return
	}
	m.queue.set(func(i int) float64 {
		q, r := f()
		if i == 0 {
			return float64(q)
		}
		return float64(r)
	})
}

// SubagentsRunning exposes deerflow_running_subagents, read from f at
// every scrape. A later call replaces f.
func (m *Metrics) SubagentsRunning(f func() int) {
	if m == nil || f == nil {
		return
	}
	m.subs.set(func(int) float64 { return float64(f()) })
}

// known returns v when it is one of vocab, else "other": labels stay a
// short fixed list whatever a caller passes.
func known(v string, vocab []string) string {
	for _, k := range vocab {
		if v == k {
			return k
		}
	}
	return other
}

// gaugeSpec names one gauge of a funcGauges.
type gaugeSpec struct{ name, help string }

// funcGauges are gauges read from a callback at scrape time. They are
// registered with the first callback (so a number nobody provides is not
// shown as 0), and the callback can be replaced.
type funcGauges struct {
	reg    *prometheus.Registry
	gauges []gaugeSpec
	once   sync.Once
	f      atomic.Pointer[func(i int) float64]
}

func (g *funcGauges) set(f func(i int) float64) {
	g.f.Store(&f)
	g.once.Do(func() {
		for i, s := range g.gauges {
			g.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: s.name, Help: s.help}, func() float64 {
				return (*g.f.Load())(i)
			}))
		}
	})
}
