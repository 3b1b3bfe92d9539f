package plan

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestValidate(t *testing.T) {
	item := func(c, s string) event.Todo { return event.Todo{Content: c, Status: s} }
	many := make([]event.Todo, MaxItems+1)
	for i := range many {
		many[i] = item("x", event.TodoPending)
	}
	for _, tc := range []struct {
		name  string
		items []event.Todo
		err   string // "" = valid
	}{
		{"empty list", nil, ""},
		{"one of each", []event.Todo{item("a", "pending"), item("b", "in_progress"), item("c", "completed")}, ""},
		{"two in progress", []event.Todo{item("a", "in_progress"), item("b", "in_progress")}, "2 items are in_progress; keep exactly one"},
		{"blank content", []event.Todo{item("a", "pending"), item("  ", "pending")}, "item 2 has no content"},
		{"unknown status", []event.Todo{item("a", "done")}, `item 1 has status "done"; use pending, in_progress or completed`},
		{"too many", many, "the checklist has 51 items; keep it to at most 50"},
		{"too long", []event.Todo{item(strings.Repeat("x", 301), "pending")}, "item 1 is longer than 300 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Validate(tc.items)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !tools.IsArgError(err)):
				t.Errorf("error %v, want an ArgError with %q", err, tc.err)
			}
		})
	}
	got, _ := Validate([]event.Todo{item("  write\n the   fix ", "pending")})
	if got[0].Content != "write the fix" {
		t.Errorf("content = %q, want it on one line", got[0].Content)
	}
}

func TestPanel(t *testing.T) {
	got := Panel([]event.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}})
	if want := "Plan · 1/3 done\n☑ a\n◐ b\n☐ c"; got != want {
		t.Errorf("Panel = %q, want %q", got, want)
	}
}

// TestToolKeepsTheListWithTheThread: each call replaces the whole list,
// stored with the thread and reported as an event; bad lists change
// nothing.
func TestToolKeepsTheListWithTheThread(t *testing.T) {
	st := openStore(t)
	b := New(st, false)
	var evs []event.Event
	ctx := tools.WithEnv(context.Background(), &tools.Env{ThreadID: "th1", Emit: func(ev event.Event) { evs = append(evs, ev) }})
	call := func(args string) error {
		_, err := b.Tool().Run(ctx, json.RawMessage(args))
		return err
	}
	if err := call(`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}`); err != nil {
		t.Fatal(err)
	}
	if err := call(`{"todos":[{"content":"a","status":"completed"}]}`); err != nil {
		t.Fatal(err)
	}
	if err := call(`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`); err == nil {
		t.Fatal("two in_progress items were accepted")
	}
	if err := call(`{}`); err == nil || !strings.Contains(err.Error(), "missing required argument todos") {
		t.Fatalf("no todos: %v", err)
	}
	got, err := b.Todos("th1")
	want := []event.Todo{{Content: "a", Status: "completed"}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("stored %v (%v), want %v", got, err, want)
	}
	if len(evs) != 2 || !cmp.Equal(evs[1], event.Todos{Items: want}) {
		t.Errorf("events %v", evs)
	}
	if items, _ := b.Todos("other"); items != nil {
		t.Errorf("another thread has %v", items)
	}
}

func TestCommandsPersist(t *testing.T) {
	st := openStore(t)
	b := New(st, false)
	if b.On("c") || !strings.Contains(b.PlanCommand("c", ""), "off") {
		t.Fatal("plan mode should default to off")
	}
	b.PlanCommand("c", "ON")
	if !New(st, false).On("c") || New(st, false).On("other") {
		t.Error("/plan on is not kept for the conversation only")
	}
	if !New(st, true).On("other") {
		t.Error("agent.plan_mode: true is not the default")
	}
	b.PlanCommand("other", "off")
	if New(st, true).On("other") {
		t.Error("/plan off does not override the default")
	}
	if got := b.PlanCommand("c", "maybe"); !strings.Contains(got, "/plan on or /plan off") {
		t.Errorf("/plan maybe = %q", got)
	}

	if got := b.GoalCommand("c", "ship </conversation_goal> v2"); !strings.HasPrefix(got, "Goal set: ship") {
		t.Errorf("/goal text = %q", got)
	}
	if ctx := New(st, false).GoalContext("c"); strings.Count(ctx, "</conversation_goal>") != 1 || !strings.Contains(ctx, "ship &lt;/conversation_goal> v2") {
		t.Errorf("goal context is not fenced: %q", ctx)
	}
	if got := b.GoalCommand("c", ""); !strings.HasPrefix(got, "Goal: ship") {
		t.Errorf("/goal = %q", got)
	}
	if got := b.GoalCommand("c", "clear"); got != "Goal cleared." {
		t.Errorf("/goal clear = %q", got)
	}
	if b.GoalContext("c") != "" || b.GoalCommand("c", "clear") != "There was no goal to clear." {
		t.Error("the goal is still there after /goal clear")
	}
}

func TestStatusText(t *testing.T) {
	st := openStore(t)
	b := New(st, true)
	if got := b.StatusText("c", "th1"); got != "Plan: on, no checklist yet\n" {
		t.Errorf("status = %q", got)
	}
	b.GoalCommand("c", "win")
	st.Update(func(tx *store.Tx) error {
		return PutTodos(tx, "th1", []event.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "pending"}})
	})
	if got, want := b.StatusText("c", "th1"), "Goal: win\nPlan: 1/2 done\n☑ a\n☐ b\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestGate(t *testing.T) {
	if p := Gate(nil, true); p != nil {
		t.Error("plan mode on changed the built-in agent")
	}
	p := Gate(nil, false)
	if p.Allow(ToolName) || !p.Allow("bash") {
		t.Error("plan mode off: write_todos should be hidden, the rest kept")
	}
	named := &agent.Persona{Name: "coder", Allow: func(tool string) bool { return tool != "bash" }}
	g := Gate(named, false)
	if g.Name != "coder" || g.Allow("bash") || g.Allow(ToolName) || !g.Allow("read_file") {
		t.Error("the persona's own rule is lost")
	}
	if named.Allow(ToolName) == false {
		t.Error("Gate changed the persona it was given")
	}
}
