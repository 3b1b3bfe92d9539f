// Package mcp offers the tools of Model Context Protocol servers to the
// agent. Each configured server is run as a child process (stdio) or
// reached over Streamable HTTP or SSE; its tools are registered as
// "<server>_<tool>" in a tools.Registry and forwarded to the server when
// the model calls them.
//
// A stdio server runs in a sandbox through Options.Isolate unless it is
// trusted (Server.Sandbox false); this package knows nothing of how the
// sandbox is made and must not import the sandbox package: cmd/deerflow
// wires the two. OAuth logins and their tokens live in mcp/oauth, which
// reaches this package only through Options.Tokens.
//
// A server that is connecting, fails, crashes or hangs never takes the
// agent down: while it has no tools it is offered as "<server>_connecting"
// (which waits for it) or "<server>_unavailable" (whose description and
// answer say why: down, needs a login); its tools fail with an error
// the model reads; States and Health describe it for /status, /healthz
// and deerflow check; and it is restarted in the background with
// exponential backoff.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/tools"
)

// Server is one MCP server to connect to: either Command (stdio) or URL
// (Streamable HTTP or SSE).
type Server struct {
	Name string // used as the tool prefix
	// Transport is config.MCPStdio, MCPHTTP or MCPSSE; empty: stdio with a
	// Command, Streamable HTTP with a URL.
	Transport string
	Command   string            // stdio: the program...
	Args      []string          // ...and its arguments
	Env       map[string]string // added to a minimal environment (PATH, HOME) — never the whole parent environment
	URL       string            // ...or the HTTP endpoint
	Headers   map[string]string // sent with every HTTP request (auth)
	// Sandbox runs a stdio server through Options.Isolate; false runs a
	// trusted one on the host as is.
	Sandbox bool
	// Timeout bounds each tool call and each connection attempt (start,
	// initialize, list tools); 0: Options.CallTimeout and StartTimeout.
	Timeout time.Duration
	// OAuth: the server's requests carry a bearer token from
	// Options.Tokens; without one it needs a login.
	OAuth bool
}

// ServerFrom is the server s of the configuration.
func ServerFrom(s config.MCPServer) Server {
	return Server{
		Name: s.Name, Transport: s.Transport(), Command: s.Command, Args: s.Args, Env: s.Env,
		URL: s.URL, Headers: s.Headers, Sandbox: s.Sandbox == nil || *s.Sandbox,
		Timeout: time.Duration(s.TimeoutSeconds) * time.Second, OAuth: s.UsesOAuth(),
	}
}

// ServersFrom is the servers of the configuration, in order.
func ServersFrom(cs []config.MCPServer) []Server {
	out := make([]Server, len(cs))
	for i, s := range cs {
		out[i] = ServerFrom(s)
	}
	return out
}

// SearchPath is where the server's command is looked up, as on the host:
// its own PATH (from Env), then ours.
func (s Server) SearchPath() string {
	path := os.Getenv("PATH")
	if p := s.Env["PATH"]; p != "" {
		path = p + string(filepath.ListSeparator) + path
	}
	return path
}

// transport is the server's transport, inferred when not set.
func (s Server) transport() string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.URL != "":
		return config.MCPHTTP
	case s.Command != "":
		return config.MCPStdio
	}
	return ""
}

// Sandbox holds a stdio server's process in a sandbox. Its protocol:
// the command Isolate returned is started, Ready is called at once, and
// Release once the process has been waited for (or when it did not
// start).
type Sandbox interface {
	// Ready lets the started program run once its sandbox is complete;
	// on error the program has been killed.
	Ready(ctx context.Context) error
	// Kill ends the program and everything it started.
	Kill() error
	// Release frees what the sandbox held once the program has ended.
	Release()
}

// Options configures a Manager.
type Options struct {
	Servers []Server
	// Isolate prepares the command of a stdio server whose Sandbox is set
	// (deerflow passes bubblewrap). It gets the command with its
	// environment set and nothing else, and returns the command to start
	// and the sandbox holding it; a nil Sandbox means the returned
	// command runs on the host (bubblewrap is missing). The environment
	// must reach the program through the returned command's environment,
	// never its arguments. nil: every server runs on the host.
	Isolate      func(s Server, cmd *exec.Cmd) (*exec.Cmd, Sandbox, error)
	CallTimeout  time.Duration // per tool call of a server without a Timeout; default 60s
	StartTimeout time.Duration // connect + initialize + list tools, likewise; default 60s
	HTTPClient   *http.Client  // for URL servers; nil → a client with sane timeouts
	// Tokens gives the OAuth access tokens of servers with OAuth set (see
	// mcp/oauth); nil: such servers need a login they cannot get.
	Tokens Tokens
	Logger *slog.Logger
	// RestartBackoff is the first delay before reconnecting to a server
	// that failed or crashed; it doubles on each consecutive failure up to
	// a minute. Default 1s.
	RestartBackoff time.Duration
}

const (
	defaultCallTimeout  = 60 * time.Second
	defaultStartTimeout = 60 * time.Second
	defaultBackoff      = time.Second
	maxBackoff          = time.Minute
	maxResult           = 100_000 // bytes of a tool result
	maxNameLen          = 64
)

// ServerTools is what Inventory found on one server: the names of its
// tools as the agent sees them ("<server>_<tool>"), or the error.
type ServerTools struct {
	Server string
	Tools  []string
	Err    error
	State  State // the same as States would say: ready, failed or needs_login
}

// Manager runs the configured MCP servers and keeps their tools in a
// registry. It is safe for concurrent use.
type Manager struct {
	o      Options
	log    *slog.Logger
	http   *http.Client
	ctx    context.Context // cancelled by Close (and by Start's context)
	cancel context.CancelFunc

	mu      sync.Mutex
	started bool
	stop    func() bool // detaches Start's context
	conns   []*conn
	wg      sync.WaitGroup

	testTransport func(Server) sdk.Transport // tests: reach every server through this
}

// New returns a Manager for o; nothing runs until Start or Inventory.
func New(o Options) *Manager {
	if o.CallTimeout <= 0 {
		o.CallTimeout = defaultCallTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = defaultBackoff
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{o: o, log: log.With("component", "mcp"), http: hc, ctx: ctx, cancel: cancel}
}

// Start connects to every server in the background and adds each server's
// tools to reg as "<server>_<tool>" as soon as they are known. It returns
// at once. Cancelling ctx, like Close, stops everything; Close must still
// be called to wait for that.
func (m *Manager) Start(ctx context.Context, reg *tools.Registry) {
	if reg == nil {
		reg = tools.NewRegistry()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.ctx.Err() != nil {
		m.log.Warn("mcp: Start called twice or after Close; ignored")
		return
	}
	m.started = true
	m.stop = context.AfterFunc(ctx, m.cancel)
	for _, s := range m.o.Servers {
		c := newConn(m, s, reg)
		m.conns = append(m.conns, c)
		m.wg.Add(1)
		go c.run()
	}
}

// Close stops every server (killing stdio processes), removes their tools
// from the registry and waits for all of it to finish. It is idempotent.
func (m *Manager) Close() error {
	m.cancel()
	m.mu.Lock()
	if m.stop != nil {
		m.stop()
	}
	m.mu.Unlock()
	m.wg.Wait()
	if m.o.HTTPClient == nil {
		m.http.CloseIdleConnections() // ours
	}
	return nil
}

// Inventory connects to each server once (in parallel), lists its tools
// and disconnects: for `deerflow check`. It does not need Start.
func (m *Manager) Inventory(ctx context.Context) []ServerTools {
	out := make([]ServerTools, len(m.o.Servers))
	var wg sync.WaitGroup
	for i, s := range m.o.Servers {
		out[i].Server = s.Name
		wg.Go(func() {
			c := newConn(m, s, nil)
			d, err := c.dial(ctx)
			if err != nil {
				out[i].Err = err
				c.fail(nil, err)
				out[i].State = c.state()
				return
			}
			for _, t := range d.tools {
				out[i].Tools = append(out[i].Tools, toolName(c.prefix, t.Name))
			}
			d.close()
			out[i].State = State{Name: s.Name, Transport: s.transport(), Phase: Ready, Tools: len(out[i].Tools), Since: time.Now()}
		})
	}
	wg.Wait()
	return out
}

// sanitize replaces every character outside [a-zA-Z0-9_-] with '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// toolName is the registry name of a server's tool: "<server>_<tool>",
// sanitised; names too long are cut and given a hash of the full name so
// that they stay distinct.
func toolName(prefix, tool string) string {
	n := prefix + "_" + sanitize(tool)
	if len(n) <= maxNameLen {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(n))
	return fmt.Sprintf("%s_%08x", n[:maxNameLen-9], h.Sum32())
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// inputSchema turns a tool's input schema as the SDK decoded it into an
// object schema for the model.
func inputSchema(v any) json.RawMessage {
	var obj map[string]any
	switch s := v.(type) {
	case map[string]any:
		obj = s
	case nil:
		return emptySchema
	default:
		b, err := json.Marshal(s)
		if err != nil || json.Unmarshal(b, &obj) != nil {
			return emptySchema
		}
	}
	if obj == nil {
		return emptySchema
	}
	cp := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		cp[k] = v
	}
	delete(cp, "$schema") // some providers reject it
	switch t := cp["type"]; t {
	case nil:
		cp["type"] = "object"
	case "object":
	default:
		return emptySchema
	}
	if _, ok := cp["properties"].(map[string]any); !ok {
		cp["properties"] = map[string]any{}
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return emptySchema
	}
	return b
}

// spec is what the model is told about a server's tool.
func spec(server, name string, t *sdk.Tool) tools.Spec {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return tools.Spec{
		Name:        name,
		Description: strings.TrimSpace("[" + server + "] " + desc),
		Parameters:  inputSchema(t.InputSchema),
	}
}

// backoff is the delay after the n-th consecutive failure (n ≥ 1).
func backoff(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// ServerOf names the configured server a tool (by its registry name,
// "<server>_<tool>") comes from: the longest server prefix that fits, so
// that an agent limited to some servers is offered only their tools. A
// nil Manager (no servers) has no tools.
func (m *Manager) ServerOf(tool string) (string, bool) {
	if m == nil {
		return "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *conn
	for _, c := range m.conns {
		if strings.HasPrefix(tool, c.prefix+"_") && (best == nil || len(c.prefix) > len(best.prefix)) {
			best = c
		}
	}
	if best == nil {
		return "", false
	}
	return best.srv.Name, true
}
