package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/tools"
)

func TestSSE(t *testing.T) {
	checkLeaks := noLeaks(t)
	log, logs := testLogger(t)
	srv := newTestServer(false, false)
	var requests, authorized atomic.Int64
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-Key") == "k1" {
			authorized.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	s := ServerFrom(config.MCPServer{Name: "legacy", Type: "sse", URL: ts.URL, Headers: map[string]string{"X-Key": "k1"}, TimeoutSeconds: 1})
	if s.Transport != "sse" || s.Timeout != time.Second || !s.Sandbox {
		t.Fatalf("ServerFrom: %+v", s)
	}
	m := New(Options{Servers: []Server{s}, RestartBackoff: 10 * time.Millisecond, Logger: log})
	defer m.Close()
	reg := tools.NewRegistry()
	m.Start(context.Background(), reg)
	waitFor(t, 30*time.Second, "legacy_echo", registered(reg, "legacy_echo"))
	if got := mustCall(t, reg, "legacy_echo", `{"text":"over sse"}`); got != "over sse" {
		t.Errorf("echo: %q", got)
	}
	if got := mustCall(t, reg, "legacy_add", `{"a":2,"b":2}`); !strings.Contains(got, `{"sum":4}`) {
		t.Errorf("add: %q", got)
	}
	if _, err := call(t, reg, "legacy_sleep", `{"ms":5000}`); err == nil || !strings.Contains(err.Error(), "timed out after 1s without an answer from MCP server legacy") {
		t.Errorf("sleep: %v", err)
	}
	if st := m.States(); len(st) != 1 || st[0].Transport != "sse" || st[0].Phase != Ready || st[0].Tools != 5 {
		t.Errorf("states: %+v", st)
	}
	// The server drops the session: the client reconnects.
	for ss := range srv.Sessions() {
		ss.Close()
	}
	waitFor(t, 30*time.Second, "a reconnection", func() bool {
		out, err := call(t, reg, "legacy_echo", `{"text":"again"}`)
		return err == nil && out == "again"
	})
	if n := strings.Count(logs.String(), "server connected"); n < 2 {
		t.Errorf("connected %d times", n)
	}
	if n, a := requests.Load(), authorized.Load(); n == 0 || n != a {
		t.Errorf("%d requests, %d with the header", n, a)
	}
	m.Close()
	for ss := range srv.Sessions() {
		ss.Close()
	}
	ts.Close()
	checkLeaks()
}
