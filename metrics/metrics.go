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
// It writes the Prometheus text format itself: client_golang would bring
// protobuf into the binary, megabytes of memory and a millisecond of init
// at every start. It imports no deerflow package.
package metrics

import (
	"net/http"
	"sync"
	"time"
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

// Metrics holds deerflow's metrics, with the Go runtime's and the
// process's; nothing is global, so two Metrics count apart.
type Metrics struct {
	inbound      *vec[counter]   // channel
	sent         *vec[counter]   // channel, kind, result
	waits        *vec[counter]   // channel
	waitSeconds  *vec[counter]   // channel
	runs         *vec[counter]   // agent, outcome
	runSeconds   *vec[histogram] // agent
	modelSeconds *vec[histogram] // model, result
	tokens       *vec[counter]   // model, type
	errs         *vec[counter]   // kind
	tasks        *vec[counter]   // status

	queue    funcGauges // queued messages, running runs
	subs     funcGauges // running subagents
	channels sync.Map   // name → *Channel
	models   sync.Map   // name → *model
}

// New returns Metrics with every count at zero.
func New() *Metrics {
	m := &Metrics{}
	m.inbound = newCounterVec("deerflow_inbound_messages_total", "Messages from people accepted by a channel (allow-listed and addressed to the bot).", "channel")
	m.sent = newCounterVec("deerflow_outbound_sends_total", "Messages, edits and files a channel delivered to its platform, by result (ok, error).", "channel", "kind", "result")
	m.waits = newCounterVec("deerflow_rate_limit_waits_total", "Times a send waited for a rate limit: the bot's own spacing or the platform's retry-after.", "channel")
	m.waitSeconds = newCounterVec("deerflow_rate_limit_wait_seconds_total", "Seconds sends spent waiting for rate limits.", "channel")
	m.runs = newCounterVec("deerflow_runs_total", "Finished agent runs by outcome.", "agent", "outcome")
	m.runSeconds = newHistogramVec("deerflow_run_duration_seconds", "How long agent runs took, from start to their last event.",
		[]float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800}, "agent")
	m.modelSeconds = newHistogramVec("deerflow_model_request_duration_seconds", "Model calls, from request to the end of the streamed answer, by result.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}, "model", "result")
	m.tokens = newCounterVec("deerflow_model_tokens_total", "Tokens the model provider reported, by type (prompt, completion).", "model", "type")
	m.errs = newCounterVec("deerflow_errors_total", "Errors by kind: model, tool, send, store, channel.", "kind")
	m.tasks = newCounterVec("deerflow_subagent_tasks_total", "Finished subagent tasks by status.", "status")
	// Known series start at zero, so rates and alerts work before the
	// first event.
	for _, k := range errorKinds {
		m.errs.with(k)
	}
	for _, a := range agents {
		for _, o := range outcomes {
			m.runs.with(a, o)
		}
	}
	m.queue.gauges = []gaugeSpec{
		{"deerflow_queued_messages", "Messages waiting for their conversation's current run to end, across conversations."},
		{"deerflow_running_runs", "Agent runs in progress."},
	}
	m.subs.gauges = []gaugeSpec{{"deerflow_running_subagents", "Subagents running now, across conversations."}}
	return m
}

// Handler serves the metrics in the Prometheus text format (/metrics).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return handler{
		collectGo, collectProcess,
		m.inbound.collect, m.sent.collect, m.waits.collect, m.waitSeconds.collect,
		m.runs.collect, m.runSeconds.collect, m.modelSeconds.collect, m.tokens.collect,
		m.errs.collect, m.tasks.collect, m.queue.collect, m.subs.collect,
	}
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
	m.runSeconds.with(agent).Observe(d.Seconds())
	m.runs.with(agent, known(outcome, outcomes)).Inc()
}

// Error counts an error of kind (ErrModel, ErrTool, ...).
func (m *Metrics) Error(kind string) {
	if m == nil {
		return
	}
	m.errs.with(known(kind, errorKinds)).Inc()
}

// SubagentTask counts a finished subagent task by its status (completed,
// failed, timed_out, cancelled, interrupted).
func (m *Metrics) SubagentTask(status string) {
	if m == nil {
		return
	}
	m.tasks.with(known(status, taskStatuses)).Inc()
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
