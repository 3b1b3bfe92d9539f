package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/sandbox/egress"
	"github.com/deerflow/deerflow/sandbox/limit"
)

// process is a started command.
type process struct {
	cmd   *exec.Cmd
	pid   atomic.Int64 // bubblewrap: the sandbox's pid 1, as seen here
	guard *limit.Guard // nil on the host
	link  *egress.Link // nil without a user-mode network
}

// holdTimeout bounds how long a sandbox may take to report its pid.
const holdTimeout = 10 * time.Second

// start starts argv for the thread whose files are in userData ("" for
// an empty one), in bubblewrap or on the host, writing its output to out.
// In bubblewrap the sandbox is held before argv runs, until its limits
// and network are in place; if they cannot be, nothing runs.
func (m *Manager) start(ctx context.Context, r bashRunner, userData string, argv []string, out *os.File) (*process, error) {
	p := &process{}
	if r.mode != bashBwrap {
		p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		p.cmd.Dir = filepath.Join(userData, "workspace")
		p.cmd.Env = sandboxEnv(p.cmd.Dir, hostPATH())
		return p, p.begin(out)
	}
	var infoR, blockW *os.File
	cmd, err := m.bwrapCmd(ctx, r, append(m.bwrapArgs(r, userData), "--info-fd", "4", "--block-fd", "5"), argv, &infoR, &blockW)
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	defer blockW.Close() // on failure, after the sandbox is killed
	p.cmd = cmd
	err = p.begin(out)
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child has its copies
	}
	if err != nil {
		return nil, err
	}
	if err := m.hold(ctx, p, infoR, userData); err != nil {
		p.kill()
		p.cmd.Wait()
		p.release()
		return nil, err
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		p.kill()
		p.cmd.Wait()
		p.release()
		return nil, err
	}
	return p, nil
}

// bwrapCmd is bubblewrap running argv in the sandbox that args (which
// must hold --info-fd 4 and --block-fd 5) describe. The options go
// through a memfd (fd 3); the command itself, which the sandboxed user
// wrote, stays on the command line, where bubblewrap wants it. infoR and
// blockW get the parent's ends of the info and hold pipes; the child's
// ends are cmd.ExtraFiles, to be closed once it has started. A nil ctx
// is for a program that outlives any request, ended by its owner.
func (m *Manager) bwrapCmd(ctx context.Context, r bashRunner, args, argv []string, infoR, blockW **os.File) (*exec.Cmd, error) {
	af, err := argsFile(args)
	if err != nil {
		return nil, err
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		af.Close()
		return nil, err
	}
	br, bw, err := os.Pipe()
	if err != nil {
		af.Close()
		ir.Close()
		iw.Close()
		return nil, err
	}
	*infoR, *blockW = ir, bw
	argv = append([]string{"--args", "3", "--"}, argv...)
	cmd := exec.Command(r.bwrap, argv...)
	if ctx != nil {
		cmd = exec.CommandContext(ctx, r.bwrap, argv...)
	}
	cmd.Env = sandboxEnv(Workspace, sandboxPATH)
	cmd.ExtraFiles = []*os.File{af, iw, br}
	return cmd, nil
}

// begin starts p.cmd in its own process group.
func (p *process) begin(out *os.File) error {
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = p.kill
	p.cmd.WaitDelay = waitDelay
	return p.cmd.Start()
}

// hold puts the held sandbox under its limits and gives it its network.
func (m *Manager) hold(ctx context.Context, p *process, info *os.File, userData string) error {
	info.SetReadDeadline(time.Now().Add(holdTimeout))
	var v struct {
		ChildPid int64 `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&v); err != nil || v.ChildPid <= 0 {
		return errors.New("the sandbox did not start")
	}
	p.pid.Store(v.ChildPid)
	g, err := m.limits.Start(int(v.ChildPid), userData)
	if err != nil {
		return err
	}
	p.guard = g
	if m.net == netPublic && m.netDown() == "" {
		l, err := m.egress.Attach(ctx, int(v.ChildPid))
		if err != nil {
			return &networkError{err}
		}
		p.link = l
	}
	return nil
}

// networkError is a sandbox that could not be given its network.
type networkError struct{ err error }

func (e *networkError) Error() string { return "network: " + e.err.Error() }
func (e *networkError) Unwrap() error { return e.err }

// release ends the network and limits of a command that has ended, and
// says which limit it reached, if any, or else (note) whether the
// conversation's files were full before it started.
func (p *process) release() (reason, note string) {
	p.link.Close()
	p.link = nil
	if p.guard == nil {
		return "", ""
	}
	note = p.guard.Full()
	reason = p.guard.Close()
	p.guard = nil
	return reason, note
}

// kill ends the command and everything it started. Killing the sandbox's
// pid 1 ends its whole pid namespace, and bubblewrap exits only after that,
// so Wait returns once every process is gone. Without that pid (host mode,
// or bubblewrap still starting) it kills the process group; bubblewrap's
// sandbox then dies with its parent.
func (p *process) kill() error {
	if pid := p.pid.Load(); pid > 0 {
		return syscall.Kill(int(pid), syscall.SIGKILL)
	}
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// limitError words a reached limit for the model.
func limitError(reason, text string) error {
	msg := reason + ": the command was stopped, with every process it started"
	if text != "" {
		msg += ". Output before it was stopped:\n" + text
	}
	return fmt.Errorf("%s", msg)
}
