package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/llm"
)

// LoopLimits are the thresholds of loop detection. Zero fields take the
// defaults.
type LoopLimits struct {
	Window      int // how many recent tool-calling responses are compared; 0 → 20
	WarnRepeats int // the same calls this often in the window: warn; 0 → 3
	StopRepeats int // …this often: stop; 0 → 5
	ToolWarn    int // one tool called this often in a run: warn; 0 → 30
	ToolStop    int // …this often: stop; 0 → 50
}

func (l LoopLimits) withDefaults() LoopLimits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Window, 20)
	def(&l.WarnRepeats, 3)
	def(&l.StopRepeats, 5)
	def(&l.ToolWarn, 30)
	def(&l.ToolStop, 50)
	return l
}

type loopState struct {
	recent  []string       // hashes of the latest tool-calling responses
	perTool map[string]int // calls per tool in the run
	warned  map[string]bool
	note    string // a warning for the next request
}

// LoopDetection stops a model that repeats itself. Each response's set of
// tool calls is hashed (names and arguments, order ignored). When the same
// set comes back WarnRepeats times within the last Window responses, the
// next request carries a hidden note telling the model to change course;
// at StopRepeats the calls are dropped and the run ends with the model's
// text and a short note. One tool called ToolWarn times in a run is warned
// about the same way, and stopped at ToolStop.
func LoopDetection(limits LoopLimits) Middleware {
	l := limits.withDefaults()
	return Middleware{
		Name: "loop_detection",
		WrapModel: func(ctx context.Context, rs *RunScope, req *llm.Request, next ModelNext) (*llm.Response, error) {
			st := RunValue(rs, "loop_detection", func() *loopState {
				return &loopState{perTool: map[string]int{}, warned: map[string]bool{}}
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
			h := callsHash(resp.Message.ToolCalls)
			st.recent = append(st.recent, h)
			if len(st.recent) > l.Window {
				st.recent = st.recent[len(st.recent)-l.Window:]
			}
			repeats := 0
			for _, r := range st.recent {
				if r == h {
					repeats++
				}
			}
			for _, c := range resp.Message.ToolCalls {
				st.perTool[c.Name]++
			}
			if repeats >= l.StopRepeats {
				return stopCalls(resp, "I stopped here because I was repeating the same step without getting further. Tell me how you'd like to proceed."), nil
			}
			for _, c := range resp.Message.ToolCalls {
				if n := st.perTool[c.Name]; n >= l.ToolStop {
					return stopCalls(resp, fmt.Sprintf("I stopped here because I had used %s %d times for this request. Tell me how you'd like to proceed.", c.Name, n)), nil
				}
			}
			switch {
			case repeats >= l.WarnRepeats:
				st.note = fmt.Sprintf("[Note from the system] You have made exactly these tool calls %d times in this request without progress. Do not repeat them: use what you already have, try a different approach, or answer the person with what you know and what is missing.", repeats)
			default:
				for _, c := range resp.Message.ToolCalls {
					if n := st.perTool[c.Name]; n >= l.ToolWarn && !st.warned[c.Name] {
						st.warned[c.Name] = true
						st.note = fmt.Sprintf("[Note from the system] You have called %s %d times in this request. Make sure each call gets you closer to the answer; finish soon with what you have.", c.Name, n)
					}
				}
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

// callsHash identifies a set of tool calls: names and arguments (as
// canonical JSON when they parse), in any order.
func callsHash(calls []llm.ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		args := c.Arguments
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			if b, err := json.Marshal(v); err == nil { // sorted keys, no spacing
				args = string(b)
			}
		}
		parts[i] = c.Name + "\x00" + args
	}
	slices.Sort(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return string(sum[:16])
}
