package loopdetect

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/llm"
)

func TestObserve(t *testing.T) {
	call := func(name, args string) []llm.ToolCall { return []llm.ToolCall{{Name: name, Arguments: args}} }
	same := call("echo", `{"a":1,"b":2}`)
	reordered := call("echo", `{ "b": 2, "a": 1 }`)
	step := func(i int) []llm.ToolCall { return call("echo", `{"i":`+strings.Repeat("1", i)+`}`) }
	tests := []struct {
		name      string
		limits    Limits
		responses [][]llm.ToolCall
		wantWarn  []int // indexes of the responses that warn
		wantStop  int   // index of the response that stops; -1 none
	}{
		{"repeats, in any argument order", Limits{}, [][]llm.ToolCall{same, reordered, same, same, same}, []int{2, 3}, 4},
		{"different calls", Limits{}, [][]llm.ToolCall{step(1), step(2), step(3), step(4), step(5)}, nil, -1},
		{"one tool too often, warned once", Limits{ToolWarn: 2, ToolStop: 4}, [][]llm.ToolCall{step(1), step(2), step(3), step(4)}, []int{1}, 3},
		{"outside the window", Limits{Window: 2, WarnRepeats: 2, StopRepeats: 3}, [][]llm.ToolCall{same, step(1), step(2), same}, nil, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(tt.limits)
			var warned []int
			stopped := -1
			for i, calls := range tt.responses {
				stop, warn := d.Observe(calls)
				if warn != "" {
					warned = append(warned, i)
				}
				if stop != "" && stopped < 0 {
					stopped = i
				}
			}
			if stopped != tt.wantStop || len(warned) != len(tt.wantWarn) {
				t.Fatalf("warned at %v, stopped at %d; want %v, %d", warned, stopped, tt.wantWarn, tt.wantStop)
			}
			for i := range warned {
				if warned[i] != tt.wantWarn[i] {
					t.Fatalf("warned at %v, want %v", warned, tt.wantWarn)
				}
			}
		})
	}
}
