package limit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// v2 makes per-command cgroups under a delegated cgroup v2 subtree: the
// cgroup this process runs in (systemd's Delegate=yes gives a service
// one). This process moves itself into a leaf of it ("supervisor") so
// that the memory and pids controllers can be enabled for its children
// (cgroup v2 allows no processes in a cgroup whose children have
// controllers); commands get children of "sandboxes".
type v2 struct {
	base string // the "sandboxes" cgroup
}

func newV2() (cgroups, error) {
	mount, err := cgroup2Mount("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	own, err := ownCgroup("/proc/self/cgroup", "")
	if err != nil {
		return nil, err
	}
	return setupV2(filepath.Join(mount, own), os.Getpid())
}

// setupV2 prepares dir, the cgroup pid runs in, for per-command cgroups.
func setupV2(dir string, pid int) (*v2, error) {
	have, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	if !hasAll(string(have), "memory", "pids") {
		return nil, fmt.Errorf("the memory and pids controllers are not delegated to %s (run under systemd with Delegate=yes)", dir)
	}
	if on, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); !hasAll(string(on), "memory", "pids") {
		leaf := filepath.Join(dir, "supervisor")
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if err := moveAll(dir, leaf); err != nil {
			return nil, fmt.Errorf("moving this process to %s: %w", leaf, err)
		}
		if err := write(dir, "cgroup.subtree_control", "+memory +pids"); err != nil {
			return nil, err
		}
	}
	base := filepath.Join(dir, "sandboxes")
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if err := write(base, "cgroup.subtree_control", "+memory +pids"); err != nil {
		return nil, err
	}
	sweep(base)
	return &v2{base: base}, nil
}

// moveAll moves every process of cgroup dir into leaf.
func moveAll(dir, leaf string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, p := range strings.Fields(string(b)) {
		if err := write(leaf, "cgroup.procs", p); err != nil && !errors.Is(err, errNoProcess) {
			return err
		}
	}
	return nil
}

func (c *v2) name() string { return "cgroup v2" }

func (c *v2) create(id string, l Limits) (cgroup, error) {
	dir := filepath.Join(c.base, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	g := &cgroupV2{dir: dir}
	if l.MemoryMB > 0 {
		if err := write(dir, "memory.max", strconv.FormatInt(int64(l.MemoryMB)<<20, 10)); err != nil {
			g.remove()
			return nil, err
		}
		_ = write(dir, "memory.swap.max", "0")  // absent without swap accounting
		_ = write(dir, "memory.oom.group", "1") // the command dies as a whole
	}
	if l.Processes > 0 {
		if err := write(dir, "pids.max", strconv.Itoa(l.Processes)); err != nil {
			g.remove()
			return nil, err
		}
	}
	return g, nil
}

type cgroupV2 struct{ dir string }

func (g *cgroupV2) add(pid int) error { return write(g.dir, "cgroup.procs", strconv.Itoa(pid)) }

func (g *cgroupV2) hit() string { return hitIn(g.dir, "memory.events", g.dir) }

func (g *cgroupV2) remove() error {
	err := os.Remove(g.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = write(g.dir, "cgroup.kill", "1")
		err = removeSoon(g.dir)
	}
	return err
}

// v1 makes per-command cgroups in the memory and pids hierarchies of
// cgroup v1, below the cgroups this process runs in. Only root can,
// usually.
type v1 struct {
	mem, pids string // the "deerflow" cgroup in each hierarchy
}

func newV1() (cgroups, error) {
	c := &v1{}
	for _, h := range []struct {
		dst  *string
		name string
	}{{&c.mem, "memory"}, {&c.pids, "pids"}} {
		own, err := ownCgroup("/proc/self/cgroup", h.name)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join("/sys/fs/cgroup", h.name, own, "deerflow")
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		*h.dst = dir
		sweep(dir)
	}
	return c, nil
}

func (c *v1) name() string { return "cgroup v1" }

func (c *v1) create(id string, l Limits) (cgroup, error) {
	g := &cgroupV1{mem: filepath.Join(c.mem, id), pids: filepath.Join(c.pids, id)}
	for _, d := range []string{g.mem, g.pids} {
		if err := os.Mkdir(d, 0o755); err != nil {
			g.remove()
			return nil, err
		}
	}
	var err error
	if l.MemoryMB > 0 {
		n := strconv.FormatInt(int64(l.MemoryMB)<<20, 10)
		err = write(g.mem, "memory.limit_in_bytes", n)
		_ = write(g.mem, "memory.memsw.limit_in_bytes", n) // absent without swap accounting
	}
	if l.Processes > 0 && err == nil {
		err = write(g.pids, "pids.max", strconv.Itoa(l.Processes))
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

type cgroupV1 struct{ mem, pids string }

func (g *cgroupV1) add(pid int) error {
	if err := write(g.mem, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		return err
	}
	return write(g.pids, "cgroup.procs", strconv.Itoa(pid))
}

func (g *cgroupV1) hit() string { return hitIn(g.mem, "memory.oom_control", g.pids) }

// hitIn reads which limit a command's cgroup reached: an OOM kill counted
// in memFile (memory.events in v2, memory.oom_control in v1), or a fork
// refused at pids.max.
func hitIn(memDir, memFile, pidsDir string) string {
	if field(memDir, memFile, "oom_kill") > 0 {
		return "memory"
	}
	if field(pidsDir, "pids.events", "max") > 0 {
		return "processes"
	}
	return ""
}

func (g *cgroupV1) remove() error {
	return errors.Join(removeSoon(g.mem), removeSoon(g.pids))
}

var errNoProcess = errors.New("no such process")

// write writes value to a cgroup file.
func write(dir, file, value string) error {
	err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644)
	if errors.Is(err, syscall.ESRCH) {
		return errNoProcess
	}
	return err
}

// field reads "key N" from a flat-keyed cgroup file; 0 when absent.
func field(dir, file, key string) int64 {
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// removeSoon removes an empty cgroup. A killed command's processes leave
// it a moment after the command is reaped, so it retries briefly.
func removeSoon(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return err
}

// sweep removes the per-command cgroups a previous process left behind.
func sweep(base string) {
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "cmd-") {
			_ = os.Remove(filepath.Join(base, e.Name()))
		}
	}
}

func hasAll(list string, want ...string) bool {
	have := strings.Fields(list)
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// ownCgroup reads the cgroup path of this process from a /proc/self/cgroup
// file: the v2 line ("0::/path") for controller "", else the v1 line that
// lists controller.
func ownCgroup(file, controller string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], nil
		}
		for _, c := range strings.Split(parts[1], ",") {
			if controller != "" && c == controller {
				return parts[2], nil
			}
		}
	}
	if controller == "" {
		return "", errors.New("not in a cgroup v2 hierarchy")
	}
	return "", fmt.Errorf("no %s controller", controller)
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted, from a
// mountinfo file.
func cgroup2Mount(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			return f[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}
