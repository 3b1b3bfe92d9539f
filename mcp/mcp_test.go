package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/tools"
)

// noLeaks fails the test if goroutines started after it remain at the end.
func noLeaks(t *testing.T) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func call(t *testing.T, reg *tools.Registry, name, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return reg.Call(ctx, name, json.RawMessage(args))
}

func mustCall(t *testing.T, reg *tools.Registry, name, args string) string {
	t.Helper()
	out, err := call(t, reg, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func registered(reg *tools.Registry, name string) func() bool {
	return func() bool { _, ok := reg.Get(name); return ok }
}

func TestStdio(t *testing.T) {
	checkLeaks := noLeaks(t)
	t.Setenv("DEERFLOW_MCP_TEST_SECRET", "leaked")
	log, logs := testLogger(t)
	var mu sync.Mutex
	var wrapped []*exec.Cmd
	srv := stdioServer(t, "test", map[string]string{"FOO": "bar"})
	srv.Sandbox = true
	m := New(Options{
		Servers: []Server{srv},
		Isolate: func(_ Server, cmd *exec.Cmd) (*exec.Cmd, Sandbox, error) {
			mu.Lock()
			defer mu.Unlock()
			wrapped = append(wrapped, cmd)
			return cmd, nil, nil // no sandbox here: run on the host
		},
		CallTimeout: 2 * time.Second,
		Logger:      log,
	})
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "test_echo", registered(reg, "test_echo"))

	want := []string{"test_add", "test_crash", "test_echo", "test_fail", "test_getenv", "test_sleep"}
	if got := strings.Join(reg.Names(), " "); got != strings.Join(want, " ") {
		t.Fatalf("registered %s, want %s", got, want)
	}
	echo, _ := reg.Get("test_echo")
	sp := echo.Spec()
	if sp.Description != "[test] Echo the text." {
		t.Errorf("description %q", sp.Description)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(sp.Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("schema %s (%v)", sp.Parameters, err)
	}

	if got := mustCall(t, reg, "test_echo", `{"text":"hello"}`); got != "hello" {
		t.Errorf("echo: %q", got)
	}
	got := mustCall(t, reg, "test_add", `{"a":2,"b":3}`)
	if got != "a+b\n[image omitted]\n{\"sum\":5}" {
		t.Errorf("add: %q", got)
	}
	if _, err := call(t, reg, "test_fail", `{}`); err == nil || !strings.Contains(err.Error(), "it failed on purpose") {
		t.Errorf("fail: %v", err)
	}
	if _, err := call(t, reg, "test_echo", `[1]`); !tools.IsArgError(err) {
		t.Errorf("array arguments: %v", err)
	}
	if got := mustCall(t, reg, "test_getenv", `{"name":"FOO"}`); got != "[bar]" {
		t.Errorf("FOO: %q", got)
	}
	if got := mustCall(t, reg, "test_getenv", `{"name":"DEERFLOW_MCP_TEST_SECRET"}`); got != "[]" {
		t.Errorf("the parent's environment leaked: %q", got)
	}

	start := time.Now()
	_, err := call(t, reg, "test_sleep", `{"ms":10000}`)
	if err == nil || !strings.Contains(err.Error(), "timed out after 2s") {
		t.Fatalf("sleep: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if got := mustCall(t, reg, "test_echo", `{"text":"still here"}`); got != "still here" {
		t.Errorf("echo after timeout: %q", got)
	}
	mustContain(t, logs.String(), "test server starting")

	mu.Lock()
	if len(wrapped) != 1 {
		t.Fatalf("Isolate called %d times", len(wrapped))
	}
	cmd := wrapped[0]
	mu.Unlock()
	if cmd.Process == nil {
		t.Fatal("no process")
	}
	m.Close()
	if err := syscall.Kill(cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server process is still there after Close: %v", err)
	}
	if reg.Len() != 0 {
		t.Errorf("tools left after Close: %v", reg.Names())
	}
	if _, err := echo.Run(context.Background(), json.RawMessage(`{"text":"x"}`)); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("call after Close: %v", err)
	}
	checkLeaks()
}

func TestCrashRestart(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, _ := testLogger(t)
	state := filepath.Join(t.TempDir(), "state")
	m := New(Options{
		Servers:        []Server{stdioServer(t, "test", map[string]string{envState: state})},
		RestartBackoff: 700 * time.Millisecond,
		Logger:         log,
	})
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "test_echo", registered(reg, "test_echo"))
	if !registered(reg, "test_add")() || registered(reg, "test_extra")() {
		t.Fatalf("tools at first: %v", reg.Names())
	}

	_, err := call(t, reg, "test_crash", `{}`)
	if err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("crash: %v", err)
	}
	// In backoff: fail fast, saying why.
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	_, err = call(t, reg, "test_echo", `{"text":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("echo in backoff: %v", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("failing in backoff took %s", d)
	}

	waitFor(t, 30*time.Second, "a restart", func() bool {
		out, err := call(t, reg, "test_echo", `{"text":"back"}`)
		return err == nil && out == "back"
	})
	// The restarted server offers "extra" instead of "add".
	waitFor(t, 5*time.Second, "the new tool list", func() bool {
		return registered(reg, "test_extra")() && !registered(reg, "test_add")()
	})
	if got := mustCall(t, reg, "test_extra", ``); got != "extra" {
		t.Errorf("extra: %q", got)
	}
	m.Close()
	checkLeaks()
}

func TestMissingCommandAndInventory(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, _ := testLogger(t)
	m := New(Options{
		Servers: []Server{
			{Name: "bad", Command: "/nonexistent/deerflow-mcp-server"},
			stdioServer(t, "test", nil),
		},
		RestartBackoff: 50 * time.Millisecond,
		Logger:         log,
	})
	defer m.Close()

	inv := m.Inventory(context.Background())
	if len(inv) != 2 || inv[0].Server != "bad" || inv[1].Server != "test" {
		t.Fatalf("inventory: %+v", inv)
	}
	if inv[0].Err == nil || !strings.Contains(inv[0].Err.Error(), "MCP server bad failed to start") || len(inv[0].Tools) != 0 {
		t.Errorf("bad: %+v", inv[0])
	}
	if inv[1].Err != nil || strings.Join(inv[1].Tools, " ") != "test_add test_crash test_echo test_fail test_getenv test_sleep" {
		t.Errorf("test: %+v", inv[1])
	}

	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "test_echo", registered(reg, "test_echo"))
	waitFor(t, 30*time.Second, "bad_unavailable", registered(reg, "bad_unavailable"))
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, "bad") && n != "bad_unavailable" {
			t.Errorf("tool %s of the missing server", n)
		}
	}
	if got := mustCall(t, reg, "test_echo", `{"text":"ok"}`); got != "ok" {
		t.Errorf("echo: %q", got)
	}
	m.Close()
	checkLeaks()
}

func TestHTTP(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, logs := testLogger(t)
	var requests, authorized atomic.Int64
	var h atomic.Pointer[sdk.StreamableHTTPHandler]
	var servers []*sdk.Server
	restartServer := func() { // its sessions are forgotten
		srv := newTestServer(false, false)
		servers = append(servers, srv)
		h.Store(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	}
	restartServer()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") == "Bearer s3cret" {
			authorized.Add(1)
		}
		h.Load().ServeHTTP(w, r)
	}))
	m := New(Options{
		Servers:        []Server{{Name: "web tools", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}}},
		CallTimeout:    time.Second,
		RestartBackoff: 10 * time.Millisecond,
		Logger:         log,
	})
	defer ts.Close()
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "web_tools_echo", registered(reg, "web_tools_echo"))
	if registered(reg, "web_tools_crash")() {
		t.Error("the HTTP server offers no crash")
	}
	if got := mustCall(t, reg, "web_tools_echo", `{"text":"over http"}`); got != "over http" {
		t.Errorf("echo: %q", got)
	}
	if got := mustCall(t, reg, "web_tools_add", `{"a":1,"b":1}`); got != "a+b\n[image omitted]\n{\"sum\":2}" {
		t.Errorf("add: %q", got)
	}
	if _, err := call(t, reg, "web_tools_fail", `{}`); err == nil || !strings.Contains(err.Error(), "it failed on purpose") {
		t.Errorf("fail: %v", err)
	}
	if _, err := call(t, reg, "web_tools_sleep", `{"ms":5000}`); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("sleep: %v", err)
	}
	if got := mustCall(t, reg, "web_tools_echo", `{"text":"again"}`); got != "again" {
		t.Errorf("echo after timeout: %q", got)
	}
	// A tool added at run time, announced with a list_changed notification.
	sdk.AddTool(servers[0], &sdk.Tool{Name: "late", Description: "Added later."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
		})
	waitFor(t, 10*time.Second, "web_tools_late", registered(reg, "web_tools_late"))
	if got := mustCall(t, reg, "web_tools_late", `{}`); got != "late" {
		t.Errorf("late: %q", got)
	}
	restartServer()
	if got := mustCall(t, reg, "web_tools_echo", `{"text":"new session"}`); got != "new session" {
		t.Errorf("echo after the session was lost: %q", got)
	}
	if n := strings.Count(logs.String(), "server connected"); n != 2 {
		t.Errorf("connected %d times", n)
	}
	waitFor(t, 10*time.Second, "web_tools_late to go", func() bool { return !registered(reg, "web_tools_late")() })
	if n, a := requests.Load(), authorized.Load(); n == 0 || n != a {
		t.Errorf("%d requests, %d with the header", n, a)
	}
	inv := m.Inventory(context.Background())
	if len(inv) != 1 || inv[0].Err != nil || len(inv[0].Tools) != 5 {
		t.Errorf("inventory: %+v", inv)
	}
	m.Close()
	for _, srv := range servers {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}
	ts.Close()
	checkLeaks()
}

func TestCloseKillsStubbornServer(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, _ := testLogger(t)
	var cmd atomic.Pointer[exec.Cmd]
	srv := stdioServer(t, "test", map[string]string{envStubborn: "1"})
	srv.Sandbox = true
	m := New(Options{
		Servers: []Server{srv},
		Isolate: func(_ Server, c *exec.Cmd) (*exec.Cmd, Sandbox, error) {
			cmd.Store(c)
			return c, nil, nil
		},
		Logger: log,
	})
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := tools.NewRegistry()
	m.Start(ctx, reg)
	waitFor(t, 30*time.Second, "test_echo", registered(reg, "test_echo"))
	pid := cmd.Load().Process.Pid
	cancel() // like Close
	waitFor(t, 10*time.Second, "the process to die", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	m.Close()
	checkLeaks()
}

func TestNames(t *testing.T) {
	if got := toolName(sanitize("my server"), "do.it/now"); got != "my_server_do_it_now" {
		t.Errorf("got %q", got)
	}
	long := toolName("srv", strings.Repeat("x", 100))
	if len(long) != 64 || long == toolName("srv", strings.Repeat("x", 101)) {
		t.Errorf("long names: %q", long)
	}
	if got := string(inputSchema(nil)); got != `{"type":"object","properties":{}}` {
		t.Errorf("nil schema: %s", got)
	}
	if got := string(inputSchema(map[string]any{"$schema": "x", "required": []any{}})); got != `{"properties":{},"required":[],"type":"object"}` {
		t.Errorf("schema: %s", got)
	}
	if got := backoff(time.Second, 1); got != time.Second {
		t.Errorf("backoff 1: %s", got)
	}
	if got := backoff(time.Second, 3); got != 4*time.Second {
		t.Errorf("backoff 3: %s", got)
	}
	if got := backoff(time.Second, 30); got != time.Minute {
		t.Errorf("backoff 30: %s", got)
	}
}

func TestStartErrors(t *testing.T) {
	checkLeaks := noLeaks(t)
	wrapped := stdioServer(t, "wrapped", nil)
	wrapped.Sandbox = true
	m := New(Options{
		Servers: []Server{
			wrapped,
			{Name: "down", URL: "http://127.0.0.1:1/mcp"},
			{Name: "empty"},
		},
		Isolate:      func(Server, *exec.Cmd) (*exec.Cmd, Sandbox, error) { return nil, nil, errors.New("no sandbox") },
		StartTimeout: 5 * time.Second,
	})
	inv := m.Inventory(context.Background())
	for i, want := range []string{
		"MCP server wrapped failed to start: preparing its sandbox: no sandbox",
		"MCP server down could not be reached",
		"MCP server empty has neither a command nor a URL",
	} {
		t.Logf("%s: %v", inv[i].Server, inv[i].Err)
		if inv[i].Err == nil || !strings.Contains(inv[i].Err.Error(), want) {
			t.Errorf("%s: %v, want %q", inv[i].Server, inv[i].Err, want)
		}
		if st := inv[i].State; st.Phase != Failed || st.String() != inv[i].Err.Error() {
			t.Errorf("%s: state %+v", inv[i].Server, st)
		}
	}
	m.Close()
	checkLeaks()
}
