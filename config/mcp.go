package config

// MCP configures Model Context Protocol servers.
type MCP struct {
	Servers []MCPServer `yaml:"servers"`
	// DeferThreshold: above this many MCP tools, their schemas are not
	// sent to the model; tool_search loads them on demand. 0 never defers.
	DeferThreshold int `yaml:"defer_threshold"`
}

// The transports of an MCP server (MCPServer.Type).
const (
	MCPStdio = "stdio" // a child process speaking over stdin/stdout
	MCPHTTP  = "http"  // Streamable HTTP
	MCPSSE   = "sse"   // the older HTTP+SSE transport
)

// MCPServer is one MCP server: stdio (Command) or remote (URL), over
// Streamable HTTP or SSE.
type MCPServer struct {
	Name string `yaml:"name"`
	// Type is stdio, http or sse; empty: stdio with a command, http with
	// a url.
	Type    string            `yaml:"type"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Sandbox runs a stdio server inside the sandbox (nil: true); false
	// runs a trusted server on the host.
	Sandbox *bool `yaml:"sandbox"`
	// TimeoutSeconds bounds each tool call and each connection attempt
	// (start, initialize, list tools); 0 means 60.
	TimeoutSeconds int `yaml:"timeout_seconds"`
	// Auth "oauth" says a remote server needs an OAuth login (`deerflow
	// mcp login NAME`) even when OAuth has no keys set.
	Auth  string   `yaml:"auth"`
	OAuth MCPOAuth `yaml:"oauth"`
}

// MCPOAuth is how deerflow logs in to a remote MCP server with OAuth 2.1.
// Every key is optional: without a client_id the client registers itself
// (dynamic client registration).
type MCPOAuth struct {
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"`
	Scopes       []string `yaml:"scopes"` // empty: what the server asks for
	// RedirectURL is where the browser is sent back after the login;
	// empty: http://127.0.0.1:<a free port>/callback, served by `deerflow
	// mcp login` itself.
	RedirectURL string `yaml:"redirect_url"`
}

// Transport is the server's type, inferred when not written.
func (s MCPServer) Transport() string {
	switch {
	case s.Type != "":
		return s.Type
	case s.URL != "":
		return MCPHTTP
	}
	return MCPStdio
}

// UsesOAuth says whether the server is configured for an OAuth login.
func (s MCPServer) UsesOAuth() bool {
	o := s.OAuth
	return s.Auth == "oauth" || o.ClientID != "" || o.ClientSecret != "" || len(o.Scopes) > 0 || o.RedirectURL != ""
}

func (v *validator) mcp() {
	v.nonNegative("mcp.defer_threshold", v.c.MCP.DeferThreshold)
	seen := map[string]bool{}
	for i, s := range v.c.MCP.Servers {
		k := index("mcp.servers", i)
		switch {
		case s.Name == "":
			v.fail(k+".name", "required")
		case seen[s.Name]:
			v.fail(k+".name", "duplicate server name %q", s.Name)
		case !isName(s.Name, 32, false):
			v.fail(k+".name", "must be letters, digits, - or _ (it prefixes the server's tool names)")
		}
		seen[s.Name] = true
		v.mcpTransport(k, s)
		v.nonNegative(k+".timeout_seconds", s.TimeoutSeconds)
		v.mcpAuth(k, s)
	}
}

// mcpTransport checks that type, command and url agree.
func (v *validator) mcpTransport(k string, s MCPServer) {
	switch s.Type {
	case "":
		if (s.Command == "") == (s.URL == "") {
			v.fail(k, "needs exactly one of command (stdio) or url (HTTP)")
			return
		}
	case MCPStdio:
		if s.Command == "" || s.URL != "" {
			v.fail(k+".type", "type stdio needs a command and no url")
			return
		}
	case MCPHTTP, MCPSSE:
		if s.URL == "" || s.Command != "" {
			v.fail(k+".type", "type %s needs a url and no command", s.Type)
			return
		}
	default:
		v.fail(k+".type", "must be stdio, http or sse, not %q", s.Type)
		return
	}
	if s.URL != "" {
		v.httpURL(k+".url", s.URL)
	}
}

// mcpAuth checks the OAuth keys of a remote server.
func (v *validator) mcpAuth(k string, s MCPServer) {
	switch {
	case s.Auth != "" && s.Auth != "oauth":
		v.fail(k+".auth", "must be oauth or empty, not %q", s.Auth)
	case s.UsesOAuth() && s.Transport() == MCPStdio:
		v.fail(k+".oauth", "OAuth is for http and sse servers; a stdio server takes its keys in env")
	case s.OAuth.ClientSecret != "" && s.OAuth.ClientID == "":
		v.fail(k+".oauth.client_secret", "needs oauth.client_id")
	case s.OAuth.RedirectURL != "":
		v.httpURL(k+".oauth.redirect_url", s.OAuth.RedirectURL)
	}
}
