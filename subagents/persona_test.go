package subagents

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools"
)

// countingTool answers with its name and counts its calls.
func countingTool(name string, calls *atomic.Int32) tools.Tool {
	return tools.Func(name, "test tool "+name, func(context.Context, nameArgs) (string, error) {
		calls.Add(1)
		return name + " ok", nil
	})
}

// A subagent started by a persona's run is offered only the tools both its
// type and the persona allow; a call of any other tool gets the error an
// unknown tool gets, and does not run.
func TestSubagentInheritsPersonaTools(t *testing.T) {
	var ls, secret atomic.Int32
	h := newHarness(t, Options{},
		fakeTool("bash", false, nil), countingTool("ls", &ls), fakeTool("read_file", false, nil), countingTool("secret", &secret))
	h.fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("list files", "List the files.", Bash)}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
			{Name: "ls", Arguments: `{}`},     // the bash type's, refused by the persona
			{Name: "secret", Arguments: `{}`}, // the persona's, not the bash type's
			{Name: "nosuch", Arguments: `{}`},
			{Name: "bash", Arguments: `{}`},
		}},
		fakeopenai.Turn{Text: "listed"},
		fakeopenai.Turn{Text: "all done"},
	)
	persona := &agent.Persona{Name: "ada", Allow: func(name string) bool { return name != "ls" }}
	var evs []event.Event
	for ev := range h.lead.Run(context.Background(), agent.Input{ThreadID: "th_p", ChatKey: "test:chat", Text: "go", Persona: persona}) {
		evs = append(evs, ev)
	}
	if a, ok := evs[len(evs)-1].(event.Answer); !ok || a.Text != "all done" {
		t.Fatalf("last event %#v", evs[len(evs)-1])
	}
	reqs := h.fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if diff := cmp.Diff([]string{"bash", "read_file", "secret", "task"}, reqs[0].ToolNames()); diff != "" {
		t.Errorf("lead offered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bash", "read_file"}, reqs[1].ToolNames()); diff != "" {
		t.Errorf("subagent offered (-want +got):\n%s", diff)
	}
	res := toolResults(reqs[2])
	if len(res) != 4 {
		t.Fatalf("subagent's tool results %q, want 4", res)
	}
	unknown := res[2]
	if !strings.Contains(unknown, `unknown tool "nosuch"; available tools: bash, read_file.`) {
		t.Fatalf("unknown tool's result %q", unknown)
	}
	for i, name := range []string{"ls", "secret"} {
		if want := strings.ReplaceAll(unknown, "nosuch", name); res[i] != want {
			t.Errorf("%s's result\n%q\nwant the unknown tool's\n%q", name, res[i], want)
		}
	}
	if res[3] != "bash ok" {
		t.Errorf("bash's result %q", res[3])
	}
	if ls.Load()+secret.Load() != 0 {
		t.Errorf("refused tools ran: ls %d, secret %d", ls.Load(), secret.Load())
	}
}

// Without a persona a subagent gets its type's tools, as before.
func TestSubagentWithoutPersonaKeepsTypeTools(t *testing.T) {
	h := newHarness(t, Options{}, fakeTool("bash", false, nil), fakeTool("ls", false, nil), fakeTool("secret", false, nil))
	h.fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("list files", "List the files.", Bash)}},
		fakeopenai.Turn{Text: "listed"},
		fakeopenai.Turn{Text: "all done"},
	)
	h.run(context.Background(), "th_n", "go")
	reqs := h.fake.Requests()
	sub := slices.IndexFunc(reqs, func(r fakeopenai.Request) bool { return !isLead(r) })
	if sub < 0 {
		t.Fatal("no subagent request")
	}
	if diff := cmp.Diff([]string{"bash", "ls"}, reqs[sub].ToolNames()); diff != "" {
		t.Errorf("subagent offered (-want +got):\n%s", diff)
	}
}
