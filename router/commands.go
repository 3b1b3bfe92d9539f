package router

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/store"
)

// commandWord matches a command name: a slash, then a word. Text like
// "/usr/bin/env" is not a command.
var commandWord = regexp.MustCompile(`^/[A-Za-z][A-Za-z0-9_-]*$`)

// parseCommand splits "/name args" when text is a known command. Unknown
// slash words are commands too (answered with help); paths are not.
func parseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(text, " ")
	if nl := strings.IndexByte(word, '\n'); nl >= 0 {
		word, rest = word[:nl], word[nl+1:]+" "+rest
	}
	if !commandWord.MatchString(word) {
		return "", "", false
	}
	return strings.ToLower(word[1:]), strings.TrimSpace(rest), true
}

func (r *Router) command(ctx context.Context, in *bus.Inbound, name, args string) error {
	switch name {
	case "new":
		return r.cmdNew(ctx, in)
	case "status":
		return r.cmdStatus(ctx, in)
	case "stop":
		return r.cmdStop(ctx, in)
	case "retry":
		return r.cmdRetry(ctx, in)
	case "research":
		if r.opts.Research == nil {
			return r.reply(ctx, in, "Research is switched off on this deerflow (research.enabled: false).")
		}
		return r.reply(ctx, in, "Tell me what to research: /research <topic>. I'll propose a plan for you to review first; /research auto <topic> starts without the review.")
	case "models":
		return r.cmdModels(ctx, in, args)
	case "agent":
		return r.cmdAgent(ctx, in, args)
	case "memory":
		if r.opts.Memory == nil {
			return r.reply(ctx, in, "Long-term memory is switched off on this deerflow (memory.enabled: false), so I remember nothing between conversations.")
		}
		var p *agent.Persona
		if r.opts.Agents != nil {
			p = r.opts.Agents.Persona(in)
		}
		return r.reply(ctx, in, r.opts.Memory.Command(agents.MemoryKey(p, in.Channel+":"+in.UserID), agents.MemoryKey(p, in.ChatKey()), in.Group, args))
	case "skills":
		if r.opts.Skills == nil {
			return r.reply(ctx, in, "No skills are available here.")
		}
		return r.reply(ctx, in, r.opts.Skills.Command(in.Channel+":"+in.UserID, args))
	case "schedules", "unschedule":
		return r.cmdSchedules(ctx, in, name, args)
	case "plan", "goal":
		switch {
		case r.opts.Plan == nil:
			return r.reply(ctx, in, "Plans and goals are not available on this deerflow.")
		case name == "plan":
			return r.reply(ctx, in, r.opts.Plan.PlanCommand(in.ChatKey(), args))
		}
		return r.reply(ctx, in, r.opts.Plan.GoalCommand(in.ChatKey(), args))
	case "help", "start":
		return r.reply(ctx, in, helpText())
	}
	return r.reply(ctx, in, fmt.Sprintf("Unknown command /%s.\n\n%s", name, helpText()))
}

// isCommand reports whether name is one of the chat commands.
func isCommand(name string) bool {
	if name == "start" {
		return true
	}
	for _, c := range bus.Commands {
		if c.Name == name {
			return true
		}
	}
	return false
}

// StartsRun reports whether text is a command that starts work running
// like a message (a research with its topic, a skill with its task) rather
// than one answered at once.
func (r *Router) StartsRun(text string) bool {
	name, args, ok := parseCommand(strings.TrimSpace(text))
	if !ok || args == "" {
		return false
	}
	if name == "research" {
		_, topic := researchArgs(args)
		return r.opts.Research != nil && topic != ""
	}
	return r.skill(name) != ""
}

// researchArgs splits "/research" arguments into the mode and the topic:
// "auto <topic>" runs without the review.
func researchArgs(args string) (mode, topic string) {
	word, rest, _ := strings.Cut(args, " ")
	if strings.EqualFold(word, "auto") {
		return "auto", strings.TrimSpace(rest)
	}
	return "start", strings.TrimSpace(args)
}

func helpText() string {
	var sb strings.Builder
	sb.WriteString("Send me a message and I'll work on it. Commands:\n")
	for _, c := range bus.Commands {
		fmt.Fprintf(&sb, "/%s — %s\n", c.Name, c.Help)
	}
	return strings.TrimRight(sb.String(), "\n")
}

func (r *Router) cmdNew(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	if c := r.opts.Runner.Conv(key); in.Press == nil && c.Active != nil && !c.Answered && r.ShowsButtons(in.Channel) {
		// Starting over mid-run is easy to regret: ask first.
		return r.replyChoice(ctx, in, "I'm still working on your last message here. Start a new conversation anyway? (The current reply goes on in the old one.)",
			&choice.Record{Kind: choice.New, Options: []string{newConfirm, newKeep}})
	}
	var id string
	err := r.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		id, err = r.newThreadTx(tx, key)
		return err
	})
	if err != nil {
		r.log.Error("creating thread", "chat", key, "err", err)
		if errors.Is(err, store.ErrDamaged) {
			return r.reply(ctx, in, DamagedChatText)
		}
		return r.reply(ctx, in, "I couldn't start a new conversation; please try again.")
	}
	r.mu.Lock()
	r.convLocked(key).threadID = id
	r.mu.Unlock()
	return r.reply(ctx, in, "Started a new conversation. What would you like to do?")
}

func (r *Router) cmdStop(ctx context.Context, in *bus.Inbound) error {
	stopped, dropped := r.opts.Runner.Stop(in.ChatKey())
	if !stopped && r.opts.Research != nil {
		if id, err := r.threadFor(in.ChatKey()); err == nil && r.opts.Research.Cancel(id) {
			text := "Dropped the research."
			if dropped > 0 {
				text += fmt.Sprintf(" Dropped %d waiting message(s).", dropped)
			}
			return r.reply(ctx, in, text)
		}
	}
	switch {
	case !stopped && dropped == 0:
		return r.reply(ctx, in, "Nothing is running in this conversation.")
	case dropped > 0:
		// The stopped run reports "Stopped." itself.
		return r.reply(ctx, in, fmt.Sprintf("Dropped %d waiting message(s).", dropped))
	}
	return nil
}

func (r *Router) cmdStatus(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := r.threadFor(key)
	if err != nil {
		return r.reply(ctx, in, "I couldn't read this conversation's state; please try again.")
	}
	t, err := r.opts.Store.Thread(threadID)
	if err != nil {
		t = &store.Thread{ID: threadID}
	}
	var count int
	var today int64
	r.opts.Store.View(func(tx *store.Tx) error {
		today = tokens.Today(tx, key, r.opts.Now())
		count, err = tx.MessageCount(threadID)
		return err
	})
	model, _ := r.opts.Agent.Model(r.modelOf(in, t.Model))
	// Once the answer (or "Stopped.") is given, the user sees the run as
	// over, even while it is still recording its state.
	rc := r.opts.Runner.Conv(key)
	queued, busy := rc.Waiting, rc.Active != nil && !rc.Answered
	r.mu.Lock()
	tasks := r.tasksStatus(r.convLocked(key))
	r.mu.Unlock()

	var sb strings.Builder
	r.writeThread(&sb, t, count, today, model)
	sb.WriteString(r.agentLine(in))
	switch {
	case busy && !rc.Active.Info().Started.IsZero():
		fmt.Fprintf(&sb, "Run: working for %s\n", r.opts.Now().Sub(rc.Active.Info().Started).Round(time.Second))
	case busy:
		sb.WriteString("Run: working\n")
	default:
		sb.WriteString("Run: idle\n")
	}
	sb.WriteString(tasks + r.scheduleStatus(key))
	if r.opts.Plan != nil {
		sb.WriteString(r.opts.Plan.StatusText(key, threadID))
	}
	if r.opts.Research != nil {
		if line := r.opts.Research.Status(threadID); line != "" {
			sb.WriteString(line)
			sb.WriteString("\n")
		}
	}
	r.writeHealth(&sb)
	fmt.Fprintf(&sb, "Queued: %d\nUptime: %s", queued, r.opts.Now().Sub(r.started).Round(time.Second))
	if r.opts.Version != "" {
		fmt.Fprintf(&sb, "\nVersion: %s", r.opts.Version)
	}
	return r.reply(ctx, in, sb.String())
}

// writeThread adds the /status lines about the conversation's thread: its
// id and title, messages, model, tokens (and the day's budget) and cost.
func (r *Router) writeThread(sb *strings.Builder, t *store.Thread, count int, today int64, model agent.ModelRef) {
	fmt.Fprintf(sb, "Thread: %s", t.ID)
	if t.Title != "" {
		fmt.Fprintf(sb, " — %s", t.Title)
	}
	fmt.Fprintf(sb, "\nMessages: %d\nModel: %s (%s)\n", count, model.Name, model.ID)
	fmt.Fprintf(sb, "Tokens: %d in this thread (%d in, %d out)", t.PromptTokens+t.CompletionTokens, t.PromptTokens, t.CompletionTokens)
	if budget := r.opts.Agent.DailyTokenBudget(); budget > 0 {
		fmt.Fprintf(sb, "; today %d of %d in this conversation", today, budget)
	}
	sb.WriteString("\n")
	if cost := model.Price.Cost(t.PromptTokens, t.CompletionTokens); cost > 0 {
		fmt.Fprintf(sb, "Cost: about %s at %s's prices\n", tokens.CostText(cost), model.Name)
	}
}

// writeHealth adds the /status lines about degraded parts of the service.
func (r *Router) writeHealth(sb *strings.Builder) {
	if r.opts.Health == nil {
		return
	}
	for _, line := range r.opts.Health() {
		sb.WriteString(line)
		sb.WriteString("\n")
	}
}

func (r *Router) cmdModels(ctx context.Context, in *bus.Inbound, args string) error {
	threadID, err := r.threadFor(in.ChatKey())
	if err != nil {
		return r.reply(ctx, in, "I couldn't read this conversation's state; please try again.")
	}
	var current string
	if t, err := r.opts.Store.Thread(threadID); err == nil {
		current = t.Model
	}
	cur, _ := r.opts.Agent.Model(current)
	models := r.opts.Agent.Models()
	if args == "" {
		var sb strings.Builder
		sb.WriteString("Models:\n")
		rec := &choice.Record{Kind: choice.Model}
		for i, m := range models {
			fmt.Fprintf(&sb, "• %s — %s", m.Name, m.ID)
			if m.Description != "" {
				fmt.Fprintf(&sb, ": %s", m.Description)
			}
			if m.Name == cur.Name {
				sb.WriteString(" (current)")
				rec.Current = i + 1
			}
			sb.WriteString("\n")
			rec.Options = append(rec.Options, m.Name)
		}
		sb.WriteString("Use /models NAME (or a button) to switch this conversation.")
		return r.replyChoice(ctx, in, sb.String(), rec)
	}
	ref, ok := r.opts.Agent.Model(args)
	if !ok {
		names := make([]string, len(models))
		for i, m := range models {
			names[i] = m.Name
		}
		return r.reply(ctx, in, fmt.Sprintf("There is no model called %q. Available: %s.", args, strings.Join(names, ", ")))
	}
	err = r.opts.Store.Update(func(tx *store.Tx) error {
		t, err := tx.Thread(threadID)
		if err != nil {
			return err
		}
		t.Model = ref.Name
		return tx.PutThread(t)
	})
	if err != nil {
		r.log.Error("switching model", "thread", threadID, "err", err)
		return r.reply(ctx, in, "I couldn't switch the model; please try again.")
	}
	return r.reply(ctx, in, fmt.Sprintf("This conversation now uses %s (%s). It applies from your next message.", ref.Name, ref.ID))
}

// cmdRetry runs the conversation's last user message again, as a new
// message (its files are still in the thread's uploads).
func (r *Router) cmdRetry(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := r.threadFor(key)
	if err != nil {
		r.log.Error("resolving thread", "chat", key, "err", err)
		return r.reply(ctx, in, "I couldn't open this conversation's history; please try again.")
	}
	var last *store.Message
	err = r.opts.Store.View(func(tx *store.Tx) error {
		var err error
		last, err = tx.LastMessage(threadID, func(m *store.Message) bool {
			return m.Role == "user" && !m.Hidden && strings.TrimSpace(m.Content) != ""
		})
		return err
	})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			r.log.Error("reading the last message", "thread", threadID, "err", err)
		}
		if errors.Is(err, store.ErrDamaged) {
			return r.reply(ctx, in, agent.DamagedText)
		}
		return r.reply(ctx, in, "There is no message of yours in this conversation to run again.")
	}
	again := *in
	again.Text, again.Skill, again.EventKey, again.Files = last.Content, "", "", nil
	if r.opts.Research != nil {
		again.Research = "retry"
	}
	return r.enqueue(ctx, &again)
}
