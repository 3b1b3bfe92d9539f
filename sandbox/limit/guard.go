package limit

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Ticks of the watcher: how often a command's cgroup is read, and every
// how many ticks its conversation's files are measured (a walk).
const (
	tick      = 100 * time.Millisecond
	diskEvery = 10
)

// Guard holds one command's limits; Close releases them.
type Guard struct {
	e    *Enforcer
	cg   cgroup // nil without cgroups
	pid  int    // the command's pid 1, whose tree is watched without cgroups
	dir  string // the conversation's files, for the disk limit
	disk int64  // bytes; 0: no disk limit
	full bool   // the files were at the disk limit before the command

	mu     sync.Mutex
	reason string
}

// Start puts process pid (a sandbox's pid 1, held before its command
// starts, so that everything it runs inherits them) under the limits.
// dir holds the conversation's files, measured for the disk limit. On
// error nothing is left behind; the caller must not let the command
// start.
func (e *Enforcer) Start(pid int, dir string) (*Guard, error) {
	e.Find()
	g := &Guard{e: e, pid: pid, dir: dir, disk: int64(e.l.DiskMB) << 20}
	if e.cg != nil {
		cg, err := e.cg.create(newID(), e.l)
		if err != nil {
			return nil, fmt.Errorf("limits: %s: %w", e.cg.name(), err)
		}
		if err := cg.add(pid); err != nil {
			cg.remove()
			return nil, fmt.Errorf("limits: %s: %w", e.cg.name(), err)
		}
		g.cg = cg
	}
	if err := g.rlimits(pid); err != nil {
		g.Close()
		return nil, fmt.Errorf("limits: %w", err)
	}
	return g, nil
}

// rlimits sets pid's resource limits: the largest file it may write (what
// is left of the disk limit), and without a cgroup the memory and
// process limits per process.
func (g *Guard) rlimits(pid int) error {
	set := func(res int, n uint64) error {
		return unix.Prlimit(pid, res, &unix.Rlimit{Cur: n, Max: n}, nil)
	}
	if g.disk > 0 {
		left := max(g.disk-Usage(g.dir), 0)
		g.full = left == 0
		if err := set(unix.RLIMIT_FSIZE, uint64(left)); err != nil {
			return err
		}
	}
	if g.cg != nil {
		return nil
	}
	if l := g.e.l; l.MemoryMB > 0 {
		if err := set(unix.RLIMIT_AS, uint64(l.MemoryMB)<<20); err != nil {
			return err
		}
	}
	if l := g.e.l; l.Processes > 0 {
		if err := set(unix.RLIMIT_NPROC, uint64(l.Processes)); err != nil {
			return err
		}
	}
	return nil
}

// Watch checks the limits until ctx ends, and calls stop (which must end
// the whole command) once one is hit.
func (g *Guard) Watch(ctx context.Context, stop func()) {
	if l := g.e.l; g.cg == nil && g.disk <= 0 && l.MemoryMB <= 0 && l.Processes <= 0 {
		return
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if g.check(n%diskEvery == 0) != "" {
			stop()
			return
		}
	}
}

// check records and returns the limit hit, if any; disk also measures the
// files.
func (g *Guard) check(disk bool) string {
	reason := ""
	switch g.hit() {
	case "memory":
		reason = fmt.Sprintf("memory limit %d MB reached", g.e.l.MemoryMB)
	case "processes":
		reason = fmt.Sprintf("process limit %d reached", g.e.l.Processes)
	}
	if reason == "" && disk && g.disk > 0 && !g.full && Usage(g.dir) >= g.disk {
		reason = fmt.Sprintf("disk limit %d MB reached", g.e.l.DiskMB)
	}
	if reason != "" {
		g.mu.Lock()
		if g.reason == "" {
			g.reason = reason
		}
		reason = g.reason
		g.mu.Unlock()
	}
	return reason
}

// hit says which limit the command reached: what its cgroup counted, or
// without one what its process tree holds now (rlimits keep each process
// within bounds; this stops the command as a whole).
func (g *Guard) hit() string {
	if g.cg != nil {
		return g.cg.hit()
	}
	if g.pid <= 0 {
		return ""
	}
	l := g.e.l
	procs, rss := treeUsage(g.pid)
	switch {
	case l.MemoryMB > 0 && rss >= int64(l.MemoryMB)<<20:
		return "memory"
	case l.Processes > 0 && procs >= l.Processes:
		return "processes"
	}
	return ""
}

// Full says, when the conversation's files were at the disk limit before
// the command (which could then write nothing), what to do about it;
// otherwise "".
func (g *Guard) Full() string {
	if !g.full {
		return ""
	}
	return fmt.Sprintf("disk limit %d MB reached: files cannot grow until some in %s are deleted", g.e.l.DiskMB, "/mnt/user-data")
}

// Close releases the command's cgroup once it has ended, and says which
// limit it reached ("" for none). The cgroup is removed in the
// background: a killed command's processes leave it a moment after the
// command is reaped. Enforcer.Close waits for that.
func (g *Guard) Close() string {
	g.pid = 0 // ended: its number may be another process's by now
	reason := g.check(true)
	if g.cg != nil {
		g.e.removing.Add(1)
		go func() {
			defer g.e.removing.Done()
			_ = g.cg.remove()
		}()
	}
	return reason
}

// Close waits until the cgroups of ended commands are removed.
func (e *Enforcer) Close() {
	e.found.Do(func() {}) // waits for a Find under way; none later
	e.removing.Wait()
}

// Usage is the disk space the files under dir take, in bytes (blocks
// allocated, so sparse files count for what they hold).
func Usage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
