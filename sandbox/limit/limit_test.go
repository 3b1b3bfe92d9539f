package limit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A delegated cgroup v2 subtree, as systemd makes one for a unit with
// Delegate=yes, with this process in it: setup moves it to a leaf,
// enables the controllers, and per-command cgroups get the limits.
func TestSetupV2(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "cgroup.controllers", "cpu io memory pids\n")
	put(t, dir, "cgroup.subtree_control", "")
	put(t, dir, "cgroup.procs", "4242\n")
	c, err := setupV2(dir, 4242)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cgroup.subtree_control":           "+memory +pids",
		"supervisor/cgroup.procs":          "4242",
		"sandboxes/cgroup.subtree_control": "+memory +pids",
	}
	for f, v := range want {
		if got := get(t, dir, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	g, err := c.create("cmd-1", Limits{MemoryMB: 64, Processes: 32})
	if err != nil {
		t.Fatal(err)
	}
	cmd := filepath.Join("sandboxes", "cmd-1")
	for f, v := range map[string]string{"memory.max": "67108864", "memory.swap.max": "0", "memory.oom.group": "1", "pids.max": "32"} {
		if got := get(t, dir, filepath.Join(cmd, f)); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	if g.hit() != "" {
		t.Error("a fresh cgroup reports a limit hit")
	}
	put(t, filepath.Join(dir, cmd), "pids.events", "max 3\n")
	if got := g.hit(); got != "processes" {
		t.Errorf("hit = %q, want processes", got)
	}
	put(t, filepath.Join(dir, cmd), "memory.events", "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\noom_group_kill 1\n")
	if got := g.hit(); got != "memory" {
		t.Errorf("hit = %q, want memory", got)
	}
}

func TestSetupV2NotDelegated(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "cgroup.controllers", "cpu io\n")
	if _, err := setupV2(dir, 1); err == nil || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Errorf("err = %v, want one naming Delegate=yes", err)
	}
}

func TestOwnCgroup(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "cgroup", "9:name=systemd:/\n8:pids:/a\n4:memory,hugetlb:/process_api/b9\n0::/system.slice/deerflow.service\n")
	for _, tt := range []struct{ controller, want string }{{"", "/system.slice/deerflow.service"}, {"memory", "/process_api/b9"}, {"pids", "/a"}} {
		if got, err := ownCgroup(filepath.Join(dir, "cgroup"), tt.controller); err != nil || got != tt.want {
			t.Errorf("ownCgroup(%q) = %q, %v, want %q", tt.controller, got, err, tt.want)
		}
	}
	put(t, dir, "mountinfo", "25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw\n35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev - cgroup2 cgroup2 rw\n")
	if got, err := cgroup2Mount(filepath.Join(dir, "mountinfo")); err != nil || got != "/sys/fs/cgroup/unified" {
		t.Errorf("cgroup2Mount = %q, %v", got, err)
	}
}

// Without a cgroup, a command's pid 1 gets rlimits that its processes
// inherit: address space, processes, and a file size that is what is left
// of the disk limit.
func TestRlimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "used"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	e := &Enforcer{l: Limits{MemoryMB: 64, Processes: 32, DiskMB: 8}, why: "test"}
	e.found.Do(func() {}) // rlimits only, whatever this machine has
	g, err := e.Start(cmd.Process.Pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b, err := os.ReadFile(filepath.Join("/proc", itoa(cmd.Process.Pid), "limits"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		for _, name := range []string{"Max address space", "Max processes", "Max file size"} {
			if strings.HasPrefix(line, name) {
				got[name] = strings.Fields(line[len(name):])[0]
			}
		}
	}
	left := 8<<20 - Usage(dir)
	want := map[string]string{"Max address space": "67108864", "Max processes": "32", "Max file size": itoa(int(left))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(e.Describe(), "rlimits per process (address space 64 MB, 32 processes") {
		t.Errorf("Describe = %q", e.Describe())
	}
}

// The watcher stops the command once its cgroup reports a limit, and the
// reason names it.
func TestWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := &fakeCgroup{}
		g := &Guard{e: &Enforcer{l: Limits{Processes: 32}}, cg: fc}
		stopped := make(chan struct{})
		go g.Watch(context.Background(), func() { close(stopped) })
		time.Sleep(10 * tick)
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stopped before any limit was hit")
		default:
		}
		fc.what.Store("processes")
		time.Sleep(tick)
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("not stopped a tick after the limit was hit")
		}
		if got := g.Close(); got != "process limit 32 reached" {
			t.Errorf("reason = %q", got)
		}
	})
}

type fakeCgroup struct{ what atomic.Value }

func (f *fakeCgroup) add(int) error { return nil }
func (f *fakeCgroup) hit() string {
	s, _ := f.what.Load().(string)
	return s
}
func (f *fakeCgroup) remove() error { return nil }

func put(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func itoa(n int) string { return strconv.Itoa(n) }

// Without cgroups, the watcher counts the command's process tree.
func TestTreeUsage(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & echo started; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if _, err := out.Read(make([]byte, 8)); err != nil { // "started": both children exist
		t.Fatal(err)
	}
	procs, rss := treeUsage(cmd.Process.Pid)
	if procs != 3 || rss <= 0 {
		t.Errorf("treeUsage = %d processes, %d bytes; want 3 and some memory", procs, rss)
	}
	g := &Guard{e: &Enforcer{l: Limits{Processes: 3}}, pid: cmd.Process.Pid}
	if got := g.check(false); got != "process limit 3 reached" {
		t.Errorf("check = %q", got)
	}
}
