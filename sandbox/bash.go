package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/sandbox/truncate"

	"github.com/deerflow/deerflow/sandbox/bwrap"
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
	shell  string      // /bin/bash, or /bin/sh without bash
	jail   *bwrap.Jail // with bashBwrap
}

const captureMax = 256 << 10 // bytes of output kept at each end before truncating

// bashMaxChars is the most characters of a command's output the model
// gets (middle-truncated, as in DeerFlow).
const bashMaxChars = 20_000

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
		r := bashRunner{mode: bashBwrap, shell: shell, jail: m.jail(bw, shell)}
		version, err := m.probeBwrap(&r, bw)
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

// jail is how sandboxes are built here, with bubblewrap binary bw.
func (m *Manager) jail(bw, shell string) *bwrap.Jail {
	o := bwrap.Options{
		Binary: bw, Shell: shell, HostNetwork: m.net == netHost, ResolvConf: m.resolvConf,
		Skills: m.skills, Mounts: m.mounts, Hide: m.hide,
		Empty: filepath.Join(m.dataDir, "empty"), Limits: m.limits,
	}
	if m.net == netPublic && m.netDown() == "" {
		o.Egress = m.egress
	}
	return bwrap.New(o)
}

// probeBwrap runs a sandbox built like the real ones. One that works but
// cannot be given its network leaves the network off, saying why.
func (m *Manager) probeBwrap(r *bashRunner, bw string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, bw, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("bwrap --version: %w", err)
	}
	version, err := r.jail.Probe(ctx, string(v))
	var ne *bwrap.NetworkError
	if errors.As(err, &ne) {
		m.netWhy = "the network could not be attached: " + ne.Err.Error()
		r.jail = r.jail.WithoutNetwork()
		version, err = r.jail.Probe(ctx, string(v))
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
	p, err := m.start(runCtx, t.userData, []string{m.runner().shell, "-c", command}, pw)
	pw.Close() // the child has its copy
	if err != nil {
		return "", startError(ctx, err)
	}
	out := &truncate.Capture{Max: captureMax}
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
		if p.Guard != nil {
			p.Guard.Watch(watchCtx, func() { p.Kill() })
		}
	}()
	waitErr := p.Cmd.Wait()
	stopWatch()
	<-watched
	reason, note := p.Release()
	if m.runner().mode == bashHost {
		// Background children of the shell would keep running and hold
		// the output pipe. (In bubblewrap they died with the namespace.)
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	}
	// Host processes that left the group may keep the pipe open; what they
	// wrote is in the pipe already, so do not wait for them.
	pr.SetReadDeadline(time.Now().Add(bwrap.DrainDeadline))
	<-drained
	head, tail, dropped := out.Parts()
	text := strings.TrimRight(truncate.Middle(head, tail, dropped, bashMaxChars), "\n")
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
	var ne *bwrap.NetworkError
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

// start starts argv for the thread whose files are in userData, in
// bubblewrap or on the host, writing its output to out.
func (m *Manager) start(ctx context.Context, userData string, argv []string, out *os.File) (*bwrap.Process, error) {
	if r := m.runner(); r.mode == bashBwrap {
		return r.jail.Start(ctx, userData, argv, out)
	}
	return bwrap.StartHost(ctx, userData, argv, out)
}

// limitError words a reached limit for the model.
func limitError(reason, text string) error {
	msg := reason + ": the command was stopped, with every process it started"
	if text != "" {
		msg += ". Output before it was stopped:\n" + text
	}
	return fmt.Errorf("%s", msg)
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
