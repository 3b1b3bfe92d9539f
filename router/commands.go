package router

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
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

func (b *Router) command(ctx context.Context, in *bus.Inbound, name, args string) error {
	switch name {
	case "new":
		return b.cmdNew(ctx, in)
	case "status":
		return b.cmdStatus(ctx, in)
	case "stop":
		return b.cmdStop(ctx, in)
	case "retry":
		return b.cmdRetry(ctx, in)
	case "research":
		if b.opts.Research == nil {
			return b.reply(ctx, in, "Research is switched off on this deerflow (research.enabled: false).")
		}
		return b.reply(ctx, in, "Tell me what to research: /research <topic>. I'll propose a plan for you to review first; /research auto <topic> starts without the review.")
	case "models":
		return b.cmdModels(ctx, in, args)
	case "memory":
		if b.opts.Memory == nil {
			return b.reply(ctx, in, "Long-term memory is switched off on this deerflow (memory.enabled: false), so I remember nothing between conversations.")
		}
		return b.reply(ctx, in, b.opts.Memory.Command(in.Channel+":"+in.UserID, in.ChatKey(), in.Group, args))
	case "skills":
		if b.opts.Skills == nil {
			return b.reply(ctx, in, "No skills are available here.")
		}
		return b.reply(ctx, in, b.opts.Skills.Command(in.Channel+":"+in.UserID, args))
	case "help", "start":
		return b.reply(ctx, in, helpText())
	}
	return b.reply(ctx, in, fmt.Sprintf("Unknown command /%s.\n\n%s", name, helpText()))
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
func (b *Router) StartsRun(text string) bool {
	name, args, ok := parseCommand(strings.TrimSpace(text))
	if !ok || args == "" {
		return false
	}
	if name == "research" {
		_, topic := researchArgs(args)
		return b.opts.Research != nil && topic != ""
	}
	return b.skill(name) != ""
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

func (b *Router) cmdNew(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	var id string
	err := b.opts.Store.Update(func(tx *store.Tx) error {
		var err error
		id, err = b.newThreadTx(tx, key)
		return err
	})
	if err != nil {
		b.log.Error("creating thread", "chat", key, "err", err)
		if errors.Is(err, store.ErrDamaged) {
			return b.reply(ctx, in, DamagedChatText)
		}
		return b.reply(ctx, in, "I couldn't start a new conversation; please try again.")
	}
	b.mu.Lock()
	b.convLocked(key).threadID = id
	b.mu.Unlock()
	return b.reply(ctx, in, "Started a new conversation. What would you like to do?")
}

func (b *Router) cmdStop(ctx context.Context, in *bus.Inbound) error {
	stopped, dropped := b.opts.Runner.Stop(in.ChatKey())
	if !stopped && b.opts.Research != nil {
		if id, err := b.threadFor(in.ChatKey()); err == nil && b.opts.Research.Cancel(id) {
			text := "Dropped the research."
			if dropped > 0 {
				text += fmt.Sprintf(" Dropped %d waiting message(s).", dropped)
			}
			return b.reply(ctx, in, text)
		}
	}
	switch {
	case !stopped && dropped == 0:
		return b.reply(ctx, in, "Nothing is running in this conversation.")
	case dropped > 0:
		// The stopped run reports "Stopped." itself.
		return b.reply(ctx, in, fmt.Sprintf("Dropped %d waiting message(s).", dropped))
	}
	return nil
}

func (b *Router) cmdStatus(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := b.threadFor(key)
	if err != nil {
		return b.reply(ctx, in, "I couldn't read this conversation's state; please try again.")
	}
	t, err := b.opts.Store.Thread(threadID)
	if err != nil {
		t = &store.Thread{ID: threadID}
	}
	var count int
	var today int64
	b.opts.Store.View(func(tx *store.Tx) error {
		today = agent.DailyTokens(tx, key, b.opts.Now())
		count, err = tx.MessageCount(threadID)
		return err
	})
	model, _ := b.opts.Agent.Model(t.Model)
	// Once the answer (or "Stopped.") is given, the user sees the run as
	// over, even while it is still recording its state.
	rc := b.opts.Runner.Conv(key)
	queued, busy := rc.Waiting, rc.Active != nil && !rc.Answered
	b.mu.Lock()
	tasks := b.tasksStatus(b.convLocked(key))
	b.mu.Unlock()

	var sb strings.Builder
	fmt.Fprintf(&sb, "Thread: %s", t.ID)
	if t.Title != "" {
		fmt.Fprintf(&sb, " — %s", t.Title)
	}
	fmt.Fprintf(&sb, "\nMessages: %d\nModel: %s (%s)\n", count, model.Name, model.ID)
	fmt.Fprintf(&sb, "Tokens: %d in this thread (%d in, %d out)", t.PromptTokens+t.CompletionTokens, t.PromptTokens, t.CompletionTokens)
	if budget := b.opts.Agent.DailyTokenBudget(); budget > 0 {
		fmt.Fprintf(&sb, "; today %d of %d in this conversation", today, budget)
	}
	sb.WriteString("\n")
	switch {
	case busy && !rc.Active.Info().Started.IsZero():
		fmt.Fprintf(&sb, "Run: working for %s\n", b.opts.Now().Sub(rc.Active.Info().Started).Round(time.Second))
	case busy:
		sb.WriteString("Run: working\n")
	default:
		sb.WriteString("Run: idle\n")
	}
	sb.WriteString(tasks)
	if b.opts.Research != nil {
		if r := b.opts.Research.Status(threadID); r != "" {
			sb.WriteString(r)
			sb.WriteString("\n")
		}
	}
	b.writeHealth(&sb)
	fmt.Fprintf(&sb, "Queued: %d\nUptime: %s", queued, b.opts.Now().Sub(b.started).Round(time.Second))
	if b.opts.Version != "" {
		fmt.Fprintf(&sb, "\nVersion: %s", b.opts.Version)
	}
	return b.reply(ctx, in, sb.String())
}

// writeHealth adds the /status lines about degraded parts of the service.
func (b *Router) writeHealth(sb *strings.Builder) {
	if b.opts.Health == nil {
		return
	}
	for _, line := range b.opts.Health() {
		sb.WriteString(line)
		sb.WriteString("\n")
	}
}

func (b *Router) cmdModels(ctx context.Context, in *bus.Inbound, args string) error {
	threadID, err := b.threadFor(in.ChatKey())
	if err != nil {
		return b.reply(ctx, in, "I couldn't read this conversation's state; please try again.")
	}
	var current string
	if t, err := b.opts.Store.Thread(threadID); err == nil {
		current = t.Model
	}
	cur, _ := b.opts.Agent.Model(current)
	models := b.opts.Agent.Models()
	if args == "" {
		var sb strings.Builder
		sb.WriteString("Models:\n")
		for _, m := range models {
			fmt.Fprintf(&sb, "• %s — %s", m.Name, m.ID)
			if m.Description != "" {
				fmt.Fprintf(&sb, ": %s", m.Description)
			}
			if m.Name == cur.Name {
				sb.WriteString(" (current)")
			}
			sb.WriteString("\n")
		}
		sb.WriteString("Use /models NAME to switch this conversation.")
		return b.reply(ctx, in, sb.String())
	}
	ref, ok := b.opts.Agent.Model(args)
	if !ok {
		names := make([]string, len(models))
		for i, m := range models {
			names[i] = m.Name
		}
		return b.reply(ctx, in, fmt.Sprintf("There is no model called %q. Available: %s.", args, strings.Join(names, ", ")))
	}
	err = b.opts.Store.Update(func(tx *store.Tx) error {
		t, err := tx.Thread(threadID)
		if err != nil {
			return err
		}
		t.Model = ref.Name
		return tx.PutThread(t)
	})
	if err != nil {
		b.log.Error("switching model", "thread", threadID, "err", err)
		return b.reply(ctx, in, "I couldn't switch the model; please try again.")
	}
	return b.reply(ctx, in, fmt.Sprintf("This conversation now uses %s (%s). It applies from your next message.", ref.Name, ref.ID))
}

// cmdRetry runs the conversation's last user message again, as a new
// message (its files are still in the thread's uploads).
func (b *Router) cmdRetry(ctx context.Context, in *bus.Inbound) error {
	key := in.ChatKey()
	threadID, err := b.threadFor(key)
	if err != nil {
		b.log.Error("resolving thread", "chat", key, "err", err)
		return b.reply(ctx, in, "I couldn't open this conversation's history; please try again.")
	}
	var last *store.Message
	err = b.opts.Store.View(func(tx *store.Tx) error {
		var err error
		last, err = tx.LastMessage(threadID, func(m *store.Message) bool {
			return m.Role == "user" && !m.Hidden && strings.TrimSpace(m.Content) != ""
		})
		return err
	})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			b.log.Error("reading the last message", "thread", threadID, "err", err)
		}
		if errors.Is(err, store.ErrDamaged) {
			return b.reply(ctx, in, agent.DamagedText)
		}
		return b.reply(ctx, in, "There is no message of yours in this conversation to run again.")
	}
	again := *in
	again.Text, again.Skill, again.EventKey, again.Files = last.Content, "", "", nil
	if b.opts.Research != nil {
		again.Research = "retry"
	}
	return b.enqueue(ctx, &again)
}
