package tools

import (
	"context"
	"io"
	"time"
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

// Event kinds of a subagent's task, each with a TaskEvent as Data.
const (
	EventTaskStarted  = "task_started"  // queued or started (Status pending or running)
	EventTaskProgress = "task_progress" // Line is the subagent's latest step
	EventTaskDone     = "task_done"     // Status is final; Result and Duration set
)

// Task statuses.
const (
	TaskPending     = "pending" // waiting for a free slot
	TaskRunning     = "running"
	TaskCompleted   = "completed"
	TaskFailed      = "failed"
	TaskCancelled   = "cancelled"
	TaskTimedOut    = "timed_out"
	TaskInterrupted = "interrupted" // found running after a restart
)

// TaskEvent reports on one subagent task.
type TaskEvent struct {
	ID          string
	Description string // 3–5 words from the lead agent
	Type        string // subagent type
	Status      string
	Line        string        // task_progress: one line about the latest step
	Result      string        // task_done: the start of the result, or the error
	Started     time.Time     // when it started running (zero while pending)
	Duration    time.Duration // task_done: running time
	Ahead       int           // pending: tasks waiting in front of it
}

// EventStatus is the Event kind of a run's overall progress (a research's
// plan with the steps done so far); its Data is a Status.
const EventStatus = "status"

// Status is the state of a run for the message that shows its progress.
type Status struct {
	Panel string // the whole state, replacing the one before
	Line  string // what changed, in one line, for channels that show activity lines
}
