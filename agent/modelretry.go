package agent

import (
	"context"
	"errors"

	"github.com/deerflow/deerflow/llm"
)

// ModelRetry retries a model call whose stream was cut before it finished,
// up to n more times. Request-level failures are retried by the llm client,
// so this only sees mid-stream truncation.
func ModelRetry(n int) Middleware {
	return Middleware{
		Name: "model_retry",
		WrapModel: func(ctx context.Context, rs *RunScope, req *llm.Request, next ModelNext) (*llm.Response, error) {
			for attempt := 0; ; attempt++ {
				resp, err := next(ctx, req)
				var le *llm.Error
				if err == nil || attempt >= n || ctx.Err() != nil || !errors.As(err, &le) || le.Kind != llm.KindTruncated {
					return resp, err
				}
				rs.ResetText()
			}
		},
	}
}
