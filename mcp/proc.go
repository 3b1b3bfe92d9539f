package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/sandbox/bwrap"
	"github.com/deerflow/deerflow/tools"
)

// proc is a stdio server's running process.
type proc struct {
	cmd    *exec.Cmd
	box    Sandbox // nil on the host
	stderr *stderrLog
	stdin  *os.File // our ends of its stdin and stdout
	stdout *os.File
	done   chan struct{} // closed once it has been waited for (and released)
	once   sync.Once
}

// start runs the server's program: a minimal environment, in its sandbox
// unless the server is trusted, stderr to the log, its own process group.
// On error after the process was made, the returned proc holds its stderr.
func (c *conn) start(ctx context.Context) (*proc, error) {
	cmd := exec.Command(c.srv.Command, c.srv.Args...)
	cmd.Env = minimalEnv(c.srv.Env)
	p := &proc{cmd: cmd, done: make(chan struct{})}
	if c.srv.Sandbox && c.m.o.Isolate != nil {
		ic, box, err := c.m.o.Isolate(c.srv, cmd)
		if err != nil {
			return nil, fmt.Errorf("preparing its sandbox: %w", err)
		}
		if ic != nil {
			p.cmd = ic
		}
		p.box = box
	}
	cmd = p.cmd
	p.stderr = &stderrLog{log: c.m.log, server: c.srv.Name, secrets: secretValues(c.srv.Env)}
	if cmd.Stderr == nil {
		cmd.Stderr = p.stderr
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second // in case a grandchild keeps stderr open
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid && cmd.SysProcAttr.Pgid == 0 {
		cmd.SysProcAttr.Setpgid = true // so that helpers it spawns die with it
	}
	if err := p.begin(); err != nil {
		if p.box != nil {
			p.box.Release()
		}
		return nil, err
	}
	if p.box != nil {
		if err := p.box.Ready(ctx); err != nil {
			p.wait()
			return p, fmt.Errorf("sandbox: %w", err)
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

// wait reaps the process, frees its sandbox and marks it done.
func (p *proc) wait() {
	_ = p.cmd.Wait()
	if p.box != nil {
		p.box.Release()
	}
	p.stderr.flush()
	close(p.done)
}

// stop ends the process: its stdin is closed, and if it does not exit
// within grace it is terminated, then killed with all it started. It
// returns once the process has been reaped.
func (p *proc) stop(grace time.Duration) {
	p.once.Do(func() {
		p.stdin.Close()
		if !p.exited(grace) {
			if p.box == nil {
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
			}
			if p.box != nil || !p.exited(grace) {
				p.kill()
			}
		}
		<-p.done
		if p.box == nil {
			p.kill() // what is left of its process group
		}
		p.stdout.Close()
	})
}

func (p *proc) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// kill ends the process and everything it started: the whole sandbox, or
// its process group on the host.
func (p *proc) kill() {
	if p.box != nil {
		_ = p.box.Kill()
		return
	}
	if a := p.cmd.SysProcAttr; a != nil && (a.Setpgid || a.Setsid) && a.Pgid == 0 {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// state is how the process ended, once it has.
func (p *proc) state() *os.ProcessState {
	select {
	case <-p.done:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// pipe is the process's stdin and stdout as the SDK's transport wants
// them: closing it stops the process.
type pipe struct{ p *proc }

func (w pipe) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w pipe) Close() error                { w.p.stop(time.Second); return nil }

// transport connects to the started process.
func (p *proc) transport() sdk.Transport {
	return &sdk.IOTransport{Reader: io.NopCloser(p.stdout), Writer: pipe{p}}
}

// secretValues are the values of env worth hiding in what a server
// prints: long enough to be keys, and not paths.
func secretValues(env map[string]string) []string {
	var out []string
	for k, v := range env {
		k = strings.ToUpper(k)
		if len(v) < 6 || k == "PATH" || k == "HOME" || strings.HasSuffix(k, "_PATH") || strings.HasSuffix(k, "_DIR") || strings.HasSuffix(k, "_HOME") {
			continue
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) }) // a key inside another goes after it
	return out
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

const (
	maxStderrLines = 1000 // logged per process
	maxLineLen     = 1000
	tailLines      = 3
)

// stderrLog logs a server's stderr line by line at debug level, within
// bounds, and keeps the last lines for error messages.
type stderrLog struct {
	log     *slog.Logger
	server  string
	secrets []string // replaced by "[redacted]"

	mu      sync.Mutex
	partial []byte
	lines   int
	last    []string
}

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLineLen - len(s.partial); room > 0 {
			s.partial = append(s.partial, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		s.lineLocked()
		p = p[i+1:]
	}
	return n, nil
}

func (s *stderrLog) lineLocked() {
	line := strings.TrimSpace(string(s.partial))
	s.partial = s.partial[:0]
	for _, v := range s.secrets {
		line = strings.ReplaceAll(line, v, "[redacted]")
	}
	if line == "" {
		return
	}
	s.last = append(s.last, line)
	if len(s.last) > tailLines {
		s.last = s.last[1:]
	}
	s.lines++
	switch {
	case s.lines <= maxStderrLines:
		s.log.Debug("mcp: server stderr", "server", s.server, "line", line)
	case s.lines == maxStderrLines+1:
		s.log.Debug("mcp: server stderr: further lines not logged", "server", s.server)
	}
}

// flush logs a last line that had no newline.
func (s *stderrLog) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.lineLocked()
	}
}

// tail is the last few lines written, for error messages.
func (s *stderrLog) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return tools.Clip(strings.Join(s.last, " | "), 500)
}
