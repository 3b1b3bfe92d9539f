package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// needBwrap skips t unless bubblewrap is installed and can build a
// sandbox on this machine.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed (apt-get install bubblewrap); .ci/run installs it")
	}
	if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true").CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot build a sandbox here: %v %s", err, out)
	}
}

// leaksHost fails the test if any request the model received mentions a
// host path of the data dir.
func leaksHost(t *testing.T, fake *fakeopenai.Server, dataDir string) {
	t.Helper()
	abs, _ := filepath.Abs(dataDir)
	for i, r := range fake.Requests() {
		if strings.Contains(string(r.Body), abs) {
			t.Errorf("request %d shows the host path %s to the model", i, abs)
		}
	}
}

func TestChatSandboxToolsAndPresentedFiles(t *testing.T) {
	needBwrap(t)
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: `{"description":"write the report","path":"/mnt/user-data/outputs/report.md","content":"# Report\nall good\n"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"description":"check the report","command":"wc -l /mnt/user-data/outputs/report.md && pwd && cat /etc/hostname; ls /root 2>&1 | head -1"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/report.md"]}`}}},
		fakeopenai.Turn{Text: "Here is your report."},
	)
	dir := t.TempDir()
	s := startChat(t, testConfig(t, fake, dir))
	s.say("write me a report")
	s.screen.waitFor(t, "Here is your report.", 1)
	s.screen.waitFor(t, "file: /mnt/user-data/outputs/report.md (18 bytes)", 1)

	reqs := fake.Requests()
	bashResult := reqs[2].Last().Content
	if !strings.Contains(bashResult, "2 /mnt/user-data/outputs/report.md") || !strings.Contains(bashResult, "/mnt/user-data/workspace") {
		t.Errorf("bash result = %q", bashResult)
	}
	if !strings.Contains(bashResult, "No such file") && !strings.Contains(bashResult, "cannot access") {
		t.Errorf("the sandbox can see /root: %q", bashResult)
	}
	if tools := strings.Join(reqs[0].ToolNames(), ","); tools != "ask_clarification,bash,cancel_scheduled_task,glob,grep,image_search,list_scheduled_tasks,list_uploaded_files,ls,present_files,read_file,schedule_task,str_replace,task,web_fetch,web_search,write_file" {
		t.Errorf("tools offered = %s", tools)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "/mnt/user-data/outputs") {
		t.Error("the system prompt does not explain the working directory")
	}
	out := s.screen.String()
	if strings.Index(out, "Here is your report.") > strings.Index(out, "file: /mnt/user-data/outputs/report.md") {
		t.Errorf("the file came before the answer:\n%s", out)
	}
	leaksHost(t, fake, dir)
}

// chanRecorder is a platform-like channel for tests: it records what the
// router sends.
type chanRecorder struct {
	mu   sync.Mutex
	outs []*bus.Outbound
	note chan struct{}
}

func (c *chanRecorder) Name() string { return "test" }
func (c *chanRecorder) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := *out
	c.outs = append(c.outs, &cp)
	select {
	case c.note <- struct{}{}:
	default:
	}
	return []string{fmt.Sprintf("m%d", len(c.outs))}, nil
}

func (c *chanRecorder) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, o := range c.outs {
		fmt.Fprintf(&b, "  kind=%d chat=%s edit=%s final=%v text=%q\n", o.Kind, o.ChatID, o.EditID, o.Final, o.Text)
	}
	return b.String()
}

// finals returns the final texts sent to chat.
func (c *chanRecorder) finals(chat string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, o := range c.outs {
		if o.Final && o.ChatID == chat {
			out = append(out, o.Text)
		}
	}
	return out
}

func attachment(name, body string) bus.Attachment {
	return bus.Attachment{Name: name, Size: int64(len(body)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(body)), nil
	}}
}

func TestUploadsReachTheModel(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/user-data/uploads/notes.txt"}`}}},
		fakeopenai.Turn{Text: "read it"},
	)
	dir := t.TempDir()
	cfg := testConfig(t, fake, dir)
	cfg.Sandbox.MaxUploadMB = 1
	s := startChat(t, cfg)
	rec := &chanRecorder{note: make(chan struct{}, 1)}
	s.app.router.Register(rec)
	ctx := context.Background()
	err := s.app.router.Publish(ctx, &bus.Inbound{Channel: "test", ChatID: "c1", UserID: "u1", Text: "summarise these",
		Files: []bus.Attachment{
			attachment("../../notes.txt", "buy milk\n"),
			attachment("huge.bin", strings.Repeat("x", 2<<20)),
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.app.router.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	finals := rec.finals("c1")
	if len(finals) != 2 || !strings.Contains(finals[0], "huge.bin: it is larger than the upload limit of 1 MB") || finals[1] != "read it" {
		t.Fatalf("finals = %q", finals)
	}
	reqs := fake.Requests()
	user := reqs[0].Last().Content
	if !strings.Contains(user, "/mnt/user-data/uploads/notes.txt") || !strings.HasSuffix(user, "summarise these") || strings.Contains(user, "huge.bin") {
		t.Errorf("user message = %q", user)
	}
	if got := reqs[1].Last().Content; !strings.Contains(got, "buy milk") {
		t.Errorf("read_file of the upload = %q", got)
	}
	leaksHost(t, fake, dir)
}

func TestConversationsCannotSeeEachOther(t *testing.T) {
	needBwrap(t)
	fake := fakeopenai.New(t)
	fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "tool":
			return fakeopenai.Turn{Text: "result: " + last.Content}
		case strings.Contains(last.Content, "write"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":"echo secret-of-a > /mnt/user-data/workspace/a.txt && echo written"}`}}}
		default:
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":"ls -a /mnt/user-data/workspace; cat /mnt/user-data/workspace/a.txt 2>&1; ls ` + "`" + `dirname $PWD` + "`" + `/../.. 2>&1 | head -3"}`}}}
		}
	})
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	rec := &chanRecorder{note: make(chan struct{}, 1)}
	s.app.router.Register(rec)
	ctx := context.Background()
	s.app.router.Publish(ctx, &bus.Inbound{Channel: "test", ChatID: "a", UserID: "u1", Text: "write a file"})
	s.app.router.WaitIdle(ctx)
	s.app.router.Publish(ctx, &bus.Inbound{Channel: "test", ChatID: "b", UserID: "u2", Text: "look around"})
	s.app.router.WaitIdle(ctx)
	if got := rec.finals("a"); len(got) != 1 || !strings.Contains(got[0], "written") {
		t.Fatalf("conversation a: %q\n%s", got, rec.dump())
	}
	got := rec.finals("b")
	if len(got) != 1 || strings.Contains(got[0], "secret-of-a") || strings.Contains(got[0], "a.txt\n") || !strings.Contains(got[0], "No such file") {
		t.Fatalf("conversation b saw a's files: %q", got)
	}
}

// processesWith counts live processes whose command line contains marker.
func processesWith(marker string) int {
	n := 0
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), marker) {
			n++
		}
	}
	return n
}

func TestStopKillsRunningCommand(t *testing.T) {
	needBwrap(t)
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"description":"wait a long time","command":"sleep 987654 & sleep 987654"}`}}},
		fakeopenai.Turn{Text: "ready again"},
	)
	s := startChat(t, testConfig(t, fake, t.TempDir()))
	s.say("wait forever")
	s.screen.waitFor(t, "› bash: wait a long time", 1)
	for processesWith("987654") < 2 { // both sleeps are running
		runtime.Gosched()
	}
	s.say("/stop")
	s.screen.waitFor(t, "Stopped.", 1)
	if n := processesWith("987654"); n != 0 {
		t.Errorf("%d sandboxed processes survived /stop", n)
	}
	s.say("hello?")
	s.screen.waitFor(t, "ready again", 1)
	// The stopped call has a result, so the history stays valid for the
	// model (the strict fake would have refused it otherwise).
	if got := fake.Requests()[1].Roles(); got != "system,user,assistant,tool,user" {
		t.Errorf("after stop the model saw %s", got)
	}
}

// TestChatSandboxAttacks is a hostile user's turn through the real wiring
// with the default configuration: the model (scripted as the attacker's
// accomplice) reaches for this machine's loopback, where the model server
// itself listens, through the sandbox's own loopback and its gateway, then
// tries a memory bomb and a fork bomb. Each fails, the model is told why,
// and the conversation carries on.
func TestChatSandboxAttacks(t *testing.T) {
	needBwrap(t)
	fake := fakeopenai.New(t)
	port := fake.URL[strings.LastIndex(fake.URL, ":")+1 : strings.LastIndex(fake.URL, "/v1")]
	get := func(host string) string {
		return fmt.Sprintf(`{"command":"exec 3<>/dev/tcp/%s/%s && printf 'GET /v1/models HTTP/1.0\\r\\n\\r\\n' >&3 && timeout 5 cat <&3"}`, host, port)
	}
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: get("127.0.0.1")}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: get("10.0.2.2")}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":"head -c 1500m /dev/zero | tail | wc -c"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":":(){ :|:& };:; sleep 20; echo survived"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"command":"echo alive"}`}}},
		fakeopenai.Turn{Text: "Nothing worked."},
	)
	cfg := testConfig(t, fake, t.TempDir())
	s := startChat(t, cfg)
	if ok, how := s.app.sandbox.NetworkStatus(); !ok {
		t.Fatalf("default sandbox network: %s", how)
	}
	s.say("let's poke around")
	s.screen.waitFor(t, "Nothing worked.", 1)
	reqs := fake.Requests()
	result := func(i int) string { return reqs[i].Last().Content }
	for i := 1; i <= 5; i++ {
		t.Logf("bash result %d: %s", i, tail(result(i)))
	}
	for i, what := range []string{"loopback", "gateway"} {
		if r := result(i + 1); strings.Contains(r, "HTTP/1") || strings.Contains(r, "fake-model") {
			t.Errorf("the sandbox reached the model server through the %s: %q", what, r)
		}
	}
	if r := result(3); strings.Contains(r, "1572864000") {
		t.Errorf("the memory bomb ran to its end: %q", r)
	}
	cgroups := !strings.HasPrefix(s.app.sandbox.LimitsStatus(), "rlimits")
	if r := result(3); cgroups && !strings.Contains(r, "memory limit 1024 MB reached") {
		t.Errorf("memory bomb result = %q", r)
	}
	if r := result(4); cgroups && (!strings.Contains(r, "process limit 256 reached") || strings.Contains(r, "survived")) {
		t.Errorf("fork bomb result = %q", tail(r))
	}
	if r := result(5); !strings.Contains(r, "alive") {
		t.Errorf("the sandbox stopped answering: %q", r)
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}
