package lgwire

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/store"
)

// values.todos is [] until write_todos kept a list, then the list as
// DeerFlow's state has it.
func TestTodosValue(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var before, after []Todo
	items := []event.Todo{{Content: "a", Status: event.TodoInProgress}}
	st.Update(func(tx *store.Tx) error {
		before = Todos(tx, "th1")
		if err := plan.PutTodos(tx, "th1", items); err != nil {
			return err
		}
		after = Todos(tx, "th1")
		return nil
	})
	if before == nil || len(before) != 0 {
		t.Errorf("no list: %#v, want []", before)
	}
	if diff := cmp.Diff(items, after); diff != "" {
		t.Errorf("values.todos (-want +got):\n%s", diff)
	}
}
