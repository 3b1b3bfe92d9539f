package tools

import (
	"context"
	"io"
)

// Env describes the conversation a tool call belongs to. The agent puts it
// in the context of every call.
type Env struct {
	ThreadID string
	RunID    string
	ChatKey  string // channel:chat[:topic]
	UserID   string // channel:user
	CallID   string // the model's tool-call id
	// Emit sends a progress event to whoever watches the run (the router,
	// a subagent's parent). Nil means nobody listens.
	Emit func(Event)
}

// Event is something a tool reports while it runs or about its result, for
// the people watching; the model never sees it.
type Event struct {
	Kind string // e.g. "files", "task_started", "task_progress", "task_done"
	Data any
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
func Emit(ctx context.Context, ev Event) {
	if e := EnvFrom(ctx); e.Emit != nil {
		e.Emit(ev)
	}
}

// EventFiles is the Event kind of files a tool presents to the user; its
// Data is a []File.
const EventFiles = "files"

// File is a file to deliver to the user. Open must be used to read it (it
// guards against the file being swapped for a link after it was checked).
type File struct {
	Name string // base name
	Path string // virtual path, as the model knows it
	Size int64
	Open func() (io.ReadCloser, error)
}
