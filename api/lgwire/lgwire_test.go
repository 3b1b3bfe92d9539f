package lgwire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/deerflow/deerflow/event"
)

func TestInputText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"messages":[{"role":"user","content":"openai"}]}`, "openai", true},
		{`{"messages":[{"type":"human","content":"langchain"}]}`, "langchain", true},
		{`{"messages":[{"type":"human","content":[{"type":"text","text":"a"},"b"]}]}`, "ab", true},
		{`{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"no"}]}`, "first", true},
		{`"a string"`, "", false},
		{`{"messages":[{"role":"assistant","content":"no"}]}`, "", false},
		{`{"messages":"x"}`, "", false},
		{`null`, "", false},
	} {
		got, err := InputText(json.RawMessage(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("InputText(%s) = %q, %v; want %q (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParseModes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{``, []string{"values"}, true},
		{`"updates"`, []string{"updates"}, true},
		{`["messages-tuple","values","custom"]`, []string{"values", "messages-tuple", "custom"}, true},
		{`[]`, []string{"values"}, true},
		{`"telepathy"`, nil, false},
		{`[1]`, nil, false},
	} {
		m, err := ParseModes(json.RawMessage(c.in))
		if (err == nil) != c.ok {
			t.Errorf("ParseModes(%s): %v", c.in, err)
			continue
		}
		if c.ok && !equal(m.List(), c.want) {
			t.Errorf("ParseModes(%s) = %v, want %v", c.in, m.List(), c.want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A finished task's custom event carries the subagent's usage; one that
// reported no tokens has none.
func TestTaskCompletedUsage(t *testing.T) {
	done := event.Task{ID: "task_1", Status: event.TaskCompleted, Result: "ok",
		Usage: event.Usage{PromptTokens: 100, CompletionTokens: 20, Cost: 0.5}}
	m := (&Translator{}).task(event.TaskDone{Task: done})
	want := map[string]any{"input_tokens": 100, "output_tokens": 20, "total_tokens": 120, "cost_usd": 0.5}
	if m["type"] != "task_completed" || !reflect.DeepEqual(m["usage"], want) {
		t.Errorf("task_completed = %v", m)
	}
	done.Usage = event.Usage{}
	if m := (&Translator{}).task(event.TaskDone{Task: done}); m["usage"] != nil {
		t.Errorf("without tokens, task_completed = %v", m)
	}
}
