package main

import (
	"log/slog"
	"os/exec"
	"path/filepath"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/sandbox/bwrap"
)

// newMCP builds the MCP client for cfg's servers. A stdio server runs in
// the sandbox unless its sandbox key is false: its program's directories
// read-only, a private writable home at <data_dir>/mcp/<name>/home, and
// <data_dir>/mcp/<name>/workspace as its working directory; its env
// reaches it through bubblewrap's environment, never as arguments.
func newMCP(cfg *config.Config, sb *sandbox.Manager, tok mcp.Tokens, log *slog.Logger) *mcp.Manager {
	dir := filepath.Join(cfg.DataDir, "mcp")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // bubblewrap binds it from wherever it runs
	}
	return mcp.New(mcp.Options{
		Servers: mcp.ServersFrom(cfg.MCP.Servers), // type, timeout_seconds, sandbox (nil: true), oauth
		Isolate: func(s mcp.Server, cmd *exec.Cmd) (*exec.Cmd, mcp.Sandbox, error) {
			return isolateMCP(sb, filepath.Join(dir, s.Name), s, cmd, log)
		},
		Tokens: tok, // OAuth logins (mcp/oauth); nil: OAuth servers need a login
		Logger: log,
	})
}

// isolateMCP prepares server s's command to run in the sandbox with its
// files under dir; without bubblewrap, it runs on the host, as logged.
func isolateMCP(sb *sandbox.Manager, dir string, s mcp.Server, cmd *exec.Cmd, log *slog.Logger) (*exec.Cmd, mcp.Sandbox, error) {
	prog, err := bwrap.ProgramDirs(s.Command, s.Args, s.SearchPath()) // found as on the host
	if err != nil {
		return nil, nil, err
	}
	c := exec.Command(prog.Path, cmd.Args[1:]...)
	c.Env = cmd.Env
	iso, ok, err := sb.Isolate(c, bwrap.IsolateOptions{
		WorkDir:  dir,
		Home:     filepath.Join(dir, "home"),
		ReadOnly: prog.ReadOnly,
		PathDirs: prog.PathDirs,
	})
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		log.Warn("bubblewrap is not available; an MCP server runs unsandboxed on this machine", "server", s.Name)
		return cmd, nil, nil
	}
	log.Debug("mcp: server sandboxed", "server", s.Name, "program", prog.Path, "read_only", prog.ReadOnly)
	return iso.Cmd, iso, nil
}
