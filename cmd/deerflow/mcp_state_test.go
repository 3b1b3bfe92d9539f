package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestMCPStateShownEverywhere: with one MCP server up and one that cannot
// start, /healthz lists both with their state, /status names the broken
// one, and the model is told it is down in the turn's context.
func TestMCPStateShownEverywhere(t *testing.T) {
	srv, _ := docsServer(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "hello"} })
	addr := freeAddr(t)
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) {
		c.HTTP.Listen = addr
		c.MCP.Servers = []config.MCPServer{
			{Name: "docs", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer docs-token"}},
			{Name: "broken", Command: "/nonexistent/mcp-server"},
		}
	})
	srv2, err := startOps(run.app, nil) // the harness starts no /healthz
	if err != nil {
		t.Fatal(err)
	}
	defer stopOps(srv2)

	type mcpState struct {
		Name, Transport, Phase, Error string
		Tools                         int
	}
	var states map[string]mcpState
	waitHealth(t, addr, "both MCP servers settled", func(_ int, _ health) bool {
		_, body := fetch("http://" + addr + "/healthz")
		var r struct{ MCP []mcpState }
		if json.Unmarshal([]byte(body), &r) != nil {
			return false
		}
		states = map[string]mcpState{}
		for _, s := range r.MCP {
			states[s.Name] = s
		}
		return states["docs"].Phase == "ready" && states["broken"].Phase == "failed"
	})
	if d, b := states["docs"], states["broken"]; d.Transport != "http" || d.Tools == 0 || b.Transport != "stdio" || b.Error == "" {
		t.Errorf("/healthz shows docs %+v, broken %+v", d, b)
	}

	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "broken")

	tg.PushMessage(faketelegram.Private(ann, "hi"))
	run.waitFinal(tg, ann.ID, "hello")
	var told bool
	for _, m := range model.Requests()[0].Messages {
		if strings.Contains(m.Content, "MCP servers not ready") && strings.Contains(m.Content, "broken is down (call broken_unavailable") {
			told = true
		}
		if strings.Contains(m.Content, "docs is") {
			t.Errorf("a ready server is reported not ready: %q", m.Content)
		}
	}
	if !told {
		t.Errorf("the model was not told that broken is down: %+v", model.Requests()[0].Messages)
	}
}
