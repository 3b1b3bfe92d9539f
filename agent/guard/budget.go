package guard

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

const (
	// DefaultShare is the part of the context window one result may fill.
	DefaultShare = 0.1
	// DefaultChars is the limit when the model's window is unknown (the
	// same as bash's own).
	DefaultChars = 20_000
	// MinChars and MaxChars bound the limit whatever the window: a tiny
	// window still gets a useful result, a huge one no result that is
	// never useful in one piece.
	MinChars = 2_000
	MaxChars = 100_000
	// noteRoom is how far past the limit a result may go uncut: a tool
	// that cut its own output to the limit adds a note, which is not cut
	// a second time.
	noteRoom = 1_000
	// charsPerToken is the usual rough ratio.
	charsPerToken = 4
)

// Limit is the most characters one tool result may keep for a model whose
// context window is window tokens (0: unknown).
func Limit(share float64, window int) int {
	if window <= 0 {
		return DefaultChars
	}
	if share <= 0 {
		share = DefaultShare
	}
	return min(max(int(share*float64(window)*charsPerToken), MinChars), MaxChars)
}

// Budget holds every tool's result to Limit for the run's model: a longer
// one keeps its start and its end, with a note in between saying how much
// was cut and how to read it.
func Budget(share float64, window func(model string) int) agent.Middleware {
	return agent.Middleware{
		Name: "tool_output_budget",
		WrapTool: func(ctx context.Context, rs *agent.RunScope, call llm.ToolCall, next agent.ToolNext) agent.ToolResult {
			res := next(ctx, call)
			w := 0
			if window != nil {
				w = window(tools.EnvFrom(ctx).Model)
			}
			limit := Limit(share, w)
			if len(res.Content) > limit+noteRoom && utf8.RuneCountInString(res.Content) > limit+noteRoom {
				res.Content = Cut(res.Content, limit, call)
			}
			return res
		},
	}
}

// Cut keeps about limit characters of s, its start and its end, cut at
// line ends where one is near, and says in between what was left out and
// how the call's tool can show it.
func Cut(s string, limit int, call llm.ToolCall) string {
	head := prefix(s, limit/2)
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	tail := suffix(s[len(head):], limit-utf8.RuneCountInString(head))
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	total := utf8.RuneCountInString(s)
	cut := total - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	note := fmt.Sprintf("[... %d of %d characters were cut from the middle of this result to fit the model's context (at most %d per tool result). %s ...]",
		cut, total, limit, readHint(s, head, tail, call))
	return strings.TrimRight(head, "\n") + "\n\n" + note + "\n\n" + strings.TrimLeft(tail, "\n")
}

// readHint says how to see the part of a result that was cut.
func readHint(s, head, tail string, call llm.ToolCall) string {
	switch call.Name {
	case "read_file":
		a := argsOf(call.Arguments)
		start := max(a.StartLine, 1)
		first := start + strings.Count(head, "\n")
		last := start + lines(s) - lines(tail) - 1
		if last < first {
			last = first
		}
		return fmt.Sprintf("Lines %d-%d (about) are not shown: read them with read_file start_line=%d end_line=%d, in smaller ranges if they are long, or grep the file for what you need.",
			first, last, first, last)
	case "bash":
		return "To see all of it, run the command again with its output redirected to a file under /mnt/user-data/workspace, then grep it or read it in parts with read_file start_line/end_line."
	}
	return "Ask the tool for less (a narrower query, a smaller range or page), or, where its output can be saved to a file, grep that file or read it in parts with read_file start_line/end_line."
}

// lines counts s's lines; a last line without a newline counts.
func lines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// prefix is the longest prefix of s holding at most n runes.
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// suffix is the longest suffix of s holding at most n runes.
func suffix(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
