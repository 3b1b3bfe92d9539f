package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/tools"
)

// holdBox is a sandbox in miniature with the real protocol: the program
// waits in a shell for a byte on fd 3 that only Ready sends.
type holdBox struct {
	cmd  *exec.Cmd
	r, w *os.File

	mu              sync.Mutex
	ready, killed   int
	released        int
	exitedAtRelease bool
	startedAtReady  bool
}

func (b *holdBox) Ready(context.Context) error {
	b.mu.Lock()
	b.ready++
	b.startedAtReady = b.cmd.Process != nil
	b.mu.Unlock()
	b.r.Close() // the child's copy
	_, err := b.w.Write([]byte("go\n"))
	b.w.Close()
	return err
}

func (b *holdBox) Kill() error {
	b.mu.Lock()
	b.killed++
	b.mu.Unlock()
	return syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
}

func (b *holdBox) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.released++
	b.exitedAtRelease = b.cmd.ProcessState != nil
}

// holdIsolate returns an Isolate that holds each program in a holdBox,
// handing the environment over as the shell's own; boxes gets them.
func holdIsolate(mu *sync.Mutex, boxes *[]*holdBox) func(Server, *exec.Cmd) (*exec.Cmd, Sandbox, error) {
	return func(_ Server, cmd *exec.Cmd) (*exec.Cmd, Sandbox, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		c := exec.Command("/bin/sh", append([]string{"-c", `read -r _ <&3 && exec 3<&- && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)...)
		c.Env = cmd.Env
		c.ExtraFiles = []*os.File{r}
		b := &holdBox{cmd: c, r: r, w: w}
		mu.Lock()
		*boxes = append(*boxes, b)
		mu.Unlock()
		return c, b, nil
	}
}

func canary(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "canary-" + hex.EncodeToString(b)
}

func TestSandboxedAndTrustedServers(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, _ := testLogger(t)
	key := canary(t)
	var mu sync.Mutex
	var boxes []*holdBox
	held := stdioServer(t, "held", map[string]string{"API_KEY": key, envStubborn: "1"})
	held.Sandbox = true
	trusted := stdioServer(t, "trusted", map[string]string{"API_KEY": key})
	m := New(Options{
		Servers: []Server{held, trusted},
		Isolate: holdIsolate(&mu, &boxes),
		Logger:  log,
	})
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "both servers", func() bool {
		return registered(reg, "held_getenv")() && registered(reg, "trusted_getenv")()
	})
	for _, name := range []string{"held_getenv", "trusted_getenv"} {
		if got := mustCall(t, reg, name, `{"name":"API_KEY"}`); got != "["+key+"]" {
			t.Errorf("%s: the server does not see its key: %q", name, got)
		}
	}
	// Both are running: the key is in their environments, on no command line.
	if found := testutil.CmdlinesWith(t, key); len(found) > 0 {
		t.Errorf("the key is on a command line:\n%s", strings.Join(found, "\n"))
	}
	mu.Lock()
	if len(boxes) != 1 {
		t.Fatalf("Isolate was called %d times, want once (for held only)", len(boxes))
	}
	b := boxes[0]
	mu.Unlock()
	pid := b.cmd.Process.Pid

	m.Close() // held ignores stdin's end and SIGTERM: only Kill ends it
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ready != 1 || !b.startedAtReady {
		t.Errorf("Ready called %d times, after the start: %v", b.ready, b.startedAtReady)
	}
	if b.killed == 0 {
		t.Error("the stubborn server was not killed through its sandbox")
	}
	if b.released != 1 || !b.exitedAtRelease {
		t.Errorf("Release called %d times, after the exit: %v", b.released, b.exitedAtRelease)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the sandboxed server is still there after Close: %v", err)
	}
	checkLeaks()
}

func TestServerThatFailsToStart(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, logs := testLogger(t)
	const token = "tok-4f9a1b2c3d"
	m := New(Options{
		Servers: []Server{
			stdioServer(t, "broken", map[string]string{envFail: "cannot open the index: token ${TOKEN} was refused", "TOKEN": token}),
			stdioServer(t, "fine", nil),
		},
		RestartBackoff: time.Hour, // one attempt: what it said stays the last error
		Logger:         log,
	})
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "broken to fail", func() bool { return m.States()[0].Phase == Failed })
	waitFor(t, 30*time.Second, "fine_echo", registered(reg, "fine_echo"))

	bt, _ := reg.Get("broken_unavailable")
	if d := bt.Spec().Description; !strings.Contains(d, "MCP server broken is down") {
		t.Errorf("the model is told %q", d)
	}
	_, err := call(t, reg, "broken_unavailable", `{}`)
	if err == nil {
		t.Fatal("calling the stand-in of a server that is down succeeded")
	}
	for _, want := range []string{"MCP server broken", "cannot open the index: token [redacted] was refused"} {
		mustContain(t, err.Error(), want)
	}
	health := m.Health()
	if len(health) != 1 {
		t.Fatalf("health: %q, want one line about broken", health)
	}
	for _, want := range []string{"MCP server broken failed to start", "stderr: test server starting | cannot open the index: token [redacted] was refused"} {
		mustContain(t, health[0], want)
	}
	mustContain(t, logs.String(), "cannot open the index")
	for _, s := range append(health, err.Error(), logs.String()) {
		if strings.Contains(s, token) {
			t.Errorf("the server's key was shown: %s", s)
		}
	}
	m.Close()
	if reg.Len() != 0 {
		t.Errorf("tools left after Close: %v", reg.Names())
	}
	checkLeaks()
}
