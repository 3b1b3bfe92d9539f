package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/event"
)

// ClarifyName is the name of the clarification tool.
const ClarifyName = "ask_clarification"

type clarifyArgs struct {
	Question string   `json:"question" desc:"The one question to ask, short and specific."`
	Type     string   `json:"clarification_type" enum:"missing_info,ambiguous_requirement,approach_choice,risk_confirmation,suggestion" desc:"Why you ask: information is missing, the request can be read several ways, there are approaches to choose from, a step is risky and needs a yes, or you suggest something."`
	Context  string   `json:"context,omitempty" desc:"What the person needs to know to answer, in a sentence or two."`
	Options  []string `json:"options,omitempty" desc:"Answers to choose from, when there are a few clear ones."`
}

// clarify is ask_clarification: its call ends the run and the question is
// what the person reads; their next message in the conversation answers it.
type clarify struct{ Tool }

// EndsRun: the question is the run's answer.
func (clarify) EndsRun() bool { return true }

// Clarify returns the ask_clarification tool.
func Clarify() Tool {
	return clarify{Func(ClarifyName,
		"Ask the person a question and wait for the answer, instead of guessing: when the request lacks something you need, can be read in different ways, leaves a choice of approach to them, or asks for something risky. Your turn ends with the question; their next message is the answer. Ask only what you cannot find out yourself.",
		func(ctx context.Context, in clarifyArgs) (string, error) {
			q := strings.TrimSpace(in.Question)
			if q == "" {
				return "", &ArgError{Tool: ClarifyName, Msg: "question must not be empty"}
			}
			var b strings.Builder
			b.WriteString("❓ " + q)
			if c := strings.TrimSpace(in.Context); c != "" {
				b.WriteString("\n\n" + c)
			}
			var opts []string
			for _, o := range in.Options {
				if o = strings.TrimSpace(o); o != "" {
					opts = append(opts, o)
				}
			}
			if len(opts) > 0 {
				b.WriteString("\n")
				for i, o := range opts {
					fmt.Fprintf(&b, "\n%d. %s", i+1, o)
				}
				b.WriteString("\n\nReply with a number, or in your own words.")
			}
			// Front ends that can offer the options as buttons use this;
			// the others show the answer, which says the same.
			Emit(ctx, event.Clarification{Question: q, Options: opts})
			return b.String(), nil
		})}
}
