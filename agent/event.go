package agent

import (
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// EventKind says what happened in a run.
type EventKind int

const (
	// EventStarted: the run began; RunID and Model are set.
	EventStarted EventKind = iota
	// EventTextDelta: Text is the next piece of the model's answer.
	EventTextDelta
	// EventReasoningDelta: Text is the next piece of the model's reasoning.
	EventReasoningDelta
	// EventTextReset: discard the text streamed since the last tool round;
	// the model call is being retried.
	EventTextReset
	// EventToolStart: Tool describes a call about to run.
	EventToolStart
	// EventToolEnd: Tool describes a finished call (Result, IsError set).
	EventToolEnd
	// EventTool: a tool reported something (Custom is set), e.g. files.
	EventTool
	// EventAnswer: the run finished; Text is the final answer.
	EventAnswer
	// EventError: the run failed; Text is one sentence for the user, Err the
	// detail for logs.
	EventError
	// EventStopped: the run was cancelled (by /stop or shutdown).
	EventStopped
)

func (k EventKind) String() string {
	return [...]string{"started", "text_delta", "reasoning_delta", "text_reset", "tool_start", "tool_end", "tool", "answer", "error", "stopped"}[k]
}

// ToolActivity describes one tool call for people watching the run.
type ToolActivity struct {
	CallID   string
	Name     string
	Summary  string // a short description of the call (its description arg, or a compact view of its args)
	Result   string // on EventToolEnd: the start of the result
	IsError  bool
	Duration time.Duration
}

// Event is one thing a run reports. Which fields are set depends on Kind.
type Event struct {
	Kind     EventKind
	RunID    string
	ThreadID string
	Model    string
	Text     string
	Tool     *ToolActivity
	Custom   *tools.Event
	Usage    llm.Usage // on EventAnswer: the run's total
	// Capped, on EventAnswer, says the run used all of its turns before the
	// model finished; Text then says so to the user.
	Capped bool
	Err    error
}
