package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/tools"
)

// conn keeps one server connected: its run loop dials, registers the
// tools, watches the session and redials with backoff when it goes away.
type conn struct {
	m       *Manager
	srv     Server
	prefix  string
	reg     *tools.Registry
	refresh chan struct{} // the server said its tool list changed
	kick    chan struct{} // a call found the session dead

	mu       sync.Mutex
	cur      *dialed // nil while not connected
	last     *dialed // the connection that went down last
	since    time.Time
	lastErr  error
	failures int       // consecutive
	retryAt  time.Time // no dialing before (while failures > 0)
	stopped  bool
	phase    Phase         // what States says
	phaseAt  time.Time     // since when
	ntools   int           // registered
	changed  chan struct{} // closed and replaced on every change of the above

	tools map[string]*remoteTool // registered; touched by the run loop only
	down  *standIn               // registered while the server has no tools
}

// dialed is one connection to a server.
type dialed struct {
	sess    *sdk.ClientSession
	tools   []*sdk.Tool
	proc    *proc       // stdio only
	refused atomic.Bool // HTTP: the server answered 401
	once    sync.Once
}

// close ends the session and the process with all it started; the
// process has been reaped when it returns.
func (d *dialed) close() {
	d.once.Do(func() {
		if d.sess != nil {
			_ = d.sess.Close()
		}
		if d.proc != nil {
			d.proc.stop(time.Second)
		}
	})
}

// exitState is how a stdio server's process ended, once it has.
func (d *dialed) exitState() *os.ProcessState {
	if d.proc == nil {
		return nil
	}
	return d.proc.state()
}

func newConn(m *Manager, s Server, reg *tools.Registry) *conn {
	prefix := sanitize(s.Name)
	if prefix == "" {
		prefix = "mcp"
	}
	return &conn{
		m:       m,
		srv:     s,
		prefix:  prefix,
		reg:     reg,
		refresh: make(chan struct{}, 1),
		kick:    make(chan struct{}, 1),
		changed: make(chan struct{}),
		tools:   map[string]*remoteTool{},
		phase:   Connecting,
		phaseAt: time.Now(),
	}
}

// timeout bounds a tool call (call) or a connection attempt of the
// server.
func (c *conn) timeout(call bool) time.Duration {
	switch {
	case c.srv.Timeout > 0:
		return c.srv.Timeout
	case call:
		return c.m.o.CallTimeout
	}
	return c.m.o.StartTimeout
}

func (c *conn) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// dial starts or reaches the server, initializes the session and lists
// the tools, all within the server's timeout.
func (c *conn) dial(ctx context.Context) (*dialed, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout(false))
	defer cancel()
	d := &dialed{}
	t, err := c.transport(ctx, d)
	if err != nil {
		d.close()
		return nil, c.startErr(ctx, d, err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "deerflow", Version: "1"}, &sdk.ClientOptions{
		Logger: c.m.log,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case c.refresh <- struct{}{}:
			default:
			}
		},
	})
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		d.close()
		if st := d.exitState(); st != nil && st.Exited() && st.ExitCode() != 0 {
			err = fmt.Errorf("its process exited at once (%s)", st)
		}
		return nil, c.startErr(ctx, d, err)
	}
	d.sess = sess
	if d.tools, err = listTools(ctx, sess); err != nil {
		d.close()
		return nil, c.startErr(ctx, d, err)
	}
	return d, nil
}

func (c *conn) startErr(ctx context.Context, d *dialed, err error) error {
	if errors.Is(err, errNoTransport) {
		return fmt.Errorf("MCP server %s %w", c.srv.Name, err)
	}
	what := "failed to start"
	if c.srv.transport() != config.MCPStdio {
		what = "could not be reached"
		if d.refused.Load() || errors.Is(err, ErrNeedsLogin) {
			return c.loginErr(err)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", c.timeout(false))
	}
	if d.proc != nil {
		if tail := d.proc.stderr.tail(); tail != "" {
			return fmt.Errorf("MCP server %s %s: %v (stderr: %s)", c.srv.Name, what, err, tail)
		}
	}
	return fmt.Errorf("MCP server %s %s: %w", c.srv.Name, what, err)
}

func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	if ir := sess.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Tools == nil {
		return nil, nil // the server offers no tools
	}
	var out []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for range 100 { // pages
		res, err := sess.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	return out, nil
}

// run keeps the server connected until the manager stops.
func (c *conn) run() {
	defer c.m.wg.Done()
	defer c.shutdown()
	ctx := c.m.ctx
	c.showDown() // "still connecting" until the first tools are known
	for c.sleepUntilRetry(ctx) {
		c.connecting()
		d, err := c.dial(ctx)
		if ctx.Err() != nil {
			if d != nil {
				d.close()
			}
			return
		}
		if err != nil {
			c.fail(nil, err)
			c.showDown()
			c.m.log.Warn("mcp: server unavailable", "server", c.srv.Name, "err", err, "retry_in", c.retryIn())
			continue
		}
		c.up(d)
		c.watch(ctx, d)
	}
}

// sleepUntilRetry waits out the backoff; false when the manager stopped.
func (c *conn) sleepUntilRetry(ctx context.Context) bool {
	if wait := c.retryIn(); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}

func (c *conn) retryIn() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failures == 0 {
		return 0
	}
	return time.Until(c.retryAt)
}

func (c *conn) up(d *dialed) {
	c.mu.Lock()
	c.cur, c.since = d, time.Now()
	c.setPhaseLocked(Ready)
	c.broadcastLocked()
	c.mu.Unlock()
	c.m.log.Info("mcp: server connected", "server", c.srv.Name, "tools", len(d.tools))
	c.register(d.tools)
}

// watch returns when d went down (crash, a call found it dead) or the
// manager stopped; d is closed by then.
func (c *conn) watch(ctx context.Context, d *dialed) {
	waited := make(chan error, 1)
	go func() { waited <- d.sess.Wait() }()
	defer func() {
		d.close()
		<-waited
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-waited:
			waited <- err // for the deferred receive
			d.close()     // reaps the process: its exit status is known after
			if errors.Is(err, sdk.ErrSessionMissing) && c.expired(d, err) {
				return // the HTTP server forgot the session: reconnect at once
			}
			err = c.exitErr(d, err)
			c.fail(d, err)
			c.explain(d, err) // if a call noticed first
			c.m.log.Warn("mcp: server went away", "server", c.srv.Name, "err", err, "retry_in", c.retryIn())
			return
		case <-c.kick:
			if !c.isCurrent(d) {
				// A call found it dead: say why, once the process is reaped.
				d.close()
				if d.exitState() != nil {
					c.explain(d, c.exitErr(d, nil))
				}
				return
			}
		case <-c.refresh:
			lctx, cancel := context.WithTimeout(ctx, c.timeout(false))
			ts, err := listTools(lctx, d.sess)
			cancel()
			if err != nil {
				c.m.log.Warn("mcp: relisting tools", "server", c.srv.Name, "err", err)
				continue
			}
			c.register(ts)
		}
	}
}

func (c *conn) exitErr(d *dialed, err error) error {
	msg := "the connection closed"
	if st := d.exitState(); st != nil {
		msg = "the server process exited (" + st.String() + ")"
	} else if err != nil {
		msg = "the connection closed: " + err.Error()
	}
	if d.proc != nil {
		if tail := d.proc.stderr.tail(); tail != "" {
			msg += "; stderr: " + tail
		}
	}
	return errors.New(msg)
}

func (c *conn) isCurrent(d *dialed) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur == d
}

// fail records a failure: of dialing (d nil) or of the connection d. The
// next dial waits for the backoff.
func (c *conn) fail(d *dialed, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d != nil {
		if c.cur != d {
			return // already noticed
		}
		c.cur, c.last = nil, d
		if time.Since(c.since) > maxBackoff {
			c.failures = 0 // it had been stable: start the backoff afresh
		}
	}
	c.failures++
	c.lastErr = err
	c.retryAt = time.Now().Add(backoff(c.m.o.RestartBackoff, c.failures))
	if errors.Is(err, ErrNeedsLogin) {
		c.setPhaseLocked(NeedsLogin)
	} else {
		c.setPhaseLocked(Failed)
	}
	c.broadcastLocked()
}

// explain replaces the last error with a better account of why d, the
// last connection, went down.
func (c *conn) explain(d *dialed, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == d && c.cur == nil {
		c.lastErr = err
	}
}

// register brings the registry in line with the server's tools.
func (c *conn) register(ts []*sdk.Tool) {
	c.hideDown()
	next := make(map[string]*remoteTool, len(ts))
	for _, t := range ts {
		name := toolName(c.prefix, t.Name)
		if _, dup := next[name]; dup {
			c.m.log.Warn("mcp: duplicate tool name; skipped", "server", c.srv.Name, "tool", t.Name, "name", name)
			continue
		}
		if old, ok := c.reg.Get(name); ok && !c.owns(old) {
			c.m.log.Warn("mcp: tool name taken by another tool; skipped", "server", c.srv.Name, "tool", t.Name, "name", name)
			continue
		}
		next[name] = &remoteTool{c: c, remote: t.Name, spec: spec(c.srv.Name, name, t)}
	}
	for name := range c.tools {
		if _, ok := next[name]; !ok {
			c.unregister(name)
		}
	}
	for _, t := range next {
		c.reg.Add(t)
	}
	c.tools = next
	c.mu.Lock()
	c.ntools = len(next)
	c.mu.Unlock()
}

func (c *conn) owns(t tools.Tool) bool {
	switch t := t.(type) {
	case *remoteTool:
		return t.c == c
	case *standIn:
		return t.c == c
	}
	return false
}

// showDown registers the stand-in of a server that has no tools
// registered, so that the model sees it is missing and can learn why:
// "<server>_connecting" while it connects, "<server>_unavailable" once
// it failed.
func (c *conn) showDown() {
	connecting := c.state().Phase == Connecting
	if len(c.tools) > 0 || c.down != nil && c.down.connecting == connecting {
		return
	}
	c.hideDown()
	t := &standIn{c: c, connecting: connecting}
	if old, ok := c.reg.Get(t.name()); ok && !c.owns(old) {
		return
	}
	c.down = t
	c.reg.Add(t)
}

func (c *conn) hideDown() {
	if c.down != nil {
		c.unregister(c.down.name())
		c.down = nil
	}
}

func (c *conn) unregister(name string) {
	if t, ok := c.reg.Get(name); ok && c.owns(t) {
		c.reg.Remove(name)
	}
}

// shutdown marks the server stopped and removes its tools.
func (c *conn) shutdown() {
	c.mu.Lock()
	c.stopped, c.cur = true, nil
	c.setPhaseLocked(Stopped)
	c.broadcastLocked()
	c.mu.Unlock()
	for name := range c.tools {
		c.unregister(name)
	}
	c.tools = nil
	c.hideDown()
}
