package guard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// DefaultFailureLimit is how many same failures in a row switch a tool off.
const DefaultFailureLimit = 3

// breaker is one run's count of each tool's failures in a row.
type breaker struct {
	mu     sync.Mutex
	last   map[string]string // tool → its last failure, normalized
	streak map[string]int    // tool → failures in a row like last
	off    map[string]string // tool → the failure that switched it off
}

// Breaker switches a tool off for the rest of the run once it has failed
// limit times in a row with the same error (numbers aside): a call of it
// then gets a note instead of running. A success resets the count, and
// so does a different error. Loop detection (package loopdetect) catches
// the same calls repeated; this catches a tool that is broken whatever it
// is asked. A call cancelled with its run does not count.
func Breaker(limit int) agent.Middleware {
	if limit == 0 {
		limit = DefaultFailureLimit
	}
	return agent.Middleware{
		Name: "tool_breaker",
		WrapTool: func(ctx context.Context, rs *agent.RunScope, call llm.ToolCall, next agent.ToolNext) agent.ToolResult {
			if limit < 0 {
				return next(ctx, call)
			}
			b := agent.RunValue(rs, "guard.breaker", func() *breaker {
				return &breaker{last: map[string]string{}, streak: map[string]int{}, off: map[string]string{}}
			})
			if why, off := b.isOff(call.Name); off {
				return agent.ToolResult{IsError: true, Content: fmt.Sprintf(
					"Error: %s is switched off for the rest of this run: it failed %d times in a row with the same error (%s). Do not call it again now; use another tool, or go on with what you have and tell the person what could not be done.",
					call.Name, limit, why)}
			}
			res := next(ctx, call)
			if ctx.Err() != nil {
				return res
			}
			if b.note(call.Name, res, limit) {
				res.Content = strings.TrimRight(res.Content, "\n") + fmt.Sprintf(
					"\n\n[%s has now failed %d times in a row the same way and is switched off for the rest of this run: do not call it again; use another tool or go on without it.]",
					call.Name, limit)
			}
			return res
		},
	}
}

// isOff reports whether tool is switched off, and the failure that did it.
func (b *breaker) isOff(tool string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	why, off := b.off[tool]
	return why, off
}

// note counts res, a result of tool, and reports whether it switched the
// tool off. Only failures count (res.Err); a refusal by a guard is not one.
func (b *breaker) note(tool string, res agent.ToolResult, limit int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if res.Err == nil {
		delete(b.last, tool)
		delete(b.streak, tool)
		return false
	}
	key := normalize(res.Err.Error())
	if b.last[tool] != key {
		b.last[tool], b.streak[tool] = key, 0
	}
	b.streak[tool]++
	if b.streak[tool] < limit {
		return false
	}
	b.off[tool] = tools.Clip(strings.TrimSpace(res.Err.Error()), 200)
	return true
}

// normalize makes two failures that differ only in numbers (ids, times,
// sizes, ports), case or spacing compare equal.
func normalize(s string) string {
	var b strings.Builder
	digits, space := false, false
	for _, r := range strings.ToLower(tools.Clip(s, 500)) {
		switch {
		case unicode.IsDigit(r):
			if !digits {
				b.WriteByte('#')
			}
			digits, space = true, false
		case unicode.IsSpace(r):
			if !space {
				b.WriteByte(' ')
			}
			digits, space = false, true
		default:
			b.WriteRune(r)
			digits, space = false, false
		}
	}
	return strings.TrimSpace(b.String())
}
