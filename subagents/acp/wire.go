package acp

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/sandbox/bwrap"
	"github.com/deerflow/deerflow/tools"
)

// FromConfig builds invoke_acp_agent for cfg's ACP agents, or nil when there
// are none. An agent runs in the conversation's sandbox: /mnt/user-data is
// the thread's, its working directory the workspace, its program's
// directories read-only, a private home at <data_dir>/acp/<name>/home; its
// env reaches it through bubblewrap's environment, never as arguments.
// Without bubblewrap it runs on the host in the thread's workspace.
//
// ask puts an agent's permission request to the person (see Options.Ask).
func FromConfig(cfg *config.Config, sb *sandbox.Manager, ask func(ctx context.Context, chatKey, userID, question string, options []string, wait time.Duration) (int, error), log *slog.Logger) tools.Tool {
	agents := make([]Agent, len(cfg.ACP.Agents))
	for i, a := range cfg.ACP.Agents {
		secs := a.TimeoutSeconds
		if secs == 0 {
			secs = config.DefaultACPTimeout
		}
		agents[i] = Agent{
			Name: a.Name, Description: a.Description, Command: a.Command, Args: a.Args, Env: a.Env,
			Timeout: time.Duration(secs) * time.Second, Permissions: a.Permissions,
		}
	}
	dir := filepath.Join(cfg.DataDir, "acp")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // bubblewrap binds it from wherever it runs
	}
	return Tool(Options{
		Agents: agents,
		Files:  sb,
		Ask:    ask,
		Isolate: func(threadID string, a Agent, cmd *exec.Cmd) (*exec.Cmd, Sandbox, error) {
			return isolateACP(sb, filepath.Join(dir, a.Name, "home"), threadID, a, cmd, log)
		},
		Logger: log,
	})
}

// isolateACP prepares agent a's command to run in thread threadID's
// sandbox; without bubblewrap, it runs on the host in the thread's
// workspace, as logged.
func isolateACP(sb *sandbox.Manager, home, threadID string, a Agent, cmd *exec.Cmd, log *slog.Logger) (*exec.Cmd, Sandbox, error) {
	userData, err := sb.UserDataDir(threadID)
	if err != nil {
		return nil, nil, err
	}
	pathEnv := os.Getenv("PATH")
	if p := a.Env["PATH"]; p != "" {
		pathEnv = p + string(filepath.ListSeparator) + pathEnv
	}
	prog, err := bwrap.ProgramDirs(a.Command, a.Args, pathEnv)
	if err != nil {
		return nil, nil, err
	}
	c := exec.Command(prog.Path, cmd.Args[1:]...)
	c.Env = cmd.Env
	iso, ok, err := sb.Isolate(c, bwrap.IsolateOptions{
		WorkDir:  userData,
		Home:     home,
		ReadOnly: prog.ReadOnly,
		PathDirs: prog.PathDirs,
	})
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		log.Warn("bubblewrap is not available; an ACP agent runs unsandboxed on this machine", "agent", a.Name)
		cmd.Dir = filepath.Join(userData, "workspace")
		return cmd, nil, nil
	}
	return iso.Cmd, iso, nil
}
