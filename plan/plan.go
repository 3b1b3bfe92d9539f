// Package plan keeps what a conversation is working towards: its goal
// (/goal, given to the model with every message), whether plan mode is on
// (/plan: the model keeps a checklist with write_todos) and that checklist,
// which belongs to the conversation's thread.
//
// Each is a small record in the store's state bucket. It imports store,
// tools, event and agent (to hide write_todos from a run's persona); the
// router, the progress renderer and the HTTP API use it.
package plan

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Record keys in the store's state bucket.
const (
	modePrefix  = "plan:"  // + chat key: "on" or "off"
	goalPrefix  = "goal:"  // + chat key: the objective
	todosPrefix = "todos:" // + thread id: the checklist, JSON
)

// maxGoal is the longest objective /goal keeps, in characters.
const maxGoal = 1000

// Book is the conversations' goals, plan modes and checklists.
type Book struct {
	st *store.Store
	on bool // plan mode where /plan was never used (agent.plan_mode)
}

// New returns the Book kept in st; planMode is plan mode's default.
func New(st *store.Store, planMode bool) *Book { return &Book{st: st, on: planMode} }

// state reads the record under key ("" when there is none or it cannot
// be read).
func (b *Book) state(key string) string {
	var v []byte
	b.st.View(func(tx *store.Tx) error {
		var err error
		v, err = tx.State(key)
		return err
	})
	return string(v)
}

func (b *Book) put(key, value string) error {
	return b.st.Update(func(tx *store.Tx) error { return tx.PutState(key, []byte(value)) })
}

// On reports whether plan mode is on in the conversation chatKey.
func (b *Book) On(chatKey string) bool {
	switch b.state(modePrefix + chatKey) {
	case "on":
		return true
	case "off":
		return false
	}
	return b.on
}

// PlanCommand answers "/plan args" in chatKey: "" shows the mode, "on"
// and "off" switch it.
func (b *Book) PlanCommand(chatKey, args string) string {
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		if b.On(chatKey) {
			return "Plan mode is on here: for work of several steps I keep a checklist and tick it off as I go. /plan off switches it off."
		}
		return "Plan mode is off here. /plan on makes me keep a checklist for work of several steps and tick it off as I go."
	case "on":
		if err := b.put(modePrefix+chatKey, "on"); err != nil {
			return "I couldn't switch plan mode on; please try again."
		}
		return "Plan mode is on: for work of several steps I'll keep a checklist here and tick it off as I go."
	case "off":
		if err := b.put(modePrefix+chatKey, "off"); err != nil {
			return "I couldn't switch plan mode off; please try again."
		}
		return "Plan mode is off: I'll work without a checklist."
	}
	return "Use /plan on or /plan off (/plan alone shows which it is)."
}

// Goal is the objective set in chatKey ("" when none).
func (b *Book) Goal(chatKey string) string { return b.state(goalPrefix + chatKey) }

// GoalCommand answers "/goal args" in chatKey: "" shows the goal,
// "clear" (or reset, off) removes it, other text sets it.
func (b *Book) GoalCommand(chatKey, args string) string {
	args = strings.TrimSpace(args)
	switch strings.ToLower(args) {
	case "":
		if g := b.Goal(chatKey); g != "" {
			return "Goal: " + g + "\n\n/goal clear removes it."
		}
		return "No goal is set here. /goal <text> sets one: I keep it in mind in every reply until /goal clear."
	case "clear", "reset", "off":
		had := b.Goal(chatKey) != ""
		err := b.st.Update(func(tx *store.Tx) error { return tx.PutState(goalPrefix+chatKey, nil) })
		switch {
		case err != nil:
			return "I couldn't clear the goal; please try again."
		case !had:
			return "There was no goal to clear."
		}
		return "Goal cleared."
	}
	if n := utf8.RuneCountInString(args); n > maxGoal {
		return fmt.Sprintf("That goal is %d characters long; keep it under %d (the details can go in a message).", n, maxGoal)
	}
	if err := b.put(goalPrefix+chatKey, args); err != nil {
		return "I couldn't set the goal; please try again."
	}
	return "Goal set: " + args + "\n\nI'll keep it in mind in every reply here until /goal clear."
}

// GoalContext is the goal of chatKey as the model is given it with each
// message ("" when none), fenced as the person's data.
func (b *Book) GoalContext(chatKey string) string {
	g := b.Goal(chatKey)
	if g == "" {
		return ""
	}
	return "<conversation_goal>\nThe person set this objective for the whole conversation (/goal); keep working towards it and keep your answers in its service:\n" +
		tools.Escape(g) + "\n</conversation_goal>"
}

// StatusText is the /status lines of chatKey, whose thread is threadID:
// the goal, and the checklist's progress with its items ("" when there
// is neither).
func (b *Book) StatusText(chatKey, threadID string) string {
	var sb strings.Builder
	if g := b.Goal(chatKey); g != "" {
		sb.WriteString("Goal: " + g + "\n")
	}
	items, err := b.Todos(threadID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		sb.WriteString("Plan: unreadable\n")
	}
	if len(items) > 0 {
		fmt.Fprintf(&sb, "Plan: %d/%d done\n%s\n", done(items), len(items), Checklist(items))
	} else if b.On(chatKey) {
		sb.WriteString("Plan: on, no checklist yet\n")
	}
	return sb.String()
}
