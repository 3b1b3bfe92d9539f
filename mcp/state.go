package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// Phase is where a server is in its life.
type Phase string

const (
	Connecting Phase = "connecting"  // starting, initializing, listing tools
	Ready      Phase = "ready"       // its tools are registered
	Failed     Phase = "failed"      // down; retried with backoff
	NeedsLogin Phase = "needs_login" // an OAuth server without a usable token
	Stopped    Phase = "stopped"     // the manager closed
)

// State is one server's state, for /status, /healthz and deerflow check.
type State struct {
	Name      string    `json:"name"`
	Transport string    `json:"transport"` // stdio, http or sse
	Phase     Phase     `json:"phase"`
	Tools     int       `json:"tools"`           // registered, when Ready
	Err       string    `json:"error,omitempty"` // why, when Failed or NeedsLogin (with a stdio server's stderr tail)
	Since     time.Time `json:"since"`           // in this phase
}

// String is the state in one line.
func (s State) String() string {
	switch s.Phase {
	case Ready:
		return fmt.Sprintf("MCP server %s (%s) is ready with %d tools", s.Name, s.Transport, s.Tools)
	case Connecting:
		return fmt.Sprintf("MCP server %s is still connecting (its tools appear when ready)", s.Name)
	case Stopped:
		return fmt.Sprintf("MCP server %s has been stopped", s.Name)
	}
	if strings.HasPrefix(s.Err, "MCP server "+s.Name+" ") {
		return s.Err
	}
	return "MCP server " + s.Name + " is down: " + s.Err
}

// States is the state of each server, in configuration order; empty
// before Start and for a nil Manager (no servers).
func (m *Manager) States() []State {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	conns := m.conns
	m.mu.Unlock()
	out := make([]State, len(conns))
	for i, c := range conns {
		out[i] = c.state()
	}
	return out
}

// Health describes each server that is not ready, one line each (for
// /status): still connecting, or why it failed, with the last lines of
// its stderr, or that it needs a login.
func (m *Manager) Health() []string {
	var out []string
	for _, s := range m.States() {
		if s.Phase != Ready && s.Phase != Stopped {
			out = append(out, s.String())
		}
	}
	return out
}

// Note tells the model which servers are not ready, for a turn's
// context; "" when all are. It holds names and phases only, never a
// server's own words (its errors are tool results, read as data).
func (m *Manager) Note() string {
	var parts []string
	for _, s := range m.States() {
		switch s.Phase {
		case Connecting:
			parts = append(parts, s.Name+" is still connecting (its tools appear when ready)")
		case NeedsLogin:
			parts = append(parts, s.Name+" needs an operator login (`deerflow mcp login "+s.Name+"`)")
		case Failed:
			parts = append(parts, s.Name+" is down (call "+toolName(sanitize(s.Name), "unavailable")+" to learn why)")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "MCP servers not ready, so their tools are missing for now: " + strings.Join(parts, "; ") + "."
}

func (c *conn) state() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := State{Name: c.srv.Name, Transport: c.srv.transport(), Phase: c.phase, Since: c.phaseAt}
	switch c.phase {
	case Ready:
		s.Tools = c.ntools
	case Failed, NeedsLogin:
		if c.lastErr != nil {
			s.Err = c.lastErr.Error()
		}
	}
	return s
}

func (c *conn) setPhaseLocked(p Phase) {
	if c.phase != p {
		c.phase, c.phaseAt = p, time.Now()
	}
}

// connecting marks a dial that is not a retry after failures: those keep
// showing why the server is down while they run.
func (c *conn) connecting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failures == 0 && c.cur == nil && !c.stopped {
		c.setPhaseLocked(Connecting)
		c.broadcastLocked()
	}
}

// standIn stands for the tools of a server that has none registered yet:
// the model sees the server is there, whether it is still connecting
// ("<server>_connecting") or is down or needs a login
// ("<server>_unavailable"), and calling it says more.
type standIn struct {
	c          *conn
	connecting bool
}

func (t *standIn) name() string {
	if t.connecting {
		return toolName(t.c.prefix, "connecting")
	}
	return toolName(t.c.prefix, "unavailable")
}

// Spec follows the server's state, so the model is told each step.
func (t *standIn) Spec() tools.Spec {
	n := t.c.srv.Name
	var desc string
	switch t.c.state().Phase {
	case Connecting, Ready:
		desc = fmt.Sprintf("[%s] MCP server %s is still connecting (its tools appear when ready). "+
			"Call this to wait for it, or carry on without it.", n, n)
	case NeedsLogin:
		desc = fmt.Sprintf("[%s] MCP server %s needs an operator login (`deerflow mcp login %s`), so its tools are missing. "+
			"Call this to learn more before telling the user.", n, n, n)
	default:
		desc = fmt.Sprintf("[%s] MCP server %s is down, so its tools are missing. "+
			"Call this to learn why before telling the user.", n, n)
	}
	return tools.Spec{Name: t.name(), Description: desc, Parameters: emptySchema}
}

// Run waits while the server is connecting (within its timeout), then
// says its tools are there, or fails with why it is not.
func (t *standIn) Run(ctx context.Context, _ json.RawMessage) (string, error) {
	if _, err := t.c.session(ctx); err != nil {
		if s := t.c.state(); s.Phase == NeedsLogin || errors.Is(err, ErrNeedsLogin) {
			return "", fmt.Errorf("tool unavailable: %s; an operator must log in before its tools can be used", s.Err)
		}
		return "", err
	}
	return fmt.Sprintf("MCP server %s is running now; its tools are offered from the next step.", t.c.srv.Name), nil
}
