package agent

import (
	"context"
	"errors"

	"github.com/deerflow/deerflow/agent/message"
	"github.com/deerflow/deerflow/agent/summary"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// systemPrompt is built once per run: the sections do not change within
// it, and a stable prompt keeps the provider's cache warm across its
// model calls.
func (r *run) systemPrompt() string {
	if r.system == "" {
		r.system = r.a.prompt.Build(r.ctx, r.in)
	}
	return r.system
}

// messages is the model's view of the thread: the system prompt, then the
// history.
func (r *run) messages() []llm.Message {
	out := make([]llm.Message, 0, len(r.history)+1)
	out = append(out, llm.Message{Role: llm.RoleSystem, Content: r.systemPrompt()})
	if r.summary != "" {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: summary.Message(r.summary)})
	}
	for i, m := range r.history {
		lm := message.ToLLM(m)
		if i == r.userIdx && r.turnCtx != "" {
			lm.Content = r.turnCtx + "\n\n" + lm.Content
		}
		out = append(out, lm)
	}
	if len(r.images) > 0 {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: "The image(s) you asked to see with view_image:", Images: r.images})
	}
	if r.nudge != "" {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: r.nudge})
	}
	return out
}

// streamModel streams one answer from the model, passing deltas on as
// events (callModel wraps it).
func (r *run) streamModel(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	for c, err := range r.model.Model.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		switch {
		case c.Text != "":
			r.emit(event.TextDelta{Text: c.Text})
		case c.Reasoning != "":
			r.emit(event.ReasoningDelta{Text: c.Reasoning})
		case c.Done != nil:
			return c.Done, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, &llm.Error{Kind: llm.KindTruncated, Err: errors.New("stream ended without a final chunk")}
}

// toolSpecs is what the model is offered: the tools usable allows; tools
// that need vision only to models that have it.
func toolSpecs(reg *tools.Registry, usable func(string) bool, vision bool) []llm.ToolSpec {
	specs := reg.Specs()
	out := make([]llm.ToolSpec, 0, len(specs))
	for _, s := range specs {
		if !usable(s.Name) {
			continue
		}
		if t, ok := reg.Get(s.Name); ok && !vision {
			if v, ok := t.(tools.Visual); ok && v.NeedsVision() {
				continue
			}
		}
		out = append(out, llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}
