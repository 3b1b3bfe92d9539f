package agent

import (
	"context"
	"errors"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
)

// measure runs the run, recording its outcome and duration when the agent
// has Metrics.
func (r *run) measure() {
	m := r.a.opts.Metrics
	if m == nil {
		r.exec()
		return
	}
	start := time.Now()
	r.exec()
	who := metrics.Lead
	if r.a.opts.Ephemeral {
		who = metrics.Subagent
	}
	m.Run(who, r.outcome, time.Since(start))
}

// noteEnd remembers the outcome a run's last event tells. An answer that
// asks the person a question was marked (Clarification) before it.
func (r *run) noteEnd(ev event.Event) {
	switch ev := ev.(type) {
	case event.Answer:
		if ev.Capped {
			r.outcome = metrics.Capped
		} else if r.outcome != metrics.Clarification {
			r.outcome = metrics.Answered
		}
	case event.Error:
		if errors.Is(ev.Err, errBudget) {
			r.outcome = metrics.OverBudget
		} else {
			r.outcome = metrics.Failed
		}
	case event.Stopped:
		if errors.Is(ev.Err, ErrStopped) || errors.Is(ev.Err, context.Canceled) {
			r.outcome = metrics.Stopped
		} else {
			r.outcome = metrics.Interrupted
		}
	}
}

// callModel is the innermost ModelNext: one request to the model
// (streamModel), timed and recorded with its tokens.
func (r *run) callModel(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m := r.a.opts.Metrics
	if m == nil {
		return r.streamModel(ctx, req)
	}
	start := time.Now()
	resp, err := r.streamModel(ctx, req)
	var prompt, completion int
	if resp != nil {
		prompt, completion = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	}
	m.ModelCall(r.model.Name, modelResult(ctx, err), time.Since(start), prompt, completion)
	return resp, err
}

// modelResult classifies a model call's error for the metrics (and for
// /healthz, which reads the latest result as the provider's state).
func modelResult(ctx context.Context, err error) string {
	if err == nil {
		return metrics.OK
	}
	if ctx.Err() != nil {
		return metrics.Canceled
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return metrics.Refused
	}
	switch le.Kind {
	case llm.KindUnreachable:
		return metrics.Unreachable
	case llm.KindAuth, llm.KindNoKey:
		return metrics.Rejected
	case llm.KindRateLimit:
		return metrics.RateLimited
	case llm.KindServer:
		return metrics.ServerError
	}
	return metrics.Refused
}
