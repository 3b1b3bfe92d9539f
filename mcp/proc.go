package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// command builds the process of a stdio server: a minimal environment,
// Wrap applied, stderr to the log, its own process group.
func (c *conn) command() (*exec.Cmd, *stderrLog, error) {
	cmd := exec.Command(c.srv.Command, c.srv.Args...)
	cmd.Env = minimalEnv(c.srv.Env)
	if c.m.o.Wrap != nil {
		w, err := c.m.o.Wrap(cmd)
		if err != nil {
			return nil, nil, fmt.Errorf("wrapping the command: %w", err)
		}
		if w == nil {
			return nil, nil, errors.New("wrapping the command gave no command")
		}
		if w.Env == nil {
			w.Env = cmd.Env // never the whole parent environment
		}
		cmd = w
	}
	errlog := &stderrLog{log: c.m.log, server: c.srv.Name}
	if cmd.Stderr == nil {
		cmd.Stderr = errlog
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
	return cmd, errlog, nil
}

// killGroup kills the process and what it started, if it is still there.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if a := cmd.SysProcAttr; a != nil && (a.Setpgid || a.Setsid) && a.Pgid == 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
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
	log    *slog.Logger
	server string

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

// defaultHTTPClient has connect timeouts but no overall one: a streamable
// HTTP session keeps a long-lived event stream open, and calls are bounded
// by their context.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: t}
}

// withHeaders returns c sending h with every request.
func withHeaders(c *http.Client, h map[string]string) *http.Client {
	if len(h) == 0 {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp := *c
	cp.Transport = headerTransport{base: base, headers: h}
	return &cp
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
