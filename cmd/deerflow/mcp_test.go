package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/tools"
)

type lookupIn struct {
	Term string `json:"term"`
}

// docsServer is an MCP server over streamable HTTP offering lookup(term);
// it counts requests that carried the expected token.
func docsServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Look a term up in the docs."},
		func(_ context.Context, _ *sdk.CallToolRequest, in lookupIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "definition of " + in.Term}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var authed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer docs-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &authed
}

func TestConsoleMCPTools(t *testing.T) {
	srv, authed := docsServer(t)
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if r.Last().Role == "user" {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "docs_lookup", Arguments: `{"term":"bbolt"}`}}}
		}
		return fakeopenai.Turn{Text: "found: " + r.Last().Content}
	})
	cfg := testConfig(t, model, t.TempDir())
	cfg.MCP.Servers = []config.MCPServer{
		{Name: "docs", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer docs-token"}},
		{Name: "broken", Command: "/nonexistent/mcp-server"},
	}
	s := startChat(t, cfg)
	// The servers connect in the background; wait until the tool is known.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := s.app.tools.Get("docs_lookup"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the MCP server's tool never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.say("what is bbolt?")
	s.screen.waitFor(t, "found: definition of bbolt", 1)
	if !slices.Contains(model.Requests()[0].ToolNames(), "docs_lookup") {
		t.Errorf("offered %v", model.Requests()[0].ToolNames())
	}
	if authed.Load() == 0 {
		t.Error("the configured header never reached the server")
	}
	waitTool(t, s.app.tools, "broken_unavailable")
	for _, name := range s.app.tools.Names() {
		if strings.HasPrefix(name, "broken_") && name != "broken_unavailable" {
			t.Errorf("a server that cannot start has tool %s", name)
		}
	}
	if _, err := callTool(t, s.app.tools, "broken_unavailable", `{}`); err == nil || !strings.Contains(err.Error(), "MCP server broken failed to start") {
		t.Errorf("the model is told: %v", err)
	}
}

func TestCheckListsMCPTools(t *testing.T) {
	srv, _ := docsServer(t)
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, `
mcp:
  servers:
    - name: docs
      url: `+srv.URL+`
      headers: {Authorization: "Bearer docs-token"}
    - name: broken
      command: /nonexistent/mcp-server
    - name: failing
      command: `+failingServer(t, filepath.Join(dir, "home"))+`
`)
	out, errOut, code := deerflow(t, dir, "", []string{"OPENAI_API_KEY=sk-test"}, "check", "--config", cfgPath)
	if code != 0 {
		t.Fatalf("check exited %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"docs: docs_lookup", "broken (sandboxed): unavailable", "failing (sandboxed): unavailable: MCP server failing failed to start", "missing credentials for the index"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}

// envMCPServer makes this test binary an MCP server over stdio (see init).
const envMCPServer = "DEERFLOW_TEST_MCP_SERVER"

func init() {
	if os.Getenv(envMCPServer) != "" {
		os.Exit(serveTestMCP())
	}
}

type pathIn struct {
	Path string `json:"path"`
}

type nameIn struct {
	Name string `json:"name"`
}

// serveTestMCP offers getenv(name), stat(path) and write(path).
func serveTestMCP() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "1"}, nil)
	text := func(msg string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "getenv", Description: "Read an environment variable."},
		func(_ context.Context, _ *sdk.CallToolRequest, in nameIn) (*sdk.CallToolResult, any, error) {
			return text("[" + os.Getenv(in.Name) + "]"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "stat", Description: "Say whether a file is there."},
		func(_ context.Context, _ *sdk.CallToolRequest, in pathIn) (*sdk.CallToolResult, any, error) {
			if _, err := os.Stat(in.Path); err != nil {
				return text("missing"), nil, nil
			}
			return text("exists"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "write", Description: "Write a file."},
		func(_ context.Context, _ *sdk.CallToolRequest, in pathIn) (*sdk.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte("written"), 0o600); err != nil {
				return text("error: " + err.Error()), nil, nil
			}
			return text("written"), nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "probe server:", err)
		return 1
	}
	return 0
}

// installProbe puts this test binary at path (a hard link, or a copy), as
// a program installed outside the system directories.
func installProbe(t *testing.T, path string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(exe, path) == nil {
		return
	}
	b, err := os.ReadFile(exe)
	if err == nil {
		err = os.WriteFile(path, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// failingServer writes a server under home that says why on stderr and
// exits at once; it returns its path.
func failingServer(t *testing.T, home string) string {
	t.Helper()
	p := filepath.Join(home, "tools", "index-server")
	writeExec(t, p, "#!/bin/sh\necho 'index server 1.0' >&2\necho 'missing credentials for the index' >&2\nexit 3\n")
	return p
}

// writeExec writes an executable file, making its directory.
func writeExec(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitTool waits until the registry offers name; if its server is down
// instead, the test fails at once with why.
func waitTool(t *testing.T, reg *tools.Registry, name string) {
	t.Helper()
	server, _, _ := strings.Cut(name, "_")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := reg.Get(name); ok {
			return
		}
		if _, down := reg.Get(server + "_unavailable"); down {
			_, err := callTool(t, reg, server+"_unavailable", `{}`)
			t.Fatalf("%s never appeared: %v", name, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared; tools: %v", name, reg.Names())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func callTool(t *testing.T, reg *tools.Registry, name, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return reg.Call(ctx, name, json.RawMessage(args))
}

func TestSandboxedMCPServers(t *testing.T) {
	needBwrap(t)
	home := filepath.Join(t.TempDir(), "home")
	probe := filepath.Join(home, "bin", "mcp-probe")
	installProbe(t, probe)
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	writeExec(t, secret, "private key")
	key := fmt.Sprintf("key-%d-%d", os.Getpid(), time.Now().UnixNano())
	env := map[string]string{envMCPServer: "1", "GORACE": "atexit_sleep_ms=0", "PROBE_API_KEY": key}
	no := false
	dataDir := t.TempDir()
	cfg := testConfig(t, fakeopenai.New(t), dataDir)
	cfg.MCP.Servers = []config.MCPServer{
		{Name: "probe", Command: "mcp-probe", Env: withEnv(env, "PATH", filepath.Dir(probe))},
		{Name: "hostprobe", Command: probe, Env: env, Sandbox: &no},
		{Name: "broken", Command: failingServer(t, home)},
	}
	s := startChat(t, cfg)
	reg := s.app.tools
	for _, name := range []string{"probe_getenv", "hostprobe_getenv", "broken_unavailable"} {
		waitTool(t, reg, name)
	}

	for _, c := range []struct{ tool, args, want string }{
		{"probe_getenv", `{"name":"PROBE_API_KEY"}`, "[" + key + "]"},
		{"probe_getenv", `{"name":"HOME"}`, "[/mnt/home]"},
		{"probe_stat", `{"path":"` + probe + `"}`, "exists"},
		{"probe_stat", `{"path":"` + secret + `"}`, "missing"},
		{"probe_write", `{"path":"/mnt/home/note"}`, "written"},
		{"probe_write", `{"path":"` + filepath.Join(home, "bin", "x") + `"}`, "read-only file system"},
		// sandbox: false runs it on this machine as is.
		{"hostprobe_getenv", `{"name":"PROBE_API_KEY"}`, "[" + key + "]"},
		{"hostprobe_getenv", `{"name":"HOME"}`, "[" + os.Getenv("HOME") + "]"},
		{"hostprobe_stat", `{"path":"` + secret + `"}`, "exists"},
	} {
		got, err := callTool(t, reg, c.tool, c.args)
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("%s %s = %q, %v; want %q", c.tool, c.args, got, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "mcp", "probe", "home", "note")); err != nil {
		t.Errorf("the server's private home is not <data_dir>/mcp/probe/home: %v", err)
	}
	// While both run, the key is in their environments, on no command line.
	if found := testutil.CmdlinesWith(t, key); len(found) > 0 {
		t.Errorf("the key is on a command line:\n%s", strings.Join(found, "\n"))
	}

	// The server that cannot start: the model and /status say why.
	_, err := callTool(t, reg, "broken_unavailable", `{}`)
	if err == nil || !strings.Contains(err.Error(), "MCP server broken") || !strings.Contains(err.Error(), "missing credentials for the index") {
		t.Errorf("the model is told: %v", err)
	}
	s.say("/status")
	s.screen.waitFor(t, "MCP server broken failed to start", 1)
	s.screen.waitFor(t, "missing credentials for the index", 1)
}

// jsServer is an MCP server in plain node: it needs "dep" from its
// project's node_modules and says where it runs.
const jsServer = `#!/usr/bin/env node
const dep = require('dep');
const rl = require('readline').createInterface({input: process.stdin});
const send = m => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', line => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  const ok = result => send({jsonrpc: '2.0', id: m.id, result});
  switch (m.method) {
  case 'initialize':
    return ok({protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'js', version: '1'}});
  case 'tools/list':
    return ok({tools: [{name: 'where', description: 'Say where it runs.', inputSchema: {type: 'object', properties: {}}}]});
  case 'tools/call':
    return ok({content: [{type: 'text', text: dep.word + ' home=' + process.env.HOME + ' key=' + process.env.JS_KEY + ' path=' + process.env.PATH}]});
  }
  send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no such method'}});
});
`

func TestSandboxedNodeMCPServer(t *testing.T) {
	needBwrap(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if node, err = filepath.EvalSymlinks(node); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	nvmBin := filepath.Join(home, ".nvm", "versions", "node", "v20.1.0", "bin")
	proj := filepath.Join(home, "proj")
	files := map[string]string{
		filepath.Join(proj, "node_modules", "srv", "index.js"):      jsServer,
		filepath.Join(proj, "node_modules", "dep", "index.js"):      "exports.word = 'from-dep';\n",
		filepath.Join(nvmBin, "..", "lib", "node_modules", ".keep"): "",
	}
	for p, content := range files {
		writeExec(t, p, content)
	}
	// An nvm-style node (a link to this machine's), and the project's
	// .bin link to the server script.
	links := [][2]string{{node, filepath.Join(nvmBin, "node")}, {"../srv/index.js", filepath.Join(proj, "node_modules", ".bin", "srv")}}
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(l[1]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(t, fakeopenai.New(t), t.TempDir())
	cfg.MCP.Servers = []config.MCPServer{{
		Name: "js", Command: "srv",
		Env: map[string]string{"PATH": filepath.Join(proj, "node_modules", ".bin") + ":" + nvmBin, "JS_KEY": "k-123456"},
	}}
	s := startChat(t, cfg)
	waitTool(t, s.app.tools, "js_where")
	got, err := callTool(t, s.app.tools, "js_where", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"from-dep home=/mnt/home key=k-123456", "path=" + filepath.Join(proj, "node_modules", ".bin") + ":" + nvmBin + ":"} {
		if !strings.Contains(got, want) {
			t.Errorf("js_where = %q, want it to contain %q", got, want)
		}
	}
}

// withEnv is m plus k=v.
func withEnv(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for kk, vv := range m {
		if kk != k {
			out[kk] = vv
		}
	}
	return out
}
