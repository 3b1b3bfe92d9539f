package router

import (
	"context"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/store"
)

// builtInName stands for the built-in agent in /agent's list and its
// buttons; "/agent default" returns a conversation to its binding.
const (
	builtInName = "default"
)

// cmdAgent answers /agent: without args it names the conversation's agent
// and lists the others (a button each); /agent NAME switches the
// conversation, across restarts and /new; /agent default returns it to
// its chat's or bot's agent.
func (r *Router) cmdAgent(ctx context.Context, in *bus.Inbound, args string) error {
	if r.opts.Agents == nil {
		return r.reply(ctx, in, "This deerflow has one agent; there is nothing to switch to.")
	}
	if args == "" {
		return r.listAgents(ctx, in)
	}
	name := strings.ToLower(strings.TrimSpace(args))
	if name == builtInName {
		name = ""
	}
	if err := r.opts.Agents.Choose(in.ChatKey(), name); err != nil {
		return r.reply(ctx, in, fmt.Sprintf("I couldn't switch: %v. /agent lists the agents.", err))
	}
	r.clearModelChoice(in.ChatKey())
	d, src, ok := r.opts.Agents.For(in)
	if !ok {
		return r.reply(ctx, in, "This conversation is now answered by the built-in agent, from your next message.")
	}
	if name == "" {
		return r.reply(ctx, in, fmt.Sprintf("This conversation is back with %s (%s), from your next message.", d.Name, src))
	}
	return r.reply(ctx, in, fmt.Sprintf("This conversation is now answered by %s, from your next message.", d.Name))
}

// listAgents shows the conversation's agent and the others.
func (r *Router) listAgents(ctx context.Context, in *bus.Inbound) error {
	defs, err := r.opts.Agents.List()
	if err != nil {
		r.log.Warn("listing agents", "err", err)
	}
	cur, src, ok := r.opts.Agents.For(in)
	var sb strings.Builder
	if ok {
		fmt.Fprintf(&sb, "Agent: %s (%s)\n\nAgents:\n", cur.Name, src)
	} else {
		sb.WriteString("Agent: the built-in one\n\nAgents:\n")
	}
	rec := &choice.Record{Kind: choice.Agent, Options: []string{builtInName}}
	sb.WriteString("• " + builtInName + " — the built-in agent, or this chat's usual one")
	if !ok {
		sb.WriteString(" (current)")
		rec.Current = 1
	}
	sb.WriteString("\n")
	for _, d := range defs {
		fmt.Fprintf(&sb, "• %s", d.Name)
		if d.Description != "" {
			fmt.Fprintf(&sb, " — %s", d.Description)
		}
		if d.FromChat() {
			sb.WriteString(" (created in a chat)")
		}
		if ok && d.Name == cur.Name {
			sb.WriteString(" (current)")
			rec.Current = len(rec.Options) + 1
		}
		sb.WriteString("\n")
		rec.Options = append(rec.Options, d.Name)
	}
	sb.WriteString("Use /agent NAME (or a button) to switch this conversation.")
	return r.replyChoice(ctx, in, sb.String(), rec)
}

// clearModelChoice drops the conversation's /models choice, so the newly
// chosen agent's model applies.
func (r *Router) clearModelChoice(key string) {
	threadID, err := r.threadFor(key)
	if err != nil {
		return
	}
	r.opts.Store.Update(func(tx *store.Tx) error {
		t, err := tx.Thread(threadID)
		if err != nil || t.Model == "" {
			return nil
		}
		t.Model = ""
		return tx.PutThread(t)
	})
}

// agentLine is /status's line about the conversation's agent; "" when
// there is only the built-in one.
func (r *Router) agentLine(in *bus.Inbound) string {
	if r.opts.Agents == nil {
		return ""
	}
	d, src, ok := r.opts.Agents.For(in)
	if !ok {
		return "Agent: built in\n"
	}
	return fmt.Sprintf("Agent: %s (%s)\n", d.Name, src)
}

// modelOf is the model a conversation uses: its /models choice, else its
// agent's, else the default ("").
func (r *Router) modelOf(in *bus.Inbound, chosen string) string {
	if chosen != "" || r.opts.Agents == nil {
		return chosen
	}
	if d, _, ok := r.opts.Agents.For(in); ok {
		return d.Model
	}
	return ""
}

// gatePlan offers a run the checklist tool (write_todos) only while plan
// mode is on in its conversation.
func (r *Router) gatePlan(in *agent.Input) {
	in.Persona = plan.Gate(in.Persona, r.opts.Plan != nil && r.opts.Plan.On(in.ChatKey))
}
