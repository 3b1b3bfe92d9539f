// Package guard keeps one run's tool calls from hurting the run: a result
// too large for the model's context is cut in the middle (Budget), a tool
// that keeps failing the same way is switched off for the run (Breaker),
// and an existing file is not overwritten or edited unless the run has
// seen its current content (ReadFirst).
//
// Each guard is an agent.Middleware with its per-run state in the run's
// RunScope; Wrap puts them into a chain. It imports agent and llm, never
// the sandbox: files are looked at through Options.Files.
package guard

import (
	"context"
	"encoding/json"

	"github.com/deerflow/deerflow/agent"
)

// Options configures the guards. Zero fields take the documented defaults.
type Options struct {
	// Share is the part of the model's context window one tool result may
	// fill (at about 4 characters a token); 0 → DefaultShare.
	Share float64
	// Window returns the context window, in tokens, of the named model;
	// nil, or 0 for a model, means unknown: results are then held to
	// DefaultChars.
	Window func(model string) int
	// FailureLimit is how many times in a row a tool may fail the same way
	// before it is off for the rest of the run; 0 → 3, negative: never.
	FailureLimit int
	// Files looks at a file as the call's thread names it. Nil turns
	// read-before-write off.
	Files func(ctx context.Context, path string) (File, error)
}

// File is a file as it is now (see Options.Files).
type File struct {
	Path   string // the path, cleaned: the same file always has the same Path
	Exists bool
	Size   int64
	Lines  int
	Sum    [32]byte // changes whenever the content does
	Head   string   // its first lines
}

// Wrap returns base (an agent.Chain) with the guards in place. Tool calls
// pass, outermost first:
//
//  1. Breaker: outside the tool-error wrapper, so it sees every failure
//     as the model will read it (panics and timeouts included) and can add
//     its note to the last one.
//  2. base: tool errors (failures become results), then the model-only
//     wrappers.
//  3. ReadFirst: its refusals are results, not failures, so they never
//     trip the breaker.
//  4. Budget: innermost, on the tool's own output.
func Wrap(base []agent.Middleware, o Options) []agent.Middleware {
	out := []agent.Middleware{Breaker(o.FailureLimit)}
	out = append(out, base...)
	if o.Files != nil {
		out = append(out, ReadFirst(o.Files))
	}
	return append(out, Budget(o.Share, o.Window))
}

// callArgs are the arguments the guards look at.
type callArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
}

// argsOf reads a call's arguments; fields it cannot read stay zero.
func argsOf(raw string) callArgs {
	var a callArgs
	_ = json.Unmarshal([]byte(raw), &a)
	return a
}
