package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// maxErrorDetail caps the error text a model reads about a failed tool call.
const maxErrorDetail = 500

// ToolErrors turns tool failures and panics into tool results the model
// can read. A bad-arguments error asks the model to call again with fixed
// arguments; any other error suggests continuing without the tool.
func ToolErrors() Middleware {
	return Middleware{
		Name: "tool_errors",
		WrapTool: func(ctx context.Context, _ *RunScope, call llm.ToolCall, next ToolNext) (res ToolResult) {
			defer func() {
				if p := recover(); p != nil {
					err := fmt.Errorf("panic: %v\n%s", p, debug.Stack())
					res = ToolResult{
						Content: fmt.Sprintf("Error: tool %s failed unexpectedly. Continue with the context you have, or try another tool.", call.Name),
						IsError: true,
						Err:     err,
					}
				}
			}()
			res = next(ctx, call)
			if res.Err == nil {
				return res
			}
			res.IsError = true
			switch {
			case tools.IsArgError(res.Err):
				res.Content = "Error: " + tools.Clip(res.Err.Error(), maxErrorDetail) + ". Fix the arguments and call the tool again."
			case errors.Is(res.Err, context.DeadlineExceeded) && ctx.Err() == nil:
				res.Content = fmt.Sprintf("Error: tool %s timed out. Try a smaller step or another approach.", call.Name)
			case ctx.Err() != nil:
				res.Content = fmt.Sprintf("Error: tool %s was cancelled before it finished.", call.Name)
			default:
				res.Content = fmt.Sprintf("Error: %s. Continue with the context you have, or try another approach.", tools.Clip(res.Err.Error(), maxErrorDetail))
			}
			return res
		},
	}
}
