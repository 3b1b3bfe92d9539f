package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/agent/loopdetect"
	"github.com/deerflow/deerflow/llm"
)

// loopState is a run's loop detection: its counts, and a warning for the
// next request.
type loopState struct {
	d    *loopdetect.Detector
	note string
}

// LoopDetection stops a model that repeats itself (see loopdetect). A
// warning goes to the model as a hidden note with the next request; a stop
// drops the response's tool calls and ends the run with the model's text
// and a short note.
func LoopDetection(limits loopdetect.Limits) Middleware {
	return Middleware{
		Name: "loop_detection",
		WrapModel: func(ctx context.Context, rs *RunScope, req *llm.Request, next ModelNext) (*llm.Response, error) {
			st := RunValue(rs, "loop_detection", func() *loopState {
				return &loopState{d: loopdetect.New(limits)}
			})
			if st.note != "" {
				cp := *req
				cp.Messages = append(slices.Clip(req.Messages), llm.Message{Role: llm.RoleUser, Content: st.note})
				req, st.note = &cp, ""
			}
			resp, err := next(ctx, req)
			if err != nil || len(resp.Message.ToolCalls) == 0 {
				return resp, err
			}
			stop, warn := st.d.Observe(resp.Message.ToolCalls)
			if stop != "" {
				return stopCalls(resp, stop), nil
			}
			if warn != "" {
				st.note = warn
			}
			return resp, nil
		},
	}
}

// stopCalls turns a tool-calling response into the run's final answer: its
// text (if any) and a note saying why it ended.
func stopCalls(resp *llm.Response, note string) *llm.Response {
	cp := *resp
	cp.Message.ToolCalls = nil
	cp.Message.Content = strings.TrimSpace(strings.TrimSpace(resp.Message.Content) + "\n\n" + note)
	cp.FinishReason = "stop"
	return &cp
}
