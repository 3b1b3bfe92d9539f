// Package loopdetect notices a model that repeats itself: the same set of
// tool calls coming back again and again, or one tool called too often in
// a run. It only keeps count and gives verdicts; the agent's loop
// detection middleware acts on them. It must not import agent.
package loopdetect

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/llm"
)

// Limits are the thresholds of loop detection. Zero fields take the
// defaults.
type Limits struct {
	Window      int // how many recent tool-calling responses are compared; 0 → 20
	WarnRepeats int // the same calls this often in the window: warn; 0 → 3
	StopRepeats int // …this often: stop; 0 → 5
	ToolWarn    int // one tool called this often in a run: warn; 0 → 30
	ToolStop    int // …this often: stop; 0 → 50
}

func (l Limits) withDefaults() Limits {
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

// Detector is one run's count of its tool calls. It is not safe for
// concurrent use; a run's model calls happen one after another.
type Detector struct {
	l       Limits
	recent  []string       // hashes of the latest tool-calling responses
	perTool map[string]int // calls per tool in the run
	warned  map[string]bool
}

// New returns a Detector for one run with limits (zero fields take the
// defaults).
func New(limits Limits) *Detector {
	return &Detector{l: limits.withDefaults(), perTool: map[string]int{}, warned: map[string]bool{}}
}

// Observe counts one response's tool calls. Each response's set of calls
// is hashed (names and arguments, order ignored). When the same set has
// come back StopRepeats times within the last Window responses, or one
// tool has been called ToolStop times in the run, stop says why the run
// should end, for the person. Otherwise, at WarnRepeats repeats, or the
// first time a tool reaches ToolWarn calls, warn is a note for the model's
// next request telling it to change course.
func (d *Detector) Observe(calls []llm.ToolCall) (stop, warn string) {
	l := d.l
	h := callsHash(calls)
	d.recent = append(d.recent, h)
	if len(d.recent) > l.Window {
		d.recent = d.recent[len(d.recent)-l.Window:]
	}
	repeats := 0
	for _, r := range d.recent {
		if r == h {
			repeats++
		}
	}
	for _, c := range calls {
		d.perTool[c.Name]++
	}
	if repeats >= l.StopRepeats {
		return "I stopped here because I was repeating the same step without getting further. Tell me how you'd like to proceed.", ""
	}
	for _, c := range calls {
		if n := d.perTool[c.Name]; n >= l.ToolStop {
			return fmt.Sprintf("I stopped here because I had used %s %d times for this request. Tell me how you'd like to proceed.", c.Name, n), ""
		}
	}
	if repeats >= l.WarnRepeats {
		return "", fmt.Sprintf("[Note from the system] You have made exactly these tool calls %d times in this request without progress. Do not repeat them: use what you already have, try a different approach, or answer the person with what you know and what is missing.", repeats)
	}
	for _, c := range calls {
		if n := d.perTool[c.Name]; n >= l.ToolWarn && !d.warned[c.Name] {
			d.warned[c.Name] = true
			warn = fmt.Sprintf("[Note from the system] You have called %s %d times in this request. Make sure each call gets you closer to the answer; finish soon with what you have.", c.Name, n)
		}
	}
	return "", warn
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
