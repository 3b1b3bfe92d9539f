package sandbox

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBashStatus(t *testing.T) {
	m := newManager(t, Options{BwrapPath: "/nonexistent/bwrap"})
	ok, how := m.BashStatus()
	if ok || how != "not available: bwrap not found at /nonexistent/bwrap; install bubblewrap or set sandbox.allow_host_bash: true" {
		t.Errorf("status = %v, %q", ok, how)
	}
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "bash" {
			t.Error("bash offered without a sandbox")
		}
	}
	if !strings.Contains(m.PromptSection(), "There is no bash tool") {
		t.Error("prompt does not say bash is missing")
	}
	// A bwrap that cannot make namespaces (e.g. user namespaces disabled).
	broken := filepath.Join(t.TempDir(), "bwrap")
	writeHost(t, broken, "#!/bin/sh\n[ \"$1\" = --version ] && { echo bubblewrap 9.9; exit 0; }\necho 'bwrap: No permissions to create new namespace' >&2; exit 1\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	m = newManager(t, Options{BwrapPath: broken})
	if ok, how := m.BashStatus(); ok || !strings.Contains(how, "cannot build a sandbox here: the sandbox did not start: bwrap: No permissions to create new namespace; allow unprivileged user namespaces") {
		t.Errorf("broken bwrap status = %v, %q", ok, how)
	}
	m = newManager(t, Options{BwrapPath: "/nonexistent/bwrap", AllowHostBash: true})
	if ok, how := m.BashStatus(); !ok || !strings.HasPrefix(how, "host (sandbox.allow_host_bash: true — commands are NOT isolated") {
		t.Errorf("host status = %v, %q", ok, how)
	}
	m = newManager(t, Options{})
	needBwrap(t, m)
	if ok, how := m.BashStatus(); !ok || !strings.HasPrefix(how, "bubblewrap ") || !strings.Contains(how, " at /") {
		t.Errorf("bwrap status = %v, %q", ok, how)
	}
}

func TestBashBasics(t *testing.T) {
	m := newManager(t, Options{})
	needBwrap(t, m)
	tests := []struct{ cmd, want string }{
		{"pwd", "/mnt/user-data/workspace"},
		{"echo out; echo err >&2; exit 2", "out\nerr\n[exit code 2]"},
		{"true", "(no output)"},
		{"echo hi > /mnt/user-data/outputs/o.txt && cat ../outputs/o.txt", "hi"},
		{"kill -TERM $$", "(no output)\n[exit code 143]"},
	}
	for _, tt := range tests {
		if got := mustCall(t, m, "t", "bash", map[string]any{"command": tt.cmd}); got != tt.want {
			t.Errorf("bash %q = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(hostDir(t, m, "t", "outputs"), "o.txt")); string(b) != "hi\n" {
		t.Errorf("output file = %q", b)
	}
	got := mustCall(t, m, "t", "bash", map[string]any{"command": "seq 1 200000"})
	if !strings.HasPrefix(got, "1\n2\n3\n") || !strings.HasSuffix(got, "199999\n200000") ||
		!strings.Contains(got, "characters omitted from the middle of the output; redirect the output to a file") ||
		len([]rune(got)) > bashMaxChars+300 {
		t.Errorf("seq output: %d chars, %q ... %q", len(got), got[:20], got[len(got)-20:])
	}
	got = mustCall(t, m, "t", "bash", map[string]any{"command": "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END"})
	if !strings.HasSuffix(got, "a\nEND") || !strings.Contains(got, "[... 19,980,00") {
		t.Errorf("huge output tail %q", got[len(got)-300:])
	}
}

func TestBashIsolation(t *testing.T) {
	m := newManager(t, Options{SkillsDir: t.TempDir()})
	needBwrap(t, m)
	secret := filepath.Join(hostDir(t, m, "other", "workspace"), "secret-b.txt")
	writeHost(t, secret, "BSECRET")
	writeHost(t, filepath.Join(m.skillsDir, "pdf", "SKILL.md"), "skill text")
	got := mustCall(t, m, "a", "bash", map[string]any{"command": strings.Join([]string{
		"cat " + secret,
		"ls " + m.dataDir,
		"ls /mnt /mnt/user-data",
		"find / -path /proc -prune -o -name 'secret-b*' -print 2>/dev/null",
		"ls /root /home",
		"cat /mnt/skills/pdf/SKILL.md",
		"echo x > /mnt/skills/new",
		"for p in /usr/x /etc/x /x /mnt/x /mnt/skills/x; do touch $p 2>/dev/null && echo WROTE $p; done",
		"echo END",
	}, "; ")})
	for _, bad := range []string{"BSECRET", "secret-b.txt\n", "WROTE"} {
		if strings.Contains(got, bad) {
			t.Errorf("output has %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"No such file", "/mnt:\nskills\nuser-data\n", "/mnt/user-data:\noutputs\nuploads\nworkspace\n", "skill text", "Read-only file system", "END"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	noHostPath(t, got, m.dataDir, m.skillsDir)
	if _, err := os.Stat(filepath.Join(m.skillsDir, "new")); err == nil {
		t.Error("wrote into the skills dir")
	}
	if _, err := os.Stat("/usr/x"); err == nil {
		t.Error("wrote /usr/x")
	}
}

func TestBashEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
	t.Setenv("TELEGRAM_BOT_TOKEN", "123:tg-must-not-leak")
	for _, host := range []bool{false, true} {
		o := Options{}
		if host {
			o = Options{BwrapPath: "/nonexistent/bwrap", AllowHostBash: true}
		}
		m := newManager(t, o)
		if !host {
			needBwrap(t, m)
		}
		got := mustCall(t, m, "t", "bash", map[string]any{"command": "env; pwd"})
		for _, bad := range []string{"must-not-leak", "OPENAI_API_KEY", "TELEGRAM"} {
			if strings.Contains(got, bad) {
				t.Errorf("host=%v: env has %q:\n%s", host, bad, got)
			}
		}
		if !strings.Contains(got, "HOME=/mnt/user-data/workspace") || !strings.HasSuffix(got, "\n/mnt/user-data/workspace") {
			t.Errorf("host=%v: env/pwd:\n%s", host, got)
		}
		noHostPath(t, got, m.dataDir)
	}
}

func TestBashNoNetwork(t *testing.T) {
	m := newManager(t, Options{Network: false})
	needBwrap(t, m)
	got := mustCall(t, m, "t", "bash", map[string]any{"command": "tail -n +3 /proc/net/dev | cut -d: -f1"})
	if strings.TrimSpace(got) != "lo" {
		t.Errorf("interfaces without network: %q", got)
	}
}

// Without its user-mode network helper, the sandbox runs commands with no
// network at all, and says so and why.
func TestBashNetworkHelperMissing(t *testing.T) {
	m := newManager(t, Options{Network: true, SlirpPath: "/nonexistent/slirp4netns"})
	needBwrap(t, m)
	ok, how := m.NetworkStatus()
	if ok || how != "none: slirp4netns not found (install slirp4netns); commands run without network" {
		t.Errorf("status = %v, %q", ok, how)
	}
	if got := mustCall(t, m, "t", "bash", map[string]any{"command": "tail -n +3 /proc/net/dev | cut -d: -f1"}); strings.TrimSpace(got) != "lo" {
		t.Errorf("interfaces without the helper: %q", got)
	}
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "bash" && !strings.Contains(tl.Spec().Description, "There is no network access.") {
			t.Errorf("bash tells the model it has a network: %s", tl.Spec().Description)
		}
	}
}

// sandbox.host_network: true keeps the old shared network: the host's
// loopback is reachable.
func TestBashHostNetwork(t *testing.T) {
	m := newManager(t, Options{Network: true, HostNetwork: true})
	needBwrap(t, m)
	if ok, how := m.NetworkStatus(); !ok || !strings.Contains(how, "sandbox.host_network: true") {
		t.Errorf("status = %v, %q", ok, how)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("HELLO"))
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if got := mustCall(t, m, "t", "bash", map[string]any{"command": "timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + " && cat <&3'"}); got != "HELLO" {
		t.Errorf("host loopback with host_network = %q", got)
	}
}

// TestBashKillsProcessTree checks that cancelling a run, and a timeout, end
// every process the command started, children included.
//
// The kernel tears a killed pid namespace down asynchronously, so a
// process may still be listed for a moment (more so on a loaded machine):
// waitGone gives it up to 10 s. What matters is that none survives.
func TestBashKillsProcessTree(t *testing.T) {
	const script = "sh -c 'sleep 1000 & echo $! > child.pid; readlink /proc/self/ns/pid > ns; %s sleep 1000' & wait"

	t.Run("cancel", func(t *testing.T) {
		m := newManager(t, Options{})
		needBwrap(t, m)
		ws := hostDir(t, m, "t", "workspace")
		fifo := filepath.Join(ws, "ready")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := callCtx(ctx, t, m, "t", "bash", map[string]any{"command": strings.Replace(script, "%s", "echo go > ready;", 1)})
			done <- err
		}()
		ready := make(chan struct{})
		go func() {
			f, err := os.Open(fifo) // blocks until the command has its child
			if err == nil {
				f.Close()
			}
			close(ready)
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("command ended before it was ready: %v", err)
		}
		ns, child := sandboxProcess(t, ws)
		if len(procsIn(ns)) < 3 || !alive(child) {
			t.Fatalf("sandbox processes not found: ns %s, child %d", ns, child)
		}
		cancel()
		if err := <-done; err == nil || !strings.Contains(err.Error(), "stopped because the run was cancelled") {
			t.Errorf("err = %v", err)
		}
		if left := waitGone(ns, child); len(left) > 0 || alive(child) {
			t.Errorf("processes left after cancel: %v (child %d alive: %v)", left, child, alive(child))
		}
	})

	t.Run("timeout", func(t *testing.T) {
		m := newManager(t, Options{BashTimeout: time.Second})
		needBwrap(t, m)
		ws := hostDir(t, m, "t", "workspace")
		_, err := call(t, m, "t", "bash", map[string]any{"command": "echo started; " + strings.Replace(script, "%s", "", 1)})
		if err == nil || !strings.Contains(err.Error(), "did not finish within 1 second and was stopped, with every process it started") ||
			!strings.HasSuffix(err.Error(), "Output before it was stopped:\nstarted") {
			t.Errorf("err = %v", err)
		}
		ns, child := sandboxProcess(t, ws)
		if left := waitGone(ns, child); len(left) > 0 || alive(child) {
			t.Errorf("processes left after timeout: %v (child %d alive: %v)", left, child, alive(child))
		}
	})
}

// sandboxProcess reads what the script wrote: the sandbox's pid namespace
// and the host pid of the background child (found by its pid inside).
func sandboxProcess(t *testing.T, ws string) (ns string, hostPid int) {
	t.Helper()
	nsb, err1 := os.ReadFile(filepath.Join(ws, "ns"))
	pidb, err2 := os.ReadFile(filepath.Join(ws, "child.pid"))
	if err1 != nil || err2 != nil {
		t.Fatalf("the command did not record its processes: %v %v", err1, err2)
	}
	ns = strings.TrimSpace(string(nsb))
	inner := strings.TrimSpace(string(pidb))
	for _, pid := range procsIn(ns) {
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		for line := range strings.Lines(string(status)) {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "NSpid:" && f[len(f)-1] == inner {
				return ns, pid
			}
		}
	}
	return ns, 0
}

// procsIn lists the host pids of the processes in pid namespace ns.
func procsIn(ns string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && link == ns {
			pids = append(pids, pid)
		}
	}
	return pids
}

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

func TestHostBash(t *testing.T) {
	m := newManager(t, Options{BwrapPath: "/nonexistent/bwrap", AllowHostBash: true})
	if got := mustCall(t, m, "t", "bash", map[string]any{"command": "pwd; echo x > f.txt; ls"}); got != "/mnt/user-data/workspace\nf.txt" {
		t.Errorf("host bash = %q", got)
	}
	// A background child keeps the output pipe open; the call must still
	// return, and the child is killed with the process group.
	got := mustCall(t, m, "t", "bash", map[string]any{"command": "sleep 1000 & echo $! > child.pid; echo started"})
	if got != "started" {
		t.Errorf("background = %q", got)
	}
	m2 := newManager(t, Options{BwrapPath: "/nonexistent/bwrap", AllowHostBash: true, BashTimeout: 500 * time.Millisecond})
	if _, err := call(t, m2, "t", "bash", map[string]any{"command": "sleep 1000"}); err == nil || !strings.Contains(err.Error(), "did not finish within 0.5 seconds") {
		t.Errorf("host timeout err = %v", err)
	}
}

// waitGone returns the processes left in pid namespace ns once they and
// child are gone, or after 10 s.
func waitGone(ns string, child int) []int {
	left := procsIn(ns)
	for deadline := time.Now().Add(10 * time.Second); (len(left) > 0 || alive(child)) && time.Now().Before(deadline); left = procsIn(ns) {
		time.Sleep(20 * time.Millisecond)
	}
	return left
}
