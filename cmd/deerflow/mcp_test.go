package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
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
	for _, name := range s.app.tools.Names() {
		if strings.HasPrefix(name, "broken_") {
			t.Errorf("a server that cannot start has tool %s", name)
		}
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
`)
	out, errOut, code := deerflow(t, dir, "", nil, "check", "--config", cfgPath)
	if code != 0 {
		t.Fatalf("check exited %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, "docs: docs_lookup") || !strings.Contains(out, "broken: unavailable") {
		t.Errorf("check output:\n%s", out)
	}
}
