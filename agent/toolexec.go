package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent/message"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// toolDone is one finished call of a batch: its index, result and time.
type toolDone struct {
	i   int
	res ToolResult
	dur time.Duration
}

// runTools runs calls concurrently and returns one result message per call,
// in call order. Events from the tools are passed on from this goroutine.
func (r *run) runTools(ctx context.Context, turn int, calls []llm.ToolCall) []*store.Message {
	evs := make(chan event.Event, 16)
	fin := make(chan toolDone, len(calls))
	closed := make(chan struct{})
	defer close(closed)

	starts := make([]event.ToolCall, len(calls))
	batch := make([]string, len(calls))
	for i, call := range calls {
		starts[i] = event.ToolCall{CallID: call.ID, Name: call.Name, Summary: message.CallSummary(call)}
		batch[i] = call.Name
		r.emit(starts[i])
	}
	attach := r.attacher()
	emit := func(e event.Event) {
		if e == nil {
			return
		}
		select {
		case evs <- e:
		case <-closed:
		}
	}
	for i, call := range calls {
		env := r.toolEnv(turn, call, batch, i, attach, emit)
		go func() {
			start := time.Now()
			if call.Truncated {
				fin <- toolDone{i: i, res: cutCall(call)}
				return
			}
			tctx, cancel := r.a.toolContext(tools.WithEnv(ctx, env), call.Name)
			defer cancel()
			res := r.a.chain.callTool(tctx, r.scope, call, r.callTool)
			fin <- toolDone{i: i, res: res, dur: time.Since(start)}
		}()
	}

	out := make([]*store.Message, len(calls))
	for n := 0; n < len(calls); {
		select {
		case ev := <-evs:
			r.emit(ev)
		case d := <-fin:
			n++
			out[d.i] = r.toolMessage(calls[d.i], starts[d.i], d)
		}
	}
	for {
		select {
		case ev := <-evs:
			r.emit(ev)
		default:
			return out
		}
	}
}

// attacher is how a tool adds an image for the model to see: nil unless
// the run's model takes images.
func (r *run) attacher() func(string, []byte) {
	if !r.model.Vision {
		return nil
	}
	var mu sync.Mutex
	return func(mime string, data []byte) {
		mu.Lock()
		r.images = append(r.images, llm.Image{MIME: mime, Data: data})
		mu.Unlock()
	}
}

// toolEnv is what the i-th call of a batch knows about its run.
func (r *run) toolEnv(turn int, call llm.ToolCall, batch []string, i int, attach func(string, []byte), emit func(event.Event)) *tools.Env {
	workspace := r.in.Workspace
	if workspace == "" {
		workspace = r.in.ThreadID
	}
	return &tools.Env{
		ThreadID: workspace, RunID: r.in.RunID, ChatKey: r.in.ChatKey, UserID: r.in.UserID, CallID: call.ID,
		Model: r.model.Name, Turn: turn, Batch: batch, Index: i, Attach: attach,
		Emit: emit, Allow: r.allow(), Load: func(n string) { r.loaded.Store(n, true) },
	}
}

// toolMessage records a finished call: it logs and counts a failure, emits
// the call's result event and returns the result message for the history.
func (r *run) toolMessage(call llm.ToolCall, s event.ToolCall, d toolDone) *store.Message {
	if d.res.Err != nil {
		r.a.log.WarnContext(r.ctx, "tool failed", "tool", call.Name, "err", d.res.Err)
	}
	if d.res.IsError {
		r.a.opts.Metrics.Error(metrics.ErrTool)
	}
	content := d.res.Content
	if content == "" {
		content = "(no output)"
	}
	m := &store.Message{
		Role: "tool", ToolCallID: call.ID, Name: call.Name, Content: content,
		RunID: r.in.RunID, Time: r.a.opts.Now(),
	}
	r.emit(event.ToolResult{CallID: s.CallID, Name: s.Name, Summary: s.Summary,
		Result: tools.Clip(content, 200), IsError: d.res.IsError, Duration: d.dur})
	return m
}

// cutCall is the result of a call the output length limit cut: its
// arguments may be half written, so it is not run, and the model is told.
func cutCall(call llm.ToolCall) ToolResult {
	return ToolResult{
		Content: fmt.Sprintf("Error: this call of %s was cut off at the model's output length limit before its arguments were complete, so it was not run. You may call it again with shorter arguments (for example, write a long file in several parts).", call.Name),
		IsError: true,
	}
}

// callTool is the innermost ToolNext: it calls the registry. A persona's
// registry holds only the tools it allows, so a call of one it refuses
// fails exactly as a call of an unknown tool does.
func (r *run) callTool(ctx context.Context, call llm.ToolCall) ToolResult {
	reg := r.a.opts.Tools
	if p := r.in.Persona; p != nil && p.Allow != nil {
		reg = reg.Filter(p.Allow)
	}
	if len(r.allowed) > 0 && !slices.Contains(r.allowed, call.Name) { // known or not, refused or not
		usable := slices.DeleteFunc(slices.Clone(r.allowed), func(n string) bool { return !r.in.Persona.allows(n) })
		return ToolResult{Err: fmt.Errorf("tool %s is not available while the %s skill is active; it allows only %s", call.Name, r.in.Skill, strings.Join(usable, ", "))}
	}
	if r.deferred(call.Name) {
		return ToolResult{Err: fmt.Errorf("tool %s is not loaded yet: call tool_search with query \"select:%s\" first to get its schema", call.Name, call.Name)}
	}
	out, err := reg.Call(ctx, call.Name, json.RawMessage(call.Arguments))
	return ToolResult{Content: out, Err: err}
}

// toolContext bounds one call of the named tool by the tool timeout, unless
// the tool keeps its own time limit.
func (a *Agent) toolContext(ctx context.Context, name string) (context.Context, context.CancelFunc) {
	if t, ok := a.opts.Tools.Get(name); ok {
		if st, ok := t.(tools.SelfTimed); ok && st.SelfTimed() {
			return context.WithCancel(ctx)
		}
	}
	return context.WithTimeout(ctx, a.opts.ToolTimeout)
}
