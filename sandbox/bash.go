package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/tools"
)

type bashMode int

const (
	bashOff   bashMode = iota
	bashBwrap          // inside bubblewrap
	bashHost           // on the host, not isolated (allow_host_bash)
)

// bashRunner is how bash runs, decided once in New.
type bashRunner struct {
	mode   bashMode
	status string
	bwrap  string   // bubblewrap binary
	shell  string   // /bin/bash, or /bin/sh without bash
	system []string // systemArgs
}

const (
	sandboxPATH   = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	captureMax    = 256 << 10 // bytes of output kept at each end before truncating
	waitDelay     = 5 * time.Second
	drainDeadline = 2 * time.Second
)

// etcFiles are the parts of the host's /etc a sandboxed command may read:
// what programs need to run (loader cache, Debian alternatives, users),
// resolve names and verify TLS. Never all of /etc: it holds shadow files,
// host keys and service configs with secrets. Each bind costs bubblewrap
// about 0.2 ms, so the list is short.
var etcFiles = []string{
	"alternatives", "crypto-policies", "fonts", "group", "hosts", "ld.so.cache",
	"localtime", "nsswitch.conf", "os-release", "passwd", "pki/ca-trust",
	"pki/tls/certs", "protocols", "resolv.conf", "services", "ssl/certs",
	"ssl/openssl.cnf",
}

// systemArgs are the bubblewrap arguments for the read-only system part of
// the sandbox, found once: /usr, the /bin and /lib dirs or their merged-usr
// symlinks, and etcFiles (symlinks into /usr are recreated, which is
// cheaper than a bind).
func systemArgs() []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case st.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--perms", "0755", "--dir", "/etc")
	for _, f := range etcFiles {
		p := "/etc/" + f
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(p); err == nil {
				abs := target
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(filepath.Dir(p), target)
				}
				if strings.HasPrefix(filepath.Clean(abs), "/usr/") {
					a = append(a, "--symlink", target, p)
					continue
				}
			}
		}
		a = append(a, "--ro-bind-try", p, p)
	}
	return a
}

// findBash decides how bash runs: bubblewrap when it works here, else the
// host when the operator allows it, else not at all.
func (m *Manager) findBash(o Options) bashRunner {
	shell := "/bin/sh"
	if st, err := os.Stat("/bin/bash"); err == nil && !st.IsDir() {
		shell = "/bin/bash"
	}
	why, fix := "bwrap not found in PATH", "install bubblewrap"
	bw, err := lookBwrap(o.BwrapPath)
	if err != nil {
		if o.BwrapPath != "" {
			why = "bwrap not found at " + o.BwrapPath
		}
	} else {
		r := bashRunner{mode: bashBwrap, bwrap: bw, shell: shell, system: systemArgs()}
		version, err := m.probe(r)
		if err == nil {
			r.status = fmt.Sprintf("%s at %s", version, bw)
			return r
		}
		why = fmt.Sprintf("bwrap at %s cannot build a sandbox here: %v", bw, err)
		fix = "allow unprivileged user namespaces for bubblewrap"
	}
	if o.AllowHostBash {
		return bashRunner{mode: bashHost, shell: shell,
			status: "host (sandbox.allow_host_bash: true — commands are NOT isolated; " + why + ")"}
	}
	return bashRunner{mode: bashOff,
		status: "not available: " + why + "; " + fix + " or set sandbox.allow_host_bash: true"}
}

// probe reports bubblewrap's version after running `true` in a sandbox
// built like the real ones.
func (m *Manager) probe(r bashRunner) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, r.bwrap, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("bwrap --version: %w", err)
	}
	args := append(m.bwrapArgs(r, ""), "--", r.shell, "-c", "true")
	out, err := exec.CommandContext(ctx, r.bwrap, args...).CombinedOutput()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Errorf("%w: %s", err, msg)
	}
	return strings.TrimSpace(string(v)), nil
}

// bwrapArgs builds the sandbox: a fresh root holding read-only system
// directories, the thread's user data at /mnt/user-data (userData ""
// makes an empty one, for the probe), skills and mounts; new pid, ipc,
// uts (and, without network, net) namespaces; no capabilities; a clean
// environment.
func (m *Manager) bwrapArgs(r bashRunner, userData string) []string {
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL", "--hostname", "sandbox",
		"--clearenv",
	}
	for _, kv := range sandboxEnv(Workspace, sandboxPATH) {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	if !m.network {
		a = append(a, "--unshare-net")
	}
	a = append(a, r.system...)
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
		"--perms", "0755", "--dir", "/mnt")
	if userData == "" {
		a = append(a, "--dir", Workspace)
	} else {
		a = append(a, "--bind", userData, UserData)
	}
	for _, sk := range m.skills {
		a = append(a, "--ro-bind-try", sk.HostPath, sk.Path)
	}
	for _, mt := range m.mounts {
		op := "--bind-try"
		if mt.ReadOnly {
			op = "--ro-bind-try"
		}
		a = append(a, op, mt.HostPath, mt.Path)
	}
	// The root itself (and /etc, /mnt in it) is a tmpfs bwrap made;
	// read-only, so nothing can be written outside the binds and /tmp.
	return append(a, "--remount-ro", "/", "--chdir", Workspace)
}

// sandboxEnv is the whole environment a command gets: nothing inherited,
// so no tokens or keys.
func sandboxEnv(home, pathVar string) []string {
	return []string{"PATH=" + pathVar, "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb", "TMPDIR=/tmp"}
}

type bashArgs struct {
	Description string `json:"description,omitempty" desc:"What the command does and why, in a few words."`
	Command     string `json:"command" desc:"The bash command to run."`
}

func (m *Manager) bashTool() tools.Tool {
	where := "inside an isolated sandbox. Files persist only under " + UserData + "; /tmp is emptied after each command, and background processes are stopped when the command ends"
	if m.offered == bashHost {
		where = "on the host machine. Keep files under " + UserData + "; background processes are stopped when the command ends"
	}
	net := "Network access is available."
	if !m.network {
		net = "There is no network access."
	}
	desc := fmt.Sprintf("Run a bash command %s. The working directory is %s. Returns stdout and stderr together, then [exit code N] if the command failed. Commands are stopped after %s. %s Long outputs are cut in the middle; redirect them to a file and use grep or read_file.",
		where, Workspace, seconds(m.timeout), net)
	return tool(m, "bash", desc, func(ctx context.Context, t *thread, in bashArgs) (string, error) {
		if strings.TrimSpace(in.Command) == "" {
			return "", errors.New("command is empty")
		}
		if r := m.runner(); r.mode == bashOff {
			return "", errors.New("bash is not available here (" + r.status + "); use the file tools instead")
		}
		return m.runBash(ctx, t, in.Command)
	})
}

// runBash runs command for t and reports its output and exit status. The
// command's whole process tree is killed on timeout or when ctx ends.
func (m *Manager) runBash(ctx context.Context, t *thread, command string) (string, error) {
	runCtx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", errors.New("the command could not be started")
	}
	defer pr.Close()
	p, err := m.start(runCtx, t, command, pw)
	pw.Close() // the child has its copy
	if err != nil {
		return "", errors.New("the command could not be started")
	}
	out := &capture{max: captureMax}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	waitErr := p.cmd.Wait()
	if m.runner().mode == bashHost {
		// Background children of the shell would keep running and hold
		// the output pipe. (In bubblewrap they died with the namespace.)
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	// Host processes that left the group may keep the pipe open; what they
	// wrote is in the pipe already, so do not wait for them.
	pr.SetReadDeadline(time.Now().Add(drainDeadline))
	<-drained
	head, tail, dropped := out.parts()
	text := strings.TrimRight(middleTruncate(head, tail, dropped, bashMaxChars), "\n")
	return bashResult(ctx, runCtx, m.timeout, text, waitErr)
}

// process is a started command.
type process struct {
	cmd      *exec.Cmd
	childPid atomic.Int64  // bubblewrap: the sandbox's pid 1, as seen here
	infoDone chan struct{} // closed once childPid is known or never will be
}

// start starts command for t, in bubblewrap or on the host, in its own
// process group, writing its output to out.
func (m *Manager) start(ctx context.Context, t *thread, command string, out *os.File) (*process, error) {
	p := &process{infoDone: make(chan struct{})}
	r := m.runner()
	var infoW *os.File
	if r.mode == bashBwrap {
		infoR, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		infoW = w
		defer infoW.Close() // the child has its copy
		args := append(m.bwrapArgs(r, t.userData), "--info-fd", "3", "--", r.shell, "-c", command)
		p.cmd = exec.CommandContext(ctx, r.bwrap, args...)
		p.cmd.Env = sandboxEnv(Workspace, sandboxPATH)
		p.cmd.ExtraFiles = []*os.File{infoW}
		go p.readInfo(infoR)
	} else {
		close(p.infoDone)
		p.cmd = exec.CommandContext(ctx, r.shell, "-c", command)
		p.cmd.Dir = filepath.Join(t.userData, "workspace")
		p.cmd.Env = sandboxEnv(p.cmd.Dir, hostPATH())
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = p.kill
	p.cmd.WaitDelay = waitDelay
	if err := p.cmd.Start(); err != nil {
		if infoW != nil {
			infoW.Close() // ends readInfo
		}
		return nil, err
	}
	return p, nil
}

// readInfo reads the sandbox's pid 1 from bubblewrap's --info-fd.
func (p *process) readInfo(r *os.File) {
	defer close(p.infoDone)
	defer r.Close()
	var info struct {
		ChildPid int64 `json:"child-pid"`
	}
	if json.NewDecoder(r).Decode(&info) == nil {
		p.childPid.Store(info.ChildPid)
	}
}

// kill ends the command and everything it started. Killing the sandbox's
// pid 1 ends its whole pid namespace, and bubblewrap exits only after that,
// so Wait returns once every process is gone. Without that pid (host mode,
// or bubblewrap still starting) it kills the process group.
func (p *process) kill() error {
	select {
	case <-p.infoDone:
	case <-time.After(time.Second):
	}
	if pid := p.childPid.Load(); pid > 0 {
		return syscall.Kill(int(pid), syscall.SIGKILL)
	}
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// bashResult words the end of a command for the model.
func bashResult(ctx, runCtx context.Context, timeout time.Duration, text string, waitErr error) (string, error) {
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("the command was stopped because the run was cancelled (%w)", context.Cause(ctx))
	case runCtx.Err() != nil:
		msg := fmt.Sprintf("the command did not finish within %s and was stopped, with every process it started. Give long jobs their own limit (e.g. timeout 120 CMD), run less at once, or write progress to a file", seconds(timeout))
		if text != "" {
			msg += ". Output before it was stopped:\n" + text
		}
		return "", errors.New(msg)
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		if errors.Is(waitErr, exec.ErrWaitDelay) {
			waitErr = nil // it exited; only a straggler held the output
		} else {
			return "", errors.New("the command could not be run")
		}
	}
	if text == "" {
		text = "(no output)"
	}
	if ee != nil {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("%s\n[killed by signal %s]", text, ws.Signal()), nil
		}
		return fmt.Sprintf("%s\n[exit code %d]", text, ee.ExitCode()), nil
	}
	return text, nil
}

// seconds formats a duration for the model: "600 seconds", "1.5 seconds".
func seconds(d time.Duration) string {
	if d == time.Second {
		return "1 second"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " seconds"
}

// hostPATH is the host's PATH, then the standard directories.
func hostPATH() string {
	if p := os.Getenv("PATH"); p != "" {
		return p + ":" + sandboxPATH
	}
	return sandboxPATH
}

// startBash decides how bash runs. The common case, bwrap on PATH without
// host fallback, is offered at once and checked in the background (the
// check runs a real sandbox and takes milliseconds, which start-up should
// not wait for); a bash call waits for the check. Other cases are decided
// before New returns.
func (m *Manager) startBash(o Options) {
	m.bashReady = make(chan struct{})
	m.probeGo = make(chan struct{})
	if !o.DeferProbe {
		m.Probe()
	}
	if _, err := lookBwrap(o.BwrapPath); err == nil && !o.AllowHostBash {
		m.offered = bashBwrap
		go func() {
			<-m.probeGo
			m.bash = m.findBash(o)
			close(m.bashReady)
		}()
		return
	}
	m.bash = m.findBash(o)
	m.offered = m.bash.mode
	close(m.bashReady)
}

// runner is how bash runs, once decided.
func (m *Manager) runner() bashRunner {
	m.Probe()
	<-m.bashReady
	return m.bash
}
