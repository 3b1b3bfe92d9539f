package agent

import (
	"context"

	"github.com/deerflow/deerflow/agent/loopdetect"
	"github.com/deerflow/deerflow/llm"
)

// ModelNext performs (the rest of) a model call.
type ModelNext func(ctx context.Context, req *llm.Request) (*llm.Response, error)

// ToolNext performs (the rest of) a tool call.
type ToolNext func(ctx context.Context, call llm.ToolCall) ToolResult

// ToolResult is what the model will read about a tool call.
type ToolResult struct {
	Content string
	IsError bool
	Err     error // the underlying error, for logs; never sent as is
}

// Middleware wraps model calls, tool calls, or both. A nil field passes
// through. Wrappers never rewrite stored history: history edits (repairs,
// summaries) are explicit, persisted steps of the run loop.
//
// Both wrappers are given the run the call belongs to (rs): its per-run
// memory (RunValue) and its stream (ResetText).
type Middleware struct {
	Name      string
	WrapModel func(ctx context.Context, rs *RunScope, req *llm.Request, next ModelNext) (*llm.Response, error)
	WrapTool  func(ctx context.Context, rs *RunScope, call llm.ToolCall, next ToolNext) ToolResult
}

// DefaultChain is the lead agent's middleware chain, outermost first, with
// the default loop limits. This is the one place its order is written
// down:
//
//  1. tool errors: any tool failure or panic becomes a tool result the
//     model can read and react to; the run never fails because of a tool.
//  2. loop detection: the same tool calls repeated (or one tool called too
//     often) get a hidden warning, then are dropped and the run ends; it
//     sits outside the retries, so a retried call counts once.
//  3. model retry: a stream cut mid-answer is retried (the streamed text is
//     reset first); request-level retries (429, 5xx, connection errors,
//     Retry-After) happen inside the llm client.
//
// Tool guards (the output budget, the failure breaker, read-before-write)
// are in package guard; cmd/deerflow adds them with guard.Wrap.
//
// History edits are not wrappers: dangling tool-call repair (package repair)
// and summarization (summarize.go) are explicit, persisted steps of the
// run loop, and an empty answer after tool calls is retried by the loop.
func DefaultChain() []Middleware { return Chain(loopdetect.Limits{}) }

// Chain is DefaultChain with the given loop limits.
func Chain(loops loopdetect.Limits) []Middleware {
	return []Middleware{
		ToolErrors(),
		LoopDetection(loops),
		ModelRetry(2),
	}
}

// chain is a composed middleware list.
type chain struct {
	model []func(context.Context, *RunScope, *llm.Request, ModelNext) (*llm.Response, error)
	tool  []func(context.Context, *RunScope, llm.ToolCall, ToolNext) ToolResult
}

func compose(mws []Middleware) chain {
	var c chain
	for _, m := range mws {
		if m.WrapModel != nil {
			c.model = append(c.model, m.WrapModel)
		}
		if m.WrapTool != nil {
			c.tool = append(c.tool, m.WrapTool)
		}
	}
	return c
}

// callModel runs req, a model call of the run rs, through the model
// wrappers, outermost first, ending at last.
func (c chain) callModel(ctx context.Context, rs *RunScope, req *llm.Request, last ModelNext) (*llm.Response, error) {
	next := last
	for i := len(c.model) - 1; i >= 0; i-- {
		wrap, inner := c.model[i], next
		next = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			return wrap(ctx, rs, req, inner)
		}
	}
	return next(ctx, req)
}

// callTool runs call, a tool call of the run rs, through the tool
// wrappers, outermost first, ending at last.
func (c chain) callTool(ctx context.Context, rs *RunScope, call llm.ToolCall, last ToolNext) ToolResult {
	next := last
	for i := len(c.tool) - 1; i >= 0; i-- {
		wrap, inner := c.tool[i], next
		next = func(ctx context.Context, call llm.ToolCall) ToolResult {
			return wrap(ctx, rs, call, inner)
		}
	}
	return next(ctx, call)
}
