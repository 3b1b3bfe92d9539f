package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The attacks below are what a hostile member of a group chat would make
// the agent run. Each runs through the real bash tool under bubblewrap,
// must fail, and must leave the sandbox answering the next command.

// netnsEnv marks the test process re-executed inside a network namespace
// of its own, where the private and link-local targets are addresses of
// its own loopback interface: no packet of these tests leaves this machine.
const netnsEnv = "DEERFLOW_TEST_NETNS"

// targets are the listeners of the network attacks, inside the namespace.
var targets = []struct{ name, addr string }{
	{"private 10/8", "10.20.30.40:8080"},
	{"private 172.16/12", "172.16.5.5:8080"},
	{"private 192.168/16", "192.168.7.7:8080"},
	{"CGNAT 100.64/10", "100.64.1.1:8080"},
	{"link-local cloud metadata", "169.254.169.254:80"},
}

// allowed is a private target opened by sandbox.network_allow: it proves
// the path through the user-mode network works, so that the refusals
// above are the filter's doing.
const allowed = "10.20.30.41:8080"

func TestNetworkAttacks(t *testing.T) {
	if os.Getenv(netnsEnv) == "" {
		reexecInNetns(t, "^TestNetworkAttacks$")
		return
	}
	for _, a := range []string{"10.20.30.40", "10.20.30.41", "10.20.30.42", "172.16.5.5", "192.168.7.7", "100.64.1.1", "169.254.169.254"} {
		ip(t, "addr", "add", a+"/32", "dev", "lo")
	}
	// This machine resolves names through a resolver on its loopback, as
	// systemd-resolved does (127.0.0.53): the sandbox's names must still
	// resolve, through slirp4netns's resolver.
	ip(t, "addr", "add", "127.0.0.53/32", "dev", "lo")
	serveDNS(t, "127.0.0.53:53", map[string]string{"db.example.test.": "10.20.30.42", "www.example.test.": "93.184.215.14"})
	useResolver(t, "127.0.0.53")
	serveHello(t, "10.20.30.42:8080")
	for _, tg := range targets {
		serveHello(t, tg.addr)
	}
	serveHello(t, allowed)
	loop := serveHello(t, "127.0.0.1:0")
	_, loopPort, _ := net.SplitHostPort(loop)

	m := newManager(t, Options{Network: true, NetworkAllow: []string{allowed, "db.example.test:8080"}, Mounts: []Mount{testBinMount()}})
	needBwrap(t, m)
	if ok, how := m.NetworkStatus(); !ok {
		t.Fatalf("no network for the sandbox: %s", how)
	}
	connect := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		return fmt.Sprintf("timeout 5 bash -c 'exec 3<>/dev/tcp/%s/%s && cat <&3'", host, port)
	}
	attacks := []struct{ name, cmd string }{
		{"host loopback", connect(loop)},
		{"host loopback through the gateway", connect("10.0.2.2:" + loopPort)},
	}
	for _, tg := range targets {
		attacks = append(attacks, struct{ name, cmd string }{tg.name, connect(tg.addr)})
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			out, err := call(t, m, "t", "bash", map[string]any{"command": a.cmd})
			if strings.Contains(out, "HELLO") {
				t.Errorf("%s reached: %q %v", a.cmd, out, err)
			}
			answersNext(t, m)
		})
	}
	for _, a := range []string{allowed, "db.example.test:8080"} {
		if out := mustCall(t, m, "t", "bash", map[string]any{"command": connect(a)}); out != "HELLO" {
			t.Errorf("the network_allow exception %s = %q, want HELLO", a, out)
		}
	}
	if out := mustCall(t, m, "t", "bash", map[string]any{"command": "getent hosts www.example.test"}); !strings.HasPrefix(out, "93.184.215.14") {
		t.Errorf("a name in the sandbox resolves to %q", out)
	}
	t.Run("listen where the host can reach", func(t *testing.T) { listenAttack(t, m) })
}

// listenAttack listens inside the sandbox and tries to reach the listener
// from the host, at every address the host has.
func listenAttack(t *testing.T, m *Manager) {
	ws := hostDir(t, m, "t", "workspace")
	done := make(chan struct{})
	var out string
	go func() {
		defer close(done)
		out, _ = call(t, m, "t", "bash", map[string]any{"command": testBin(t, m) + " sandbox-helper listen 0.0.0.0:18080 ready stop"})
	}()
	waitFile(t, filepath.Join(ws, "ready"), done)
	for _, a := range []string{"127.0.0.1", "10.20.30.40", "169.254.169.254"} {
		if c, err := net.DialTimeout("tcp", a+":18080", 2*time.Second); err == nil {
			c.Close()
			t.Errorf("the host reached a listener in the sandbox at %s:18080", a)
		}
	}
	writeHost(t, filepath.Join(ws, "stop"), "")
	<-done
	if strings.Contains(out, "ACCEPTED") {
		t.Errorf("the sandbox's listener accepted a connection: %q", out)
	}
	answersNext(t, m)
}

func TestLimitAttacks(t *testing.T) {
	o := Options{BashTimeout: 20 * time.Second}
	o.Limits.MemoryMB, o.Limits.Processes, o.Limits.DiskMB, o.Limits.TmpMB = 64, 64, 16, 8
	m := newManager(t, o)
	needBwrap(t, m)
	cgroups := !strings.HasPrefix(m.LimitsStatus(), "rlimits")
	t.Logf("limits: %s", m.LimitsStatus())
	// Without a cgroup, memory and processes are bounded per process and
	// per sandbox user (rlimits): an allocation or a fork fails before the
	// command as a whole reaches the limit the watcher looks for, and the
	// shell often gives up by itself, so the reason is not always the
	// watcher's to give. The attack must fail either way.
	tests := []struct {
		name, cmd, notWant, reason string
		cgroupOnly                 bool
	}{
		{"memory bomb", "head -c 300m /dev/zero | tail | wc -c", "314572800", "memory limit 64 MB reached", true},
		{"fork bomb", ":(){ :|:& };:; sleep 10; echo survived", "survived", "process limit 64 reached", true},
		{"one big file", "head -c 64m /dev/zero > big; echo wrote", "wrote\n", "disk limit 16 MB reached", false},
		{"many files", "for i in $(seq 1 40); do head -c 1m /dev/zero > f$i; done; echo wrote", "", "disk limit 16 MB reached", false},
		{"/tmp", "head -c 32m /dev/zero > /tmp/x && echo wrote", "wrote", "No space left on device", false},
		{"/dev/shm", "head -c 32m /dev/zero > /dev/shm/x && echo wrote", "wrote", "No space left on device", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, m, "t", "bash", map[string]any{"command": tt.cmd})
			got := out
			if err != nil {
				got = err.Error()
			}
			if tt.notWant != "" && strings.Contains(got, tt.notWant) {
				t.Errorf("the attack succeeded: %q", clipped(got))
			}
			if (cgroups || !tt.cgroupOnly) && !strings.Contains(got, tt.reason) {
				t.Errorf("result lacks %q: %q", tt.reason, clipped(got))
			}
			mustCall(t, m, "t", "bash", map[string]any{"command": "rm -f big f*"})
			answersNext(t, m)
		})
	}
}

func TestSecretsAttack(t *testing.T) {
	const canary = "canary-7f3e9c1d"
	t.Setenv("DEERFLOW_TEST_TOKEN", canary)
	mountDir := filepath.Join(t.TempDir(), "mounted-"+canary)
	writeHost(t, filepath.Join(mountDir, "f"), "x")
	m := newManager(t, Options{Network: true, Mounts: []Mount{{HostPath: mountDir, Path: "/mnt/data", ReadOnly: true}}})
	needBwrap(t, m)
	out := mustCall(t, m, "t", "bash", map[string]any{"command": "sleep 5 & for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ /proc/self/mountinfo; do tr '\\0' '\\n' < $f; done; env; cat /proc/1/cmdline | tr '\\0' ' '"})
	for _, secret := range []string{canary, m.dataDir, "--bind", "--ro-bind"} {
		if strings.Contains(out, secret) {
			t.Errorf("the sandbox sees %q:\n%s", secret, clipped(out))
		}
	}
	if !strings.Contains(out, "--args 3") {
		t.Errorf("no /proc/1/cmdline read: %q", clipped(out))
	}
}

// answersNext checks that the sandbox still runs commands.
func answersNext(t *testing.T, m *Manager) {
	t.Helper()
	if out, err := call(t, m, "t", "bash", map[string]any{"command": "echo alive"}); out != "alive" || err != nil {
		t.Fatalf("the next command = %q, %v", out, err)
	}
}

func clipped(s string) string {
	if len(s) > 600 {
		return s[:300] + " … " + s[len(s)-300:]
	}
	return s
}

// reexecInNetns runs the test named by pattern again in a new network
// namespace, and reports its output.
func reexecInNetns(t *testing.T, pattern string) {
	for _, p := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not found: install util-linux and iproute2", p)
		}
	}
	args := []string{"--net", "--mount"}
	if os.Geteuid() != 0 {
		args = append(args, "--user", "--map-root-user")
	}
	args = append(args, "--", os.Args[0], "-test.run="+pattern, "-test.v", "-test.count=1")
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a new network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("unshare: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") && !strings.Contains(string(out), "--- PASS") {
		t.Skip("skipped inside the namespace")
	}
}

// ip runs ip(8) in the test's namespace, bringing lo up first. The
// targets are addresses of the namespace's own loopback interface (a
// dummy interface would do as well, where the kernel has the module).
func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v %s", args, err, out)
	}
}

// useResolver points this namespace's /etc/resolv.conf at addr (the test
// runs in a mount namespace of its own).
func useResolver(t *testing.T, addr string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "resolv.conf")
	writeHost(t, f, "nameserver "+addr+"\n")
	if out, err := exec.Command("mount", "--bind", f, "/etc/resolv.conf").CombinedOutput(); err != nil {
		t.Fatalf("mount resolv.conf: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "/etc/resolv.conf").Run() })
}

// serveDNS answers A queries for the names in answers (FQDN → IPv4) on
// UDP addr, and every other query with no answer.
func serveDNS(t *testing.T, addr string, answers map[string]string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], answers); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
}

// dnsAnswer builds the response to one query (RFC 1035, section 4).
func dnsAnswer(q []byte, answers map[string]string) []byte {
	if len(q) < 12 {
		return nil
	}
	var name strings.Builder
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		name.Write(q[i+1 : i+1+l])
		name.WriteByte('.')
		i += 1 + l
	}
	end := i + 5 // the zero label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := int(q[i+1])<<8 | int(q[i+2])
	resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
	ip := net.ParseIP(answers[strings.ToLower(name.String())]).To4()
	if ip != nil && qtype == 1 {
		resp[7] = 1
		resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, ip...)
	}
	return resp
}

// serveHello listens on addr and greets every connection with HELLO; it
// returns the address it listens on.
func serveHello(t *testing.T, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HELLO"))
			c.Close()
		}
	}()
	return l.Addr().String()
}

// waitFile waits until p exists, or fails once done closes first or 30 s
// have passed.
func waitFile(t *testing.T, p string, done <-chan struct{}) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("the command ended before %s appeared", filepath.Base(p))
		case <-deadline:
			t.Fatalf("%s did not appear", filepath.Base(p))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// testBin is this test binary as the sandbox sees it (its directory is
// mounted read-only at /mnt/testbin by newManager's callers that ask).
func testBin(t *testing.T, m *Manager) string {
	t.Helper()
	for _, mt := range m.mounts {
		if mt.Path == "/mnt/testbin" {
			return "/mnt/testbin/" + filepath.Base(os.Args[0])
		}
	}
	t.Fatal("the test binary is not mounted; pass testBinMount()")
	return ""
}

// testBinMount shows this test binary's directory at /mnt/testbin.
func testBinMount() Mount {
	return Mount{HostPath: filepath.Dir(os.Args[0]), Path: "/mnt/testbin", ReadOnly: true}
}

// TestMain lets the test binary serve as a helper inside the sandbox:
// `sandbox.test sandbox-helper listen ADDR READY STOP` listens on ADDR,
// creates the file READY, and ends once the file STOP exists, printing
// ACCEPTED if anything connected.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-helper" {
		os.Exit(helper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func helper(args []string) int {
	if len(args) != 4 || args[0] != "listen" {
		fmt.Fprintln(os.Stderr, "usage: sandbox-helper listen ADDR READY STOP")
		return 2
	}
	l, err := net.Listen("tcp", args[1])
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Println("ACCEPTED")
			bufio.NewReader(c).ReadByte()
			c.Close()
		}
	}()
	os.WriteFile(args[2], nil, 0o644)
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(args[3]); err == nil {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 1
}

// A conversation whose files are at the disk limit can still look and
// delete, and is told why writes fail; once it deletes, it writes again.
func TestDiskFullStillAnswers(t *testing.T) {
	o := Options{}
	o.Limits.DiskMB = 4
	m := newManager(t, o)
	needBwrap(t, m)
	writeHost(t, filepath.Join(hostDir(t, m, "t", "workspace"), "big"), strings.Repeat("x", 5<<20))
	out, err := call(t, m, "t", "bash", map[string]any{"command": "ls"})
	if err != nil || out != "big\n[disk limit 4 MB reached: files cannot grow until some in /mnt/user-data are deleted]" {
		t.Errorf("ls when full = %q, %v", out, err)
	}
	if out, _ := call(t, m, "t", "bash", map[string]any{"command": "cp big big2 && echo copied"}); strings.Contains(out, "copied") {
		t.Errorf("a write when full = %q", out)
	}
	mustCall(t, m, "t", "bash", map[string]any{"command": "rm -f big big2"})
	if out := mustCall(t, m, "t", "bash", map[string]any{"command": "echo hi > small && cat small"}); out != "hi" {
		t.Errorf("after deleting = %q", out)
	}
}
