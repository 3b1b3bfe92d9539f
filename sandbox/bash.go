package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
		version, err := m.probeBwrap(r)
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

// probeBwrap runs a sandbox built like the real ones. One that works but
// cannot be given its network leaves the network off, saying why.
func (m *Manager) probeBwrap(r bashRunner) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, r.bwrap, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("bwrap --version: %w", err)
	}
	version, err := m.probe(ctx, r, string(v))
	var ne *networkError
	if errors.As(err, &ne) {
		m.netWhy = "the network could not be attached: " + ne.err.Error()
		version, err = m.probe(ctx, r, string(v))
	}
	return version, err
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
	switch {
	case m.net == netNone || m.net == netPublic && m.egress.Missing() != "":
		net = "There is no network access."
	case m.net == netPublic:
		net = "The public internet is reachable; this machine, private and link-local addresses are not."
	}
	desc := fmt.Sprintf("Run a bash command %s. The working directory is %s. Returns stdout and stderr together, then [exit code N] if the command failed. Commands are stopped after %s. %s%s Long outputs are cut in the middle; redirect them to a file and use grep or read_file.",
		where, Workspace, seconds(m.timeout), net, m.limitsNote())
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

// limitsNote tells the model the limits a command lives within.
func (m *Manager) limitsNote() string {
	if m.offered == bashHost {
		return ""
	}
	l := m.limits.Limits()
	var parts []string
	if l.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MB of memory", l.MemoryMB))
	}
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("%d processes", l.Processes))
	}
	if l.TmpMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MB in /tmp", l.TmpMB))
	}
	note := ""
	if len(parts) > 0 {
		note = " A command may use at most " + strings.Join(parts, ", ") + "."
	}
	if l.DiskMB > 0 {
		note += fmt.Sprintf(" The conversation's files (uploads, workspace, outputs) may take %d MB in all.", l.DiskMB)
	}
	return note
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
	p, err := m.start(runCtx, m.runner(), t.userData, []string{m.runner().shell, "-c", command}, pw)
	pw.Close() // the child has its copy
	if err != nil {
		return "", startError(ctx, err)
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
	watchCtx, stopWatch := context.WithCancel(runCtx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if p.guard != nil {
			p.guard.Watch(watchCtx, func() { p.kill() })
		}
	}()
	waitErr := p.cmd.Wait()
	stopWatch()
	<-watched
	reason, note := p.release()
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
	if reason != "" && ctx.Err() == nil {
		return "", limitError(reason, text)
	}
	if note != "" {
		text = strings.TrimLeft(text+"\n["+note+"]", "\n")
	}
	return bashResult(ctx, runCtx, m.timeout, text, waitErr)
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

// startError words a command that could not be started for the model.
func startError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the command was stopped because the run was cancelled (%w)", context.Cause(ctx))
	}
	var ne *networkError
	if errors.As(err, &ne) {
		return errors.New("the command could not be started: its network could not be set up")
	}
	return errors.New("the command could not be started")
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
