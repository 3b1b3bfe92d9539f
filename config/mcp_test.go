package config

import "testing"

func TestValidateMCPTypes(t *testing.T) {
	checkErrors(t, `mcp:
  servers:
    - {name: a, type: stdio, url: "http://h/mcp"}
    - {name: b, type: http, command: x}
    - {name: c, type: sse}
    - {name: d, type: websocket, url: "http://h/mcp"}
    - {name: e, command: x, timeout_seconds: -1}
    - {name: f, command: x, auth: oauth}
    - {name: g, url: "http://h/mcp", auth: basic}
    - {name: h, url: "http://h/mcp", oauth: {client_secret: s}}
    - {name: i, type: sse, url: "http://h/sse", oauth: {redirect_url: "nope"}}
    - {name: j, type: sse, url: "http://h/sse", auth: oauth, timeout_seconds: 5}
`, []string{
		`config.yaml:3: mcp.servers[0].type: type stdio needs a command and no url`,
		`config.yaml:4: mcp.servers[1].type: type http needs a url and no command`,
		`config.yaml:5: mcp.servers[2].type: type sse needs a url and no command`,
		`config.yaml:6: mcp.servers[3].type: must be stdio, http or sse, not "websocket"`,
		`config.yaml:7: mcp.servers[4].timeout_seconds: must not be negative, got -1`,
		`config.yaml:8: mcp.servers[5].oauth: OAuth is for http and sse servers; a stdio server takes its keys in env`,
		`config.yaml:9: mcp.servers[6].auth: must be oauth or empty, not "basic"`,
		`config.yaml:10: mcp.servers[7].oauth.client_secret: needs oauth.client_id`,
		`config.yaml:11: mcp.servers[8].oauth.redirect_url: must be an http(s) URL`,
	})
}

func TestMCPTransportInferred(t *testing.T) {
	for _, tt := range []struct {
		s    MCPServer
		want string
	}{
		{MCPServer{Command: "x"}, "stdio"},
		{MCPServer{URL: "http://h"}, "http"},
		{MCPServer{URL: "http://h", Type: "sse"}, "sse"},
	} {
		if got := tt.s.Transport(); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.s, got, tt.want)
		}
	}
	if (MCPServer{URL: "http://h"}).UsesOAuth() || !(MCPServer{Auth: "oauth"}).UsesOAuth() || !(MCPServer{OAuth: MCPOAuth{ClientID: "x"}}).UsesOAuth() {
		t.Error("UsesOAuth")
	}
}
