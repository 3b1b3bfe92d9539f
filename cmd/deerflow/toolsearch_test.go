package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/tools/toolsearch"
)

// manyToolsServer is an MCP server (streamable HTTP) named docs offering n
// tools tool0 … tool<n-1>, each taking a term.
func manyToolsServer(t *testing.T, n int) *httptest.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	for i := range n {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("Look a term up in docs volume %d.\nMore detail that stays out of tool_search's list.", i)},
			func(_ context.Context, _ *sdk.CallToolRequest, in lookupIn) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("volume %d on %s", i, in.Term)}}}, nil, nil
			})
	}
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// chatWithManyTools starts a chat whose config has threshold as
// mcp.defer_threshold and the 100-tool server, waits for its tools, says
// hello and returns the model's requests.
func chatWithManyTools(t *testing.T, threshold int, handle func(fakeopenai.Request) fakeopenai.Turn) []fakeopenai.Request {
	srv := manyToolsServer(t, 100)
	model := fakeopenai.New(t)
	model.Handle(handle)
	cfg := testConfig(t, model, t.TempDir())
	cfg.MCP.DeferThreshold = threshold
	cfg.MCP.Servers = []config.MCPServer{{Name: "docs", URL: srv.URL}}
	s := startChat(t, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for countPrefix(s.app.tools.Names(), "docs_") < 100 {
		if time.Now().After(deadline) {
			t.Fatal("the MCP server's tools never all appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.say("look bbolt up in volume 42")
	s.screen.waitFor(t, "done:", 1)
	return model.Requests()
}

func countPrefix(names []string, prefix string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

// toolsBytes is the size of a request's tools array as sent.
func toolsBytes(t *testing.T, r fakeopenai.Request) int {
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	return len(body.Tools)
}

func TestToolSearchDefersMCPTools(t *testing.T) {
	reqs := chatWithManyTools(t, 20, func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "user":
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: toolsearch.Name, Arguments: `{"query":"tool42"}`}}}
		case strings.HasPrefix(last.Content, "Loaded "):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "docs_tool42", Arguments: `{"term":"bbolt"}`}}}
		}
		return fakeopenai.Turn{Text: "done: " + last.Content}
	})
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	first := reqs[0]
	if n := countPrefix(first.ToolNames(), "docs_"); n != 0 {
		t.Errorf("the first request offers %d MCP tools: %v", n, first.ToolNames())
	}
	i := slices.IndexFunc(first.Tools, func(tl fakeopenai.Tool) bool { return tl.Name == toolsearch.Name })
	if i < 0 {
		t.Fatalf("tool_search not offered: %v", first.ToolNames())
	}
	if d := first.Tools[i].Description; !strings.Contains(d, "- docs_tool42: Look a term up in docs volume 42.") || strings.Contains(d, "More detail") {
		t.Errorf("tool_search's description:\n%s", d)
	}
	if got := reqs[1].Last().Content; !strings.Contains(got, `"name": "docs_tool42"`) || !strings.Contains(got, `"term"`) {
		t.Errorf("tool_search returned:\n%s", got)
	}
	second := reqs[1]
	j := slices.IndexFunc(second.Tools, func(tl fakeopenai.Tool) bool { return tl.Name == "docs_tool42" })
	if j < 0 || !strings.Contains(string(second.Tools[j].Parameters), `"term"`) {
		t.Fatalf("docs_tool42 not offered with its schema after tool_search: %v", second.ToolNames())
	}
	if n := countPrefix(second.ToolNames(), "docs_"); n != 1 {
		t.Errorf("after loading one tool, %d MCP tools are offered", n)
	}
	if got := reqs[2].Last().Content; got != "volume 42 on bbolt" {
		t.Errorf("docs_tool42 returned %q", got)
	}
	deferred := toolsBytes(t, first)

	all := chatWithManyTools(t, 0, func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "done: ok"} })
	if n := countPrefix(all[0].ToolNames(), "docs_"); n != 100 || slices.Contains(all[0].ToolNames(), toolsearch.Name) {
		t.Errorf("with defer_threshold 0 the first request offers %d MCP tools and %v", n, all[0].ToolNames())
	}
	full := toolsBytes(t, all[0])
	t.Logf("first request's tools: %d bytes (~%d tokens) deferred, %d bytes (~%d tokens) not", deferred, deferred/4, full, full/4)
	if deferred >= full {
		t.Errorf("deferring did not shrink the request: %d ≥ %d bytes", deferred, full)
	}
}
