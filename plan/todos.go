package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// ToolName is the checklist tool's name.
const ToolName = "write_todos"

// Limits of a checklist.
const (
	MaxItems   = 50
	maxContent = 300 // characters of one item
)

// PromptNote is the system prompt's section while plan mode is on.
const PromptNote = `<plan_mode>
Plan mode is on in this conversation. For a request that takes three or more steps, write a checklist with write_todos before you start, keep exactly one item in_progress while you work on it, and mark each item completed as soon as it is done (each call replaces the whole list). The person sees the checklist live. Skip it for quick, single-step requests.
</plan_mode>`

const toolDescription = "Keep the checklist for the current work, which the person sees live in the chat. Each call replaces the whole list: send every item, in order, with its status. Use it for work of three or more steps: write the plan first, keep exactly one item in_progress while you work on it, and mark items completed as soon as they are done; add or drop items when the plan changes."

var toolSchema = json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array","description":"The whole checklist, in order (at most 50 items).","items":{"type":"object","properties":{"content":{"type":"string","description":"What the step does, in a short line."},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","status"]}}},"required":["todos"]}`)

type todosTool struct{ st *store.Store }

// Tool returns write_todos: it stores the list with the run's thread and
// reports it (event.Todos) to whoever shows the run.
func (b *Book) Tool() tools.Tool { return todosTool{b.st} }

func (todosTool) Spec() tools.Spec {
	return tools.Spec{Name: ToolName, Description: toolDescription, Parameters: toolSchema}
}

func (t todosTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct {
		Todos *[]event.Todo `json:"todos"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", &tools.ArgError{Tool: ToolName, Msg: "the arguments must be an object {\"todos\": [{\"content\": ..., \"status\": ...}, ...]}: " + err.Error()}
	}
	if in.Todos == nil {
		return "", &tools.ArgError{Tool: ToolName, Msg: "missing required argument todos (the whole checklist, an array of {content, status})"}
	}
	items, err := Validate(*in.Todos)
	if err != nil {
		return "", err
	}
	env := tools.EnvFrom(ctx)
	if env.ThreadID == "" {
		return "", errors.New("write_todos: there is no conversation to keep the checklist in")
	}
	if err := t.st.Update(func(tx *store.Tx) error { return PutTodos(tx, env.ThreadID, items) }); err != nil {
		return "", fmt.Errorf("the checklist could not be saved (%v); try again", err)
	}
	tools.Emit(ctx, event.Todos{Items: items})
	return fmt.Sprintf("Checklist updated: %d/%d done.\n%s", done(items), len(items), Checklist(items)), nil
}

// Validate checks a checklist as write_todos receives it: at most
// MaxItems items, each with content, a known status, at most one
// in_progress. It returns the items trimmed; its errors are written for
// the model.
func Validate(items []event.Todo) ([]event.Todo, error) {
	bad := func(format string, a ...any) error {
		return &tools.ArgError{Tool: ToolName, Msg: fmt.Sprintf(format, a...)}
	}
	if len(items) > MaxItems {
		return nil, bad("the checklist has %d items; keep it to at most %d (merge small steps)", len(items), MaxItems)
	}
	out := make([]event.Todo, len(items))
	active := 0
	for i, it := range items {
		it.Content = strings.Join(strings.Fields(it.Content), " ")
		switch {
		case it.Content == "":
			return nil, bad("item %d has no content; every item needs a short description of its step", i+1)
		case utf8.RuneCountInString(it.Content) > maxContent:
			return nil, bad("item %d is longer than %d characters; describe the step in one short line", i+1, maxContent)
		}
		switch it.Status {
		case event.TodoPending, event.TodoCompleted:
		case event.TodoInProgress:
			active++
		default:
			return nil, bad("item %d has status %q; use pending, in_progress or completed", i+1, it.Status)
		}
		out[i] = it
	}
	if active > 1 {
		return nil, bad("%d items are in_progress; keep exactly one in_progress at a time (the one you are working on) and mark the others pending or completed", active)
	}
	return out, nil
}

// PutTodos stores threadID's checklist.
func PutTodos(tx *store.Tx, threadID string, items []event.Todo) error {
	data, err := json.Marshal(items)
	if err != nil {
		return err
	}
	return tx.PutState(todosPrefix+threadID, data)
}

// TodosTx is threadID's checklist (none: nil).
func TodosTx(tx *store.Tx, threadID string) ([]event.Todo, error) {
	data, err := tx.State(todosPrefix + threadID)
	if err != nil || len(data) == 0 {
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
		return nil, err
	}
	var items []event.Todo
	return items, json.Unmarshal(data, &items)
}

// Todos is threadID's checklist (none: nil).
func (b *Book) Todos(threadID string) ([]event.Todo, error) {
	var items []event.Todo
	err := b.st.View(func(tx *store.Tx) error {
		var err error
		items, err = TodosTx(tx, threadID)
		return err
	})
	return items, err
}

// Gate hides write_todos from a run while plan mode is off: p is the
// run's persona (nil: the built-in agent), the result what the run should
// use. With plan mode on, p is returned as it is.
func Gate(p *agent.Persona, on bool) *agent.Persona {
	if on {
		return p
	}
	q := &agent.Persona{}
	if p != nil {
		*q = *p
	}
	allow := q.Allow
	q.Allow = func(tool string) bool { return tool != ToolName && (allow == nil || allow(tool)) }
	return q
}
