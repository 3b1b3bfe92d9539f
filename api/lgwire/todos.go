package lgwire

import (
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/store"
)

// Todo is one item of a thread's checklist in values.todos, as DeerFlow's
// state has it: {content, status} with status pending, in_progress or
// completed.
type Todo = event.Todo

// Todos is thread id's checklist (write_todos) for values.todos: [] when
// there is none (or it cannot be read).
func Todos(tx *store.Tx, id string) []Todo {
	items, err := plan.TodosTx(tx, id)
	if err != nil || items == nil {
		return []Todo{}
	}
	return items
}

// todosEvent is a checklist change as a custom frame and, for the updates
// mode, the state's new todos.
func (t *Translator) todosEvent(out []Frame, ev event.Todos) []Frame {
	items := ev.Items
	if items == nil {
		items = []Todo{}
	}
	if t.Modes[ModeUpdates] {
		out = append(out, Frame{"updates", map[string]any{nodeTools: map[string]any{"todos": items}}})
	}
	return t.custom(out, map[string]any{"type": "todos", "todos": items})
}
