package main

import (
	"log/slog"
	"strings"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/sandbox/limit"
	"github.com/deerflow/deerflow/skills"
)

// health is the /status lines about degraded parts: a sandbox that could
// not get its network, a bash tool that is off, an MCP server that is down.
func (a *app) health() []string {
	var out []string
	ok, how := a.sandbox.BashStatus()
	switch {
	case !ok:
		out = append(out, "Bash: "+how)
	case !strings.HasPrefix(how, "host"):
		if netOK, net := a.sandbox.NetworkStatus(); !netOK || a.cfg.Sandbox.HostNetwork {
			out = append(out, "Sandbox network: "+net)
		}
	}
	if a.mcp != nil {
		out = append(out, a.mcp.Health()...) // servers that are down, and why
	}
	return out
}

// hidden are the files no sandbox may see even where a mount or an MCP
// server's directory holds them: the configuration (the data dir is
// hidden always).
func hidden(cfg *config.Config) []string {
	if f := cfg.File(); f != "" {
		return []string{f}
	}
	return nil
}

// logSandbox says at start what commands' network and limits are, loudly
// when they are looser than the defaults or the network is missing.
func logSandbox(log *slog.Logger, cfg *config.Config, sb *sandbox.Manager) {
	netOK, net := sb.NetworkStatus()
	switch {
	case cfg.Sandbox.HostNetwork:
		log.Warn("the sandbox shares this machine's network (sandbox.host_network: true): commands reach its loopback, private networks and cloud metadata; only let trusted users talk to this deerflow", "network", net)
	case !netOK:
		log.Warn("the sandbox has no network", "network", net)
	default:
		log.Info("sandbox", "network", net, "limits", sb.LimitsStatus())
	}
}

// newSandbox builds the sandbox for cfg with its threads under dataDir.
func newSandbox(cfg *config.Config, dataDir string) (*sandbox.Manager, error) {
	mounts := make([]sandbox.Mount, len(cfg.Sandbox.Mounts))
	for i, m := range cfg.Sandbox.Mounts {
		mounts[i] = sandbox.Mount{HostPath: m.HostPath, Path: m.Path, ReadOnly: m.ReadOnly}
	}
	return sandbox.New(sandbox.Options{
		DataDir: dataDir,
		SkillDirs: []sandbox.Mount{
			{HostPath: publicSkillsDir(dataDir), Path: skills.PublicRoot, ReadOnly: true},
			{HostPath: cfg.Skills.Path, Path: skills.CustomRoot, ReadOnly: true},
		},
		Mounts:       mounts,
		Network:      cfg.Sandbox.Network,
		NetworkAllow: cfg.Sandbox.NetworkAllow,
		HostNetwork:  cfg.Sandbox.HostNetwork,
		Limits: limit.Limits{
			MemoryMB:  cfg.Sandbox.Limits.MemoryMB,
			Processes: cfg.Sandbox.Limits.Processes,
			DiskMB:    cfg.Sandbox.Limits.DiskMB,
			TmpMB:     cfg.Sandbox.Limits.TmpMB,
		},
		AllowHostBash: cfg.Sandbox.AllowHostBash,
		Hide:          hidden(cfg),
		BashTimeout:   time.Duration(cfg.Sandbox.BashTimeoutSeconds) * time.Second,
		DeferProbe:    true, // app.background starts it
	})
}
