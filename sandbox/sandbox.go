// Package sandbox gives each agent thread its own files and a place to run
// commands: the virtual paths /mnt/user-data/{workspace,uploads,outputs},
// read-only /mnt/skills and configured mounts, file tools jailed with os.Root,
// and a bash tool that runs inside bubblewrap (or, only when the operator
// allows it, on the host).
//
// Host paths never reach the model: tools speak virtual paths only, and every
// result and error is scrubbed of host prefixes on the way out.
//
// It imports only the tools package of ours.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/sandbox/files"

	"github.com/deerflow/deerflow/sandbox/bwrap"
	"github.com/deerflow/deerflow/sandbox/egress"
	"github.com/deerflow/deerflow/sandbox/limit"
	"github.com/deerflow/deerflow/tools"
)

// netMode is what network commands get.
type netMode int

const (
	netNone   netMode = iota // a namespace of their own, loopback only
	netPublic                // the public internet only, through egress
	netHost                  // the host's network, shared
)

// Virtual paths every thread sees.
const (
	UserData  = bwrap.UserData
	Workspace = bwrap.Workspace
	Uploads   = UserData + "/uploads"
	Outputs   = UserData + "/outputs"
	Skills    = "/mnt/skills"
)

// DefaultBashTimeout bounds one bash command when Options.BashTimeout is 0.
const DefaultBashTimeout = 600 * time.Second

// Options configures a Manager.
type Options struct {
	// DataDir holds the threads: DataDir/threads/<id>/user-data. Required.
	DataDir string
	// SkillsDir is the host directory shown read-only at /mnt/skills.
	// Empty means no /mnt/skills; a directory that does not exist is
	// reported to the model as unavailable.
	SkillsDir string
	// SkillDirs are host directories shown read-only at virtual paths
	// under /mnt/skills (/mnt/skills/public, /mnt/skills/custom), for
	// skills kept in several places. A missing directory is left out.
	SkillDirs []Mount
	// Mounts are extra host directories shown at their virtual paths.
	Mounts []Mount
	// Network gives commands in bubblewrap the public internet, and only
	// that (see package egress); false gives them no network at all (a
	// namespace of their own with only its own loopback). Without the
	// helper programs it needs, there is no network, and NetworkStatus
	// says why.
	Network bool
	// NetworkAllow are exceptions to the public-only rule: "10.0.0.5:5432",
	// "db.internal", "10.1.0.0/16".
	NetworkAllow []string
	// HostNetwork shares this machine's network with commands: its
	// loopback, private networks and listening ports included. Only for
	// trusted users; the caller should warn.
	HostNetwork bool
	// Limits bound each command's memory and processes, the conversation's
	// files and /tmp. Zero fields are unlimited.
	Limits limit.Limits
	// AllowHostBash runs bash on the host, NOT isolated, when bubblewrap is
	// unavailable. The caller should log a loud warning when BashStatus
	// reports host mode.
	AllowHostBash bool
	// BashTimeout bounds one command; 0 means DefaultBashTimeout.
	BashTimeout time.Duration
	// DeferProbe holds the bubblewrap probe (two process launches) until
	// Probe or the first bash call, so that it does not compete with
	// start-up.
	DeferProbe bool
	// BwrapPath is the bubblewrap binary; "" looks up "bwrap" in PATH.
	BwrapPath string
	// SlirpPath is the slirp4netns binary; "" looks it up in PATH and the
	// sbin directories.
	SlirpPath string
	// Hide are host files and directories (the configuration file) that
	// must stay out of sight even where a mount or an isolated program's
	// directory holds them. DataDir is always hidden so.
	Hide []string
}

// Mount exposes a host directory inside the sandbox.
type Mount = bwrap.Mount

// Manager owns every thread's sandbox directories and the tools over them.
// It is safe for concurrent use.
type Manager struct {
	dataDir     string // absolute
	threadsDir  string
	realThreads string  // threadsDir with symlinks resolved
	scrubs      []scrub // host prefixes hidden in every thread
	skillsDir   string  // absolute, or ""
	skills      []Mount // every read-only skills area: SkillsDir, then SkillDirs
	mounts      []Mount
	hide        []string // host paths masked wherever a bind would show them
	net         netMode
	netWhy      string // why a public network is down; written before bashReady closes
	egress      *egress.Network
	limits      *limit.Enforcer
	resolvConf  string // the sandbox's /etc/resolv.conf, with a user-mode network
	timeout     time.Duration
	bash        bashRunner    // written once before bashReady closes; read it through runner()
	bashReady   chan struct{} // closed when bash is decided
	probeGo     chan struct{} // closed when the bubblewrap probe may run
	probeOnce   sync.Once
	offered     bashMode // how bash is offered to the model, known at once
	locks       files.Locks
}

// New checks o, creates DataDir/threads and finds out how bash can run.
// It runs bubblewrap once to make sure it can build a sandbox here.
func New(o Options) (*Manager, error) {
	if o.DataDir == "" {
		return nil, errors.New("sandbox: data dir is required")
	}
	dataDir, err := absClean(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: data dir: %w", err)
	}
	m := &Manager{
		dataDir:    dataDir,
		threadsDir: filepath.Join(dataDir, "threads"),
		timeout:    o.BashTimeout,
		limits:     limit.New(o.Limits),
	}
	if m.timeout <= 0 {
		m.timeout = DefaultBashTimeout
	}
	if o.SkillsDir != "" {
		if m.skillsDir, err = absClean(o.SkillsDir); err != nil {
			return nil, fmt.Errorf("sandbox: skills dir: %w", err)
		}
	}
	if m.skillsDir != "" {
		m.skills = append(m.skills, Mount{HostPath: m.skillsDir, Path: Skills, ReadOnly: true})
	}
	for i, sd := range o.SkillDirs {
		p := path.Clean(sd.Path)
		if !within(p, Skills) || p == Skills {
			return nil, fmt.Errorf("sandbox: skill dirs[%d]: %q is not under %s", i, sd.Path, Skills)
		}
		host, err := absClean(sd.HostPath)
		if err != nil {
			return nil, fmt.Errorf("sandbox: skill dirs[%d]: %w", i, err)
		}
		m.skills = append(m.skills, Mount{HostPath: host, Path: p, ReadOnly: true})
	}
	if m.mounts, err = checkMounts(o.Mounts); err != nil {
		return nil, err
	}
	m.hide = []string{dataDir}
	for _, h := range o.Hide {
		if a, err := absClean(h); err == nil && h != "" {
			m.hide = append(m.hide, a)
		}
	}
	if err := os.MkdirAll(m.threadsDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "empty"), nil, 0o444); err != nil && !errors.Is(err, os.ErrPermission) {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := m.setupNetwork(o); err != nil {
		return nil, err
	}
	m.realThreads = realPath(m.threadsDir)
	m.scrubs = m.sharedScrubs()
	m.startBash(o)
	return m, nil
}

// setupNetwork decides what network commands get and, for the public
// one, writes the sandbox's resolv.conf (slirp4netns's resolver).
func (m *Manager) setupNetwork(o Options) error {
	switch {
	case o.HostNetwork:
		m.net = netHost
	case o.Network:
		m.net = netPublic
	}
	var err error
	if m.egress, err = egress.New(egress.Options{Allow: o.NetworkAllow, Slirp: o.SlirpPath}); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if m.net != netPublic {
		return nil
	}
	m.netWhy = m.egress.Missing()
	m.resolvConf = filepath.Join(m.dataDir, "resolv.conf")
	if err := os.WriteFile(m.resolvConf, []byte("nameserver "+egress.Resolver+"\n"), 0o644); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

func absClean(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.Clean(a), nil
}

// checkMounts normalises mounts and rejects ones that cannot work: relative
// or root virtual paths, duplicates, and paths over /mnt/user-data or
// /mnt/skills. Parents sort before children so bind order is right.
func checkMounts(in []Mount) ([]Mount, error) {
	out := make([]Mount, 0, len(in))
	seen := map[string]bool{}
	for i, mt := range in {
		p := path.Clean(mt.Path)
		if !path.IsAbs(mt.Path) || p == "/" || strings.ContainsAny(p, "\x00\n") {
			return nil, fmt.Errorf("sandbox: mounts[%d]: path %q must be an absolute virtual path such as /mnt/data", i, mt.Path)
		}
		for _, r := range []string{UserData, Skills} {
			if within(p, r) || within(r, p) {
				return nil, fmt.Errorf("sandbox: mounts[%d]: path %q overlaps %s", i, p, r)
			}
		}
		for _, sys := range bwrap.SystemDirs {
			if within(p, sys) {
				return nil, fmt.Errorf("sandbox: mounts[%d]: path %q is inside %s, which the sandbox keeps read-only", i, p, sys)
			}
		}
		if seen[p] {
			return nil, fmt.Errorf("sandbox: mounts[%d]: duplicate path %q", i, p)
		}
		seen[p] = true
		if mt.HostPath == "" {
			return nil, fmt.Errorf("sandbox: mounts[%d]: host path is required", i)
		}
		host, err := absClean(mt.HostPath)
		if err != nil {
			return nil, fmt.Errorf("sandbox: mounts[%d]: %w", i, err)
		}
		out = append(out, Mount{HostPath: host, Path: p, ReadOnly: mt.ReadOnly})
	}
	slices.SortFunc(out, func(a, b Mount) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// within reports whether virtual path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// Tools returns the sandbox tools. bash is included only when it can run
// (see BashStatus).
func (m *Manager) Tools() []tools.Tool {
	ts := []tools.Tool{
		m.lsTool(), m.readFileTool(), m.writeFileTool(), m.strReplaceTool(),
		m.globTool(), m.grepTool(), m.presentFilesTool(), m.viewImageTool(),
		m.listUploadsTool(),
	}
	if m.offered != bashOff {
		ts = append(ts, m.bashTool())
	}
	return ts
}

// Probe lets the bubblewrap probe run now (see Options.DeferProbe); the
// first bash call does too.
func (m *Manager) Probe() {
	m.probeOnce.Do(func() { close(m.probeGo) })
}

// BashStatus reports whether the bash tool is offered and how it runs, in
// words for `deerflow check` and the startup log. It waits for the probe,
// and so starts it.
func (m *Manager) BashStatus() (available bool, how string) {
	r := m.runner()
	return r.mode != bashOff, r.status
}

// NetworkStatus says what network commands get, in words for `deerflow
// check`, /status and the start-up log; ok is false when the configured
// network could not be given. It waits for the bubblewrap probe.
func (m *Manager) NetworkStatus() (ok bool, how string) {
	m.runner()
	switch {
	case m.net == netHost:
		return true, "the host's network, shared (sandbox.host_network: true): commands reach this machine's loopback, private networks and cloud metadata"
	case m.net == netNone:
		return true, "none (sandbox.network: false)"
	case m.netWhy != "":
		return false, "none: " + m.netWhy + "; commands run without network"
	}
	return true, m.egress.Describe()
}

// Close waits for the clean-up of ended commands (their networks and
// cgroups) to finish. Commands still running are their callers' to end.
func (m *Manager) Close() {
	m.egress.Close()
	m.limits.Close()
}

// LimitsStatus says how commands are limited, for `deerflow check` and
// the start-up log.
func (m *Manager) LimitsStatus() string { return m.limits.Describe() }

// netDown is why the public network is off, or "".
func (m *Manager) netDown() string { return m.netWhy }

// lookBwrap finds the bubblewrap binary.
func lookBwrap(p string) (string, error) {
	if p == "" {
		p = "bwrap"
	}
	return exec.LookPath(p)
}
