package acp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/tools"
)

const notes = "/mnt/user-data/workspace/notes.txt"

// harness is the tool over a fresh sandbox, running the fake agent on
// the host in the thread's workspace, with the events it emitted.
type harness struct {
	sb   *sandbox.Manager
	tool tools.Tool
	mu   sync.Mutex
	evs  []event.Event
}

func newHarness(t *testing.T, edit func(*Agent)) *harness {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	a := Agent{Name: "fake", Description: "a fake coder", Command: testutil.GoBuild(t, "github.com/deerflow/deerflow/internal/fakeacp"),
		Env: map[string]string{"FAKEACP_GREETING": "hello-from-env"}, Permissions: Allow}
	if edit != nil {
		edit(&a)
	}
	h := &harness{sb: sb}
	h.tool = Tool(Options{Agents: []Agent{a}, Files: sb,
		Isolate: func(threadID string, _ Agent, cmd *exec.Cmd) (*exec.Cmd, Sandbox, error) {
			dir, err := sb.WorkspaceDir(threadID)
			cmd.Dir = dir
			return cmd, nil, err
		}})
	return h
}

func (h *harness) ctx(ctx context.Context) context.Context {
	return tools.WithEnv(ctx, &tools.Env{ThreadID: "t1", Emit: func(ev event.Event) {
		h.mu.Lock()
		h.evs = append(h.evs, ev)
		h.mu.Unlock()
	}})
}

func (h *harness) run(t *testing.T, ctx context.Context, prompt string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"agent": "fake", "prompt": prompt})
	out, err := h.tool.Run(h.ctx(ctx), args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lines are the progress lines emitted so far.
func (h *harness) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.evs {
		if p, ok := ev.(event.TaskProgress); ok {
			out = append(out, p.Task.Line)
		}
	}
	return out
}

func (h *harness) last() event.Task {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.evs[len(h.evs)-1].(event.TaskDone)
	if !ok {
		return event.Task{}
	}
	return d.Task
}

func TestEditsTheWorkspace(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.sb.WriteText("t1", notes, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	out := h.run(t, context.Background(), "edit "+notes)
	for _, want := range []string{"Status: completed", "Edited " + notes + " (it had 2 lines)", "session cwd=/mnt/user-data/workspace", "greeting=hello-from-env"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	if got, _ := h.sb.ReadText("t1", notes); got != "one\ntwo\nedited by fakeacp\n" {
		t.Errorf("file is %q", got)
	}
	// A request (the permission) may be served before the updates the
	// agent sent ahead of it; the updates keep their order.
	want := []string{"Let me look at the file.", "› Reading " + notes, "› Editing " + notes}
	got := h.lines()
	if i := slices.Index(got, "› permission for Editing "+notes+": allowed"); i >= 0 {
		got = slices.Delete(got, i, i+1)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("progress %q, want %q", got, want)
	}
	h.mu.Lock()
	first, _ := h.evs[0].(event.TaskStarted)
	h.mu.Unlock()
	if d := h.last(); first.Task.Type != "fake" || d.Status != event.TaskCompleted || d.ID != first.Task.ID || !strings.HasPrefix(d.Description, "fake: edit ") {
		t.Errorf("started %+v, ended %+v", first.Task, d)
	}
}

func TestPermissionDenied(t *testing.T) {
	h := newHarness(t, func(a *Agent) { a.Permissions = Deny })
	_ = h.sb.WriteText("t1", notes, "one\n")
	out := h.run(t, context.Background(), "edit "+notes)
	if !strings.Contains(out, "I was not allowed to edit") {
		t.Errorf("result: %s", out)
	}
	if got, _ := h.sb.ReadText("t1", notes); got != "one\n" {
		t.Errorf("file is %q", got)
	}
	if !strings.Contains(strings.Join(h.lines(), "|"), ": refused") {
		t.Errorf("progress %q", h.lines())
	}
}

func TestFilesStayInTheJail(t *testing.T) {
	h := newHarness(t, nil)
	ws, _ := h.sb.WorkspaceDir("t1")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("top secret\n"), 0o600)
	os.Symlink(secret, filepath.Join(ws, "link"))
	for _, p := range []string{secret, "/mnt/user-data/workspace/link", "/mnt/user-data/workspace/../../../etc/passwd", "relative.txt"} {
		out := h.run(t, context.Background(), "edit "+p)
		if !strings.Contains(out, "I could not read it") || strings.Contains(out, "top secret") || strings.Contains(out, ws) {
			t.Errorf("%s: %s", p, out)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "top secret\n" {
		t.Errorf("the secret became %q", b)
	}
}

func TestCancelKillsTheAgent(t *testing.T) {
	marker := "acp-cancel-marker-" + time.Now().Format("150405.000000")
	h := newHarness(t, func(a *Agent) { a.Args = []string{marker} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string)
	go func() { done <- h.run(t, ctx, "hang") }()
	testutil.WaitFor(t, func() bool { return len(h.lines()) > 0 })
	if len(testutil.CmdlinesWith(t, marker)) == 0 {
		t.Fatal("the agent is not running")
	}
	cancel()
	out := testutil.Wait(t, done, "the cancelled invocation")
	if !strings.Contains(out, "Status: cancelled") || h.last().Status != event.TaskCancelled {
		t.Errorf("result: %s", out)
	}
	if ps := testutil.CmdlinesWith(t, marker); len(ps) > 0 {
		t.Errorf("the agent survived: %v", ps)
	}
}

func TestTimeout(t *testing.T) {
	h := newHarness(t, func(a *Agent) { a.Timeout = 300 * time.Millisecond })
	out := h.run(t, context.Background(), "hang")
	if !strings.Contains(out, "Status: timed_out") || !strings.Contains(out, "› Thinking very hard") {
		t.Errorf("result: %s", out)
	}
}

func TestAgentThatCannotStart(t *testing.T) {
	h := newHarness(t, func(a *Agent) { a.Command = "/nonexistent/agent" })
	if out := h.run(t, context.Background(), "edit x"); !strings.Contains(out, "Status: failed") {
		t.Errorf("result: %s", out)
	}
	h = newHarness(t, func(a *Agent) {
		a.Command = "/bin/sh"
		a.Args = []string{"-c", "echo broken key $FAKEACP_GREETING >&2; exit 3"}
	})
	out := h.run(t, context.Background(), "edit x")
	if !strings.Contains(out, "Status: failed") || !strings.Contains(out, "broken key [redacted]") {
		t.Errorf("result: %s", out)
	}
}

func TestArguments(t *testing.T) {
	if Tool(Options{}) != nil {
		t.Error("a tool without agents")
	}
	h := newHarness(t, nil)
	spec := h.tool.Spec()
	if spec.Name != "invoke_acp_agent" || !strings.Contains(spec.Description, "- fake: a fake coder") || !strings.Contains(string(spec.Parameters), `"enum":["fake"]`) {
		t.Errorf("spec %+v", spec)
	}
	for _, args := range []string{`{"agent":"other","prompt":"x"}`, `{"agent":"fake","prompt":"  "}`, `{"agent":"fake"}`} {
		if _, err := h.tool.Run(h.ctx(context.Background()), json.RawMessage(args)); !tools.IsArgError(err) {
			t.Errorf("%s: %v", args, err)
		}
	}
	if _, ok := h.tool.(tools.SelfTimed); !ok {
		t.Error("the run's tool timeout would cut agents short")
	}
}

func TestLines(t *testing.T) {
	n := func(i int) *int { return &i }
	text := "a\nb\nc\n"
	for _, c := range []struct {
		line, limit *int
		want        string
	}{
		{nil, nil, text}, {n(2), nil, "b\nc\n"}, {n(2), n(1), "b\n"}, {nil, n(2), "a\nb\n"}, {n(9), nil, ""},
	} {
		if got := lines(text, c.line, c.limit); got != c.want {
			t.Errorf("lines(%v, %v) = %q, want %q", c.line, c.limit, got, c.want)
		}
	}
}
