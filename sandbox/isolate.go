package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Isolate returns cmd to run inside a bubblewrap sandbox like bash's: the
// read-only system, the skills and mounts, workDir (a host directory, made
// if needed) as its writable /mnt/user-data/workspace, network per
// sandbox.network, and an environment of exactly cmd.Env (PATH is the
// sandbox's). It is for long-running helpers such as MCP servers, whose
// programs must live in the system directories. ok is false when
// bubblewrap is not available; cmd is then returned unchanged.
func (m *Manager) Isolate(cmd *exec.Cmd, workDir string) (out *exec.Cmd, ok bool, err error) {
	r := m.runner()
	if r.mode != bashBwrap {
		return cmd, false, nil
	}
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Process != nil {
		return nil, false, errors.New("sandbox: isolate: the command is already set up")
	}
	if err := os.MkdirAll(filepath.Join(workDir, "workspace"), 0o700); err != nil {
		return nil, false, err
	}
	args := m.bwrapArgs(r, workDir)
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "" || k == "PATH" || k == "HOME" {
			continue
		}
		args = append(args, "--setenv", k, v)
	}
	name := cmd.Args[0]
	if filepath.IsAbs(cmd.Path) {
		name = cmd.Path
	}
	args = append(append(args, "--", name), cmd.Args[1:]...)
	out = exec.Command(r.bwrap, args...)
	out.Env = sandboxEnv(Workspace, sandboxPATH)
	return out, true, nil
}
