package tools

import (
	"context"

	"github.com/deerflow/deerflow/event"
)

// Env describes the conversation a tool call belongs to. The agent puts it
// in the context of every call.
type Env struct {
	ThreadID string
	RunID    string
	ChatKey  string // channel:chat[:topic]
	UserID   string // channel:user
	CallID   string // the model's tool-call id
	Model    string // the name of the model the run uses
	// Turn numbers the model responses of the run (1 for the first);
	// Batch names every tool call of this call's response, in order, and
	// Index is this call's place in it. Tools that limit how often they
	// are called per response (task) count with these.
	Turn  int
	Batch []string
	Index int
	// Attach gives an image to the run's next model call (view_image).
	// Nil when the run's model cannot see images.
	Attach func(mime string, data []byte)
	// Emit sends a progress event (files presented, a subagent's task, a
	// status) to whoever watches the run (the router, a subagent's
	// parent). Nil means nobody listens.
	Emit func(event.Event)
	// Allow reports whether the run may use the named tool (its persona's
	// and its skill's restrictions); nil allows all. A subagent the call
	// starts may use only the tools it allows.
	Allow func(tool string) bool
	// Load offers a deferred tool (see agent.Options.Deferred) to the
	// model for the rest of the run and lets it be called (tool_search).
	// Nil when the run defers nothing.
	Load func(tool string)
}

type envKey struct{}

// WithEnv returns ctx carrying env.
func WithEnv(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// EnvFrom returns the Env in ctx, or an empty one.
func EnvFrom(ctx context.Context) *Env {
	if e, ok := ctx.Value(envKey{}).(*Env); ok && e != nil {
		return e
	}
	return &Env{}
}

// Emit reports ev through the Env in ctx, if anyone listens.
func Emit(ctx context.Context, ev event.Event) {
	if e := EnvFrom(ctx); e.Emit != nil {
		e.Emit(ev)
	}
}
