// Package limit bounds what one sandboxed command may take: memory and
// processes for all of its processes together (a cgroup of its own, under
// a delegated cgroup v2 subtree or, for root, cgroup v1), and, where no
// cgroup can be made, per-process rlimits; the size of files it may
// write, so that the conversation's files stay within their disk limit;
// and a watcher that stops the whole command the moment a limit is hit
// and says which.
//
// It imports no package of ours.
package limit

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Limits are the sandbox.limits keys. Zero means no limit.
type Limits struct {
	MemoryMB  int // all processes of one command together
	Processes int // processes (and threads) of one command
	DiskMB    int // the conversation's files: uploads, workspace, outputs
	TmpMB     int // the sandbox's /tmp, a tmpfs (applied by the sandbox)
}

// Enforcer applies Limits to commands. It is safe for concurrent use.
type Enforcer struct {
	l        Limits
	found    sync.Once
	cg       cgroups        // nil: rlimits only (set by find)
	why      string         // why no cgroup, when cg is nil
	removing sync.WaitGroup // cgroups of ended commands
	stale    []string       // cgroup dirs whose removal failed (still emptying)
}

// cgroups makes one cgroup per command.
type cgroups interface {
	name() string
	create(id string, l Limits) (cgroup, error)
}

// cgroup is one command's cgroup.
type cgroup interface {
	add(pid int) error
	// hit says which limit the cgroup reached: "memory", "processes" or "".
	hit() string
	remove() error
}

// New returns the Enforcer of l. How the limits can be enforced here is
// found on first use (see Find), so that building one costs nothing.
func New(l Limits) *Enforcer { return &Enforcer{l: l} }

// Find finds, once, how the limits can be enforced here: a cgroup v2
// subtree this process may manage, else cgroup v1 (as root), else
// rlimits. Making and removing a trial cgroup takes about a millisecond,
// so it is left to first use: Start (in a service, the background
// bubblewrap probe's first sandbox) and Describe.
func (e *Enforcer) Find() { e.found.Do(e.find) }

func (e *Enforcer) find() {
	l := e.l
	if l.MemoryMB <= 0 && l.Processes <= 0 {
		return
	}
	var whys []string
	for _, b := range []struct {
		name string
		make func() (cgroups, error)
	}{{"cgroup v2", newV2}, {"cgroup v1", newV1}} {
		cg, err := b.make()
		if err == nil {
			err = usable(cg, l)
		}
		if err == nil {
			e.cg = cg
			return
		}
		whys = append(whys, b.name+": "+err.Error())
	}
	e.why = joinWhy(whys)
}

// usable makes and removes one cgroup, as each command will.
func usable(cg cgroups, l Limits) error {
	g, err := cg.create(newID(), l)
	if err != nil {
		return err
	}
	return g.remove()
}

// Limits are the limits enforced.
func (e *Enforcer) Limits() Limits { return e.l }

// Describe says how the limits are enforced, for `deerflow check` and the
// start-up log.
func (e *Enforcer) Describe() string {
	e.Find()
	l := e.l
	files := fmt.Sprintf("files: %s per conversation (file size limit and a watcher), /tmp: %s tmpfs", mb(l.DiskMB), mb(l.TmpMB))
	if e.cg != nil {
		return fmt.Sprintf("%s per command (memory %s, %s processes); %s", e.cg.name(), mb(l.MemoryMB), count(l.Processes), files)
	}
	if l.MemoryMB <= 0 && l.Processes <= 0 {
		return "memory and processes unlimited; " + files
	}
	return fmt.Sprintf("rlimits per process (address space %s, %s processes per sandbox user; no cgroup: %s); %s",
		mb(l.MemoryMB), count(l.Processes), e.why, files)
}

func mb(n int) string {
	if n <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d MB", n)
}

func count(n int) string {
	if n <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

// ids numbers the cgroups this process makes. It is the process's, not an
// Enforcer's: several Enforcers (a service's and a check's, or tests')
// share the cgroup directories, and a removed cgroup may linger a moment.
var ids atomic.Int64

// newID names a new per-command cgroup.
func newID() string { return fmt.Sprintf("cmd-%d-%d", os.Getpid(), ids.Add(1)) }

func joinWhy(w []string) string {
	s := ""
	for i, x := range w {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}
