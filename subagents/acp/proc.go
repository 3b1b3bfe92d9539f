package acp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/sandbox/bwrap"
	"github.com/deerflow/deerflow/tools"
)

// proc is an agent's running program.
type proc struct {
	cmd    *exec.Cmd
	box    Sandbox // nil on the host
	stderr *tail
	stdin  *os.File // our ends of its stdin and stdout
	stdout *os.File
	done   chan struct{} // closed once it has been waited for (and released)
	once   sync.Once
}

// start runs a's program for thread threadID with a minimal environment
// plus a.Env, in its sandbox when Isolate gives one, in its own process
// group, with pipes for stdin and stdout.
func (t *tool) start(ctx context.Context, threadID string, a Agent) (*proc, error) {
	cmd := exec.Command(a.Command, a.Args...)
	cmd.Env = minimalEnv(a.Env)
	p := &proc{cmd: cmd, done: make(chan struct{}), stderr: &tail{secrets: secretValues(a.Env)}}
	if t.o.Isolate != nil {
		ic, box, err := t.o.Isolate(threadID, a, cmd)
		if err != nil {
			return nil, fmt.Errorf("preparing its sandbox: %w", err)
		}
		if ic != nil {
			p.cmd = ic
		}
		p.box = box
	}
	cmd = p.cmd
	cmd.Stderr = p.stderr
	cmd.WaitDelay = 2 * time.Second // in case a grandchild keeps stderr open
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true // so that what it starts dies with it
	if err := p.begin(); err != nil {
		if p.box != nil {
			p.box.Release()
		}
		return nil, err
	}
	if p.box != nil {
		if err := p.box.Ready(ctx); err != nil {
			p.wait()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	go p.wait()
	return p, nil
}

// begin starts the process with pipes of our own for its stdin and
// stdout (see bwrap.StartPiped).
func (p *proc) begin() (err error) {
	p.stdin, p.stdout, err = bwrap.StartPiped(p.cmd)
	return err
}

// wait reaps the process and frees its sandbox.
func (p *proc) wait() {
	_ = p.cmd.Wait()
	if p.box != nil {
		p.box.Release()
	}
	close(p.done)
}

// stop ends the process: its stdin is closed, and if it does not exit
// within grace it is killed with everything it started. It returns once
// the process has been reaped.
func (p *proc) stop(grace time.Duration) {
	p.once.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
		}
		p.kill()
		<-p.done
		if p.box == nil {
			p.kill() // what is left of its process group
		}
		p.stdout.Close()
	})
}

// kill ends the process and everything it started: the whole sandbox, or
// its process group on the host.
func (p *proc) kill() {
	if p.box != nil {
		select {
		case <-p.done: // released; its pid may be reused
		default:
			_ = p.box.Kill()
		}
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// minimalEnv is PATH and HOME from our environment plus extra.
func minimalEnv(extra map[string]string) []string {
	vars := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if vars["PATH"] == "" {
		vars["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	if vars["HOME"] == "" {
		delete(vars, "HOME")
	}
	for k, v := range extra {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// secretValues are the values of env worth hiding in what the program
// prints: long enough to be keys.
func secretValues(env map[string]string) []string {
	var out []string
	for _, v := range env {
		if len(v) >= 6 {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// tail keeps the last lines a program wrote to stderr, with its env
// values hidden, for error messages.
type tail struct {
	secrets []string
	mu      sync.Mutex
	buf     []byte
}

const tailBytes = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*tailBytes {
		t.buf = slices.Clone(t.buf[len(t.buf)-tailBytes:])
	}
	return len(b), nil
}

// String is the last three lines, at most 500 characters.
func (t *tail) String() string {
	t.mu.Lock()
	lines := strings.Split(string(bytes.TrimSpace(t.buf)), "\n")
	t.mu.Unlock()
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, " | ")
	for _, v := range t.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return tools.Clip(s, 500)
}
