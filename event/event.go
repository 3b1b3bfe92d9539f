// Package event is the vocabulary of what happens in a run: the agent, its
// tools and subagents emit these typed events, the runner journals them and
// every front end (the chat renderer, the HTTP API, the terminal) switches
// on their type. A front end that forgets a case is told by the compiler
// (through an exhaustive switch with a default that logs), not by a string
// that silently matches nothing.
//
// It imports no package of ours: tools, agent, runner and the front ends
// all stand on it.
package event

import (
	"io"
	"time"
)

// Event is one thing a run reports. The concrete types below are the only
// implementations.
type Event interface{ event() }

// Started: the run began on Model.
type Started struct{ Model string }

// TextDelta is the next piece of the model's answer.
type TextDelta struct{ Text string }

// ReasoningDelta is the next piece of the model's reasoning.
type ReasoningDelta struct{ Text string }

// TextReset: discard the text streamed since the last tool round; the
// model call is being retried.
type TextReset struct{}

// ToolCall: a tool call is about to run.
type ToolCall struct {
	CallID  string
	Name    string
	Summary string // its description argument, or a compact view of its arguments
}

// ToolResult: a tool call finished.
type ToolResult struct {
	CallID   string
	Name     string
	Summary  string
	Result   string // the start of the result
	IsError  bool
	Duration time.Duration
}

// FilesPresented: a tool presented files from the outputs to the person.
type FilesPresented struct{ Files []File }

// File is a file to deliver to the person. Open must be used to read it (it
// guards against the file being swapped for a link after it was checked).
type File struct {
	Name string // base name, for display
	Path string // virtual path, as the model knows it
	Size int64
	Open func() (io.ReadCloser, error) `json:"-"`
}

// Status is the run's overall progress (a research's plan with the steps
// done so far).
type Status struct {
	Panel string // the whole state, replacing the one before
	Line  string // what changed, in one line, for front ends that print lines
}

// Clarification: the run asks the person a question; the run's answer is
// that question, and the person's reply continues the conversation.
type Clarification struct {
	Question string
	Options  []string
	// Replies, when set, is what choosing each option says in the
	// conversation (a command, a word the front end knows); by default
	// the option itself.
	Replies []string `json:",omitempty"`
	// Keep: once answered, the message keeps the whole answer above the
	// choice (a plan); otherwise it shows the question and the choice.
	Keep bool `json:",omitempty"`
}

// Todos: the run's checklist (write_todos) changed; Items is the whole
// list now, in order.
type Todos struct{ Items []Todo }

// Todo is one item of a checklist.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"` // TodoPending, TodoInProgress or TodoCompleted
}

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// TaskStarted: a subagent task was queued (Status pending) or started.
type TaskStarted struct{ Task Task }

// TaskProgress: a subagent took a step (Task.Line).
type TaskProgress struct{ Task Task }

// TaskDone: a subagent task ended (Task.Status is final; Result and
// Duration are set).
type TaskDone struct{ Task Task }

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

// Task reports on one subagent task.
type Task struct {
	ID          string
	Description string // 3–5 words from the lead agent
	Type        string // subagent type
	Status      string
	Line        string        // TaskProgress: one line about the latest step
	Result      string        // TaskDone: the start of the result, or the error
	Started     time.Time     // when it started running (zero while pending)
	Duration    time.Duration // TaskDone: running time
	Ahead       int           // pending: tasks waiting in front of it
	// Usage, on TaskDone, is what the subagent's model calls cost; zero
	// when its run ended without an answer (failed, stopped).
	Usage Usage
}

// Usage is what a run's model calls cost.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// Cost is the tokens' price in US dollars, from the model's
	// price_in and price_out; 0 when they are unknown.
	Cost float64 `json:"cost_usd,omitempty"`
}

// Answer ends a run that finished: Text is its answer. Capped says the run
// used all of its turns before the model finished (Text then says so).
type Answer struct {
	Text   string
	Usage  Usage
	Capped bool
}

// Error ends a run that failed: Text is one sentence for the person, Err
// the detail for logs.
type Error struct {
	Text string
	Err  error
}

// Stopped ends a run that was cancelled; Err is the cause (ErrStopped for
// /stop or a later run's interrupt, the shutdown's cause otherwise).
type Stopped struct{ Err error }

func (Started) event()        {}
func (TextDelta) event()      {}
func (ReasoningDelta) event() {}
func (TextReset) event()      {}
func (ToolCall) event()       {}
func (ToolResult) event()     {}
func (FilesPresented) event() {}
func (Status) event()         {}
func (Clarification) event()  {}
func (Todos) event()          {}
func (TaskStarted) event()    {}
func (TaskProgress) event()   {}
func (TaskDone) event()       {}
func (Answer) event()         {}
func (Error) event()          {}
func (Stopped) event()        {}

// Final reports whether ev ends a run: Answer, Error or Stopped.
func Final(ev Event) bool {
	switch ev.(type) {
	case Answer, Error, Stopped:
		return true
	}
	return false
}

// Name is ev's wire name, as the HTTP API and logs spell it.
func Name(ev Event) string {
	switch ev.(type) {
	case Started:
		return "run_started"
	case TextDelta:
		return "message_delta"
	case ReasoningDelta:
		return "reasoning_delta"
	case TextReset:
		return "message_reset"
	case ToolCall:
		return "tool_start"
	case ToolResult:
		return "tool_end"
	case FilesPresented:
		return "files"
	case Status:
		return "status"
	case Clarification:
		return "clarification"
	case Todos:
		return "todos"
	case TaskStarted:
		return "task_started"
	case TaskProgress:
		return "task_progress"
	case TaskDone:
		return "task_done"
	case Answer:
		return "message"
	case Error:
		return "error"
	case Stopped:
		return "stopped"
	case Began:
		return "metadata"
	case RolledBack:
		return "rolled_back"
	case Ended:
		return "end"
	}
	return "unknown"
}
