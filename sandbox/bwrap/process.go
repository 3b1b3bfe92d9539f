package bwrap

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/sandbox/egress"
	"github.com/deerflow/deerflow/sandbox/limit"
)

// Process is a started command.
type Process struct {
	Cmd   *exec.Cmd
	Guard *limit.Guard // nil on the host
	pid   atomic.Int64 // bubblewrap: the sandbox's pid 1, as seen here
	link  *egress.Link // nil without a user-mode network
}

// holdTimeout bounds how long a sandbox may take to report its pid.
const holdTimeout = 10 * time.Second

// StartHost starts argv on the host, NOT isolated, in the thread's
// workspace under userData, writing its output to out.
func StartHost(ctx context.Context, userData string, argv []string, out *os.File) (*Process, error) {
	p := &Process{}
	p.Cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.Cmd.Dir = filepath.Join(userData, "workspace")
	p.Cmd.Env = Env(p.Cmd.Dir, HostPATH())
	return p, p.begin(out)
}

// HostPATH is the host's PATH, then the standard directories.
func HostPATH() string {
	if p := os.Getenv("PATH"); p != "" {
		return p + ":" + PATH
	}
	return PATH
}

// Start starts argv in a sandbox for the thread whose files are in
// userData ("" for an empty one), writing its output to out. The sandbox
// is held before argv runs, until its limits and network are in place;
// if they cannot be, nothing runs.
func (j *Jail) Start(ctx context.Context, userData string, argv []string, out *os.File) (*Process, error) {
	p := &Process{}
	var infoR, blockW *os.File
	cmd, err := j.command(ctx, append(j.args(userData), "--info-fd", "4", "--block-fd", "5"), argv, &infoR, &blockW)
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	defer blockW.Close() // on failure, after the sandbox is killed
	p.Cmd = cmd
	err = p.begin(out)
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child has its copies
	}
	if err != nil {
		return nil, err
	}
	if err := j.hold(ctx, p, infoR, userData); err != nil {
		p.Kill()
		p.Cmd.Wait()
		p.Release()
		return nil, err
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		p.Kill()
		p.Cmd.Wait()
		p.Release()
		return nil, err
	}
	return p, nil
}

// command is bubblewrap running argv in the sandbox that args (which
// must hold --info-fd 4 and --block-fd 5) describe. The options go
// through a memfd (fd 3); the command itself, which the sandboxed user
// wrote, stays on the command line, where bubblewrap wants it. infoR and
// blockW get the parent's ends of the info and hold pipes; the child's
// ends are cmd.ExtraFiles, to be closed once it has started. A nil ctx
// is for a program that outlives any request, ended by its owner.
func (j *Jail) command(ctx context.Context, args, argv []string, infoR, blockW **os.File) (*exec.Cmd, error) {
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
	cmd := exec.Command(j.o.Binary, argv...)
	if ctx != nil {
		cmd = exec.CommandContext(ctx, j.o.Binary, argv...)
	}
	cmd.Env = Env(Workspace, PATH)
	cmd.ExtraFiles = []*os.File{af, iw, br}
	return cmd, nil
}

// begin starts p.Cmd in its own process group.
func (p *Process) begin(out *os.File) error {
	p.Cmd.Stdout, p.Cmd.Stderr = out, out
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.Cmd.Cancel = p.Kill
	p.Cmd.WaitDelay = waitDelay
	return p.Cmd.Start()
}

// hold puts the held sandbox under its limits and gives it its network.
func (j *Jail) hold(ctx context.Context, p *Process, info *os.File, userData string) error {
	info.SetReadDeadline(time.Now().Add(holdTimeout))
	var v struct {
		ChildPid int64 `json:"child-pid"`
	}
	if err := json.NewDecoder(info).Decode(&v); err != nil || v.ChildPid <= 0 {
		return errors.New("the sandbox did not start")
	}
	p.pid.Store(v.ChildPid)
	g, err := j.o.Limits.Start(int(v.ChildPid), userData)
	if err != nil {
		return err
	}
	p.Guard = g
	if j.o.Egress != nil {
		l, err := j.o.Egress.Attach(ctx, int(v.ChildPid))
		if err != nil {
			return &NetworkError{Err: err}
		}
		p.link = l
	}
	return nil
}

// NetworkError is a sandbox that could not be given its network.
type NetworkError struct{ Err error }

func (e *NetworkError) Error() string { return "network: " + e.Err.Error() }
func (e *NetworkError) Unwrap() error { return e.Err }

// Release ends the network and limits of a command that has ended, and
// says which limit it reached, if any, or else (note) whether the
// conversation's files were full before it started.
func (p *Process) Release() (reason, note string) {
	p.link.Close()
	p.link = nil
	if p.Guard == nil {
		return "", ""
	}
	note = p.Guard.Full()
	reason = p.Guard.Close()
	p.Guard = nil
	return reason, note
}

// Kill ends the command and everything it started. Killing the sandbox's
// pid 1 ends its whole pid namespace, and bubblewrap exits only after that,
// so Wait returns once every process is gone. Without that pid (host mode,
// or bubblewrap still starting) it kills the process group; bubblewrap's
// sandbox then dies with its parent.
func (p *Process) Kill() error {
	if pid := p.pid.Load(); pid > 0 {
		return syscall.Kill(int(pid), syscall.SIGKILL)
	}
	return syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
}

// StartPiped starts cmd with pipes of our own for its stdin and stdout:
// files, so that Wait never closes the end we read (exec's own pipes are
// closed by Wait). It returns our ends; the child's are closed here.
func StartPiped(cmd *exec.Cmd) (stdin, stdout *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close() // the child has its copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	return inW, outR, nil
}
