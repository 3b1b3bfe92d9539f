package acp

import (
	"context"
	"errors"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deerflow/deerflow/tools"
)

// RequestPermission answers a permission request: by the agent's policy,
// or (Ask) by the person, asked in the chat with the request's options as
// buttons. A question nobody can be asked, or left unanswered, rejects; a
// /stop while it waits cancels the request.
func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	title := "an action"
	if p.ToolCall.Title != nil && *p.ToolCall.Title != "" {
		title = *p.ToolCall.Title
	}
	policy := c.inv.agent.Permissions
	if policy == "" || policy == Ask {
		if i, by, ok := c.ask(ctx, title, p.Options); ok {
			c.inv.progress("› permission for " + title + ": " + p.Options[i].Name + by)
			return selected(p.Options[i].OptionId), nil
		}
		if c.ctx.Err() != nil {
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
				Cancelled: &sdk.RequestPermissionOutcomeCancelled{},
			}}, nil
		}
		policy = Deny
	}
	kinds := []sdk.PermissionOptionKind{sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	verdict := "refused"
	if policy == Allow {
		kinds = []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways}
		verdict = "allowed"
	}
	c.inv.progress("› permission for " + title + ": " + verdict)
	for _, k := range kinds {
		for _, o := range p.Options {
			if o.Kind == k {
				return selected(o.OptionId), nil
			}
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
		Cancelled: &sdk.RequestPermissionOutcomeCancelled{},
	}}, nil
}

func selected(id sdk.PermissionOptionId) sdk.RequestPermissionResponse {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
		Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id},
	}}
}

// ask puts the request to the person who started the run and returns the
// option they chose; ok is false when there was no one to ask or no
// answer. The wait ends with the invocation (/stop, its time limit) or
// the request (the agent gave up on it).
func (c *client) ask(reqCtx context.Context, title string, opts []sdk.PermissionOption) (i int, by string, ok bool) {
	env := c.inv.env
	if c.inv.t.o.Ask == nil || env == nil || env.ChatKey == "" || len(opts) == 0 {
		return 0, "", false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(reqCtx, cancel)
	defer stop()
	labels := make([]string, len(opts))
	for k, o := range opts {
		labels[k] = optionLabel(o)
	}
	q := "🔐 " + c.inv.agent.Name + " asks for permission: " + tools.Clip(strings.TrimSpace(title), 300)
	i, err := c.inv.t.o.Ask(ctx, env.ChatKey, env.UserID, q, labels, AskWait)
	switch {
	case err == nil && i >= 0 && i < len(opts):
		return i, " (your answer)", true
	case err != nil && !errors.Is(err, context.Canceled):
		c.inv.t.o.Logger.Info("acp: a permission question went unanswered", "agent", c.inv.agent.Name, "err", err)
	}
	return 0, "", false
}

// optionLabel is an option's button: its name, else its kind.
func optionLabel(o sdk.PermissionOption) string {
	if name := strings.TrimSpace(o.Name); name != "" {
		return name
	}
	return string(o.Kind)
}
