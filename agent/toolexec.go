package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// maxToolResult caps what any one tool result adds to the conversation.
// Tools cap their own output more tightly; this is the backstop.
const maxToolResult = 100_000

// runTools runs calls concurrently and returns one result message per call,
// in call order. Events from the tools are passed on from this goroutine.
func (r *run) runTools(ctx context.Context, turn int, calls []llm.ToolCall) []*store.Message {
	type done struct {
		i   int
		res ToolResult
		dur time.Duration
	}
	evs := make(chan event.Event, 16)
	fin := make(chan done, len(calls))
	closed := make(chan struct{})
	defer close(closed)

	starts := make([]event.ToolCall, len(calls))
	batch := make([]string, len(calls))
	for i, call := range calls {
		starts[i] = event.ToolCall{CallID: call.ID, Name: call.Name, Summary: summarize(call)}
		batch[i] = call.Name
		r.emit(starts[i])
	}
	var attach func(string, []byte)
	if r.model.Vision {
		var mu sync.Mutex
		attach = func(mime string, data []byte) {
			mu.Lock()
			r.images = append(r.images, llm.Image{MIME: mime, Data: data})
			mu.Unlock()
		}
	}
	workspace := r.in.Workspace
	if workspace == "" {
		workspace = r.in.ThreadID
	}
	for i, call := range calls {
		env := &tools.Env{
			ThreadID: workspace, RunID: r.in.RunID, ChatKey: r.in.ChatKey, UserID: r.in.UserID, CallID: call.ID,
			Model: r.model.Name, Turn: turn, Batch: batch, Index: i, Attach: attach,
			Emit: func(e event.Event) {
				if e == nil {
					return
				}
				select {
				case evs <- e:
				case <-closed:
				}
			},
		}
		go func() {
			start := time.Now()
			tctx, cancel := r.a.toolContext(tools.WithEnv(ctx, env), call.Name)
			defer cancel()
			res := r.a.chain.callTool(tctx, call, r.callTool)
			fin <- done{i: i, res: res, dur: time.Since(start)}
		}()
	}

	out := make([]*store.Message, len(calls))
	for n := 0; n < len(calls); {
		select {
		case ev := <-evs:
			r.emit(ev)
		case d := <-fin:
			n++
			call := calls[d.i]
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
			out[d.i] = &store.Message{
				Role: "tool", ToolCallID: call.ID, Name: call.Name, Content: content,
				RunID: r.in.RunID, Time: r.a.opts.Now(),
			}
			s := starts[d.i]
			r.emit(event.ToolResult{CallID: s.CallID, Name: s.Name, Summary: s.Summary,
				Result: tools.Clip(content, 200), IsError: d.res.IsError, Duration: d.dur})
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

// callTool is the innermost ToolNext: it calls the registry.
func (r *run) callTool(ctx context.Context, call llm.ToolCall) ToolResult {
	if len(r.allowed) > 0 && !slices.Contains(r.allowed, call.Name) {
		return ToolResult{Err: fmt.Errorf("tool %s is not available while the %s skill is active; it allows only %s", call.Name, r.in.Skill, strings.Join(r.allowed, ", "))}
	}
	out, err := r.a.opts.Tools.Call(ctx, call.Name, json.RawMessage(call.Arguments))
	if len(out) > maxToolResult {
		out = tools.Clip(out, maxToolResult) + fmt.Sprintf("\n\n[output truncated: the first %d of %d bytes are shown]", maxToolResult, len(out))
	}
	return ToolResult{Content: out, Err: err}
}

// summarize is a short, human-readable line for a tool call: its
// description argument when it has one, else its main argument (command,
// path, query, ...), else its arguments, shortened.
func summarize(call llm.ToolCall) string {
	var args map[string]any
	if json.Unmarshal([]byte(call.Arguments), &args) == nil {
		for _, k := range summaryKeys {
			if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
				return tools.Clip(strings.Join(strings.Fields(v), " "), 120)
			}
		}
	}
	return tools.Clip(call.Arguments, 120)
}

// summaryKeys are the arguments that best say what a call does, best first.
var summaryKeys = []string{"description", "command", "path", "query", "url", "pattern", "name"}

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
