package bwrap

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// IsolateOptions says what an isolated program sees beyond the read-only
// system, the skills and the mounts.
type IsolateOptions struct {
	// WorkDir is a host directory (made if needed) whose "workspace"
	// subdirectory is the program's writable /mnt/user-data/workspace.
	WorkDir string
	// Home is a host directory (made if needed) mounted writable at
	// HomeDir and named by $HOME; "" gives no home.
	Home string
	// ReadOnly are host directories (or files) shown read-only at their
	// own paths, such as the program's install directory or its
	// interpreter's. Ones inside the system directories are visible
	// already and left out; deerflow's own files inside them are hidden.
	ReadOnly []string
	// PathDirs are put in front of the sandbox's PATH.
	PathDirs []string
}

// Isolated is a long-running program prepared to run in a sandbox like
// bash's. Set up Cmd's pipes, start it, then call Ready at once: the
// program is held until its limits and network are in place. Call
// Release after Cmd has been waited for.
type Isolated struct {
	Cmd    *exec.Cmd
	j      *Jail
	p      *Process
	infoR  *os.File
	blockW *os.File
	home   string
}

// Isolate returns cmd prepared to run inside bubblewrap: the environment
// is exactly cmd.Env (PATH and HOME are the sandbox's), handed over as
// bubblewrap's own environment, never as arguments.
func (j *Jail) Isolate(cmd *exec.Cmd, o IsolateOptions) (iso *Isolated, err error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Process != nil {
		return nil, errors.New("sandbox: isolate: the command is already set up")
	}
	if err := os.MkdirAll(filepath.Join(o.WorkDir, "workspace"), 0o700); err != nil {
		return nil, err
	}
	var args []string
	home := Workspace
	if o.Home != "" {
		if err := os.MkdirAll(o.Home, 0o700); err != nil {
			return nil, err
		}
		args = append(args, "--bind", o.Home, HomeDir)
		home = HomeDir
	}
	var shown []Mount
	for _, d := range o.ReadOnly {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || slices.ContainsFunc(SystemDirs, func(s string) bool { return within(d, s) }) {
			continue
		}
		args = append(args, "--ro-bind-try", d, d)
		shown = append(shown, Mount{HostPath: d, Path: d, ReadOnly: true})
	}
	args = append(args, j.masks(shown)...)
	args = append(j.args(o.WorkDir, args...), "--info-fd", "4", "--block-fd", "5")
	name := cmd.Args[0]
	if filepath.IsAbs(cmd.Path) {
		name = cmd.Path
	}
	iso = &Isolated{j: j, p: &Process{}, home: home}
	if iso.Cmd, err = j.command(nil, args, append([]string{name}, cmd.Args[1:]...), &iso.infoR, &iso.blockW); err != nil {
		return nil, err
	}
	iso.Cmd.Env = isolatedEnv(cmd.Env, home, o.PathDirs)
	iso.p.Cmd = iso.Cmd
	return iso, nil
}

// within reports whether path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// isolatedEnv is env with the sandbox's PATH and HOME.
func isolatedEnv(env []string, home string, pathDirs []string) []string {
	out := Env(home, strings.Join(append(slices.Clone(pathDirs), PATH), ":"))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || k == "PATH" || k == "HOME" || strings.ContainsRune(kv, 0) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Ready lets the started program run once its limits and network are in
// place; on error the program has been killed.
func (i *Isolated) Ready(ctx context.Context) error {
	i.Cmd.ExtraFiles[1].Close() // the child's copies
	i.Cmd.ExtraFiles[2].Close()
	i.Cmd.ExtraFiles[0].Close()
	defer i.infoR.Close()
	defer i.blockW.Close()
	if err := i.j.hold(ctx, i.p, i.infoR, ""); err != nil {
		i.p.Kill()
		return err
	}
	if _, err := i.blockW.Write([]byte{1}); err != nil {
		i.p.Kill()
		return err
	}
	return nil
}

// Release ends the program's network and limits once it has exited (or
// closes what was prepared, when it never started).
func (i *Isolated) Release() {
	for _, f := range append(i.Cmd.ExtraFiles, i.infoR, i.blockW) {
		f.Close()
	}
	i.p.Release()
}

// Kill ends the program and everything it started.
func (i *Isolated) Kill() error { return i.p.Kill() }
