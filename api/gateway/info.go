package gateway

import (
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
)

// enabled is DeerFlow's {"enabled": bool} feature object.
type enabled struct {
	Enabled bool `json:"enabled"`
}

// features answers GET /api/features. The first three are DeerFlow's
// (frontend core/features/api.ts), all off: custom agents are configured
// in deerflow's config or made in chat, not over HTTP; there is no browser
// control and no durable MCP task runtime. The rest say what deerflow
// serves, for clients that look.
func (g *Gateway) features(w http.ResponseWriter, r *http.Request) {
	c := g.o.Config
	reply(w, http.StatusOK, map[string]enabled{
		"agents_api":      {false},
		"browser_control": {false},
		"mcp_tasks":       {false},
		"uploads":         {g.o.Files != nil && g.o.Intake != nil},
		"artifacts":       {g.o.Files != nil},
		"scheduled_tasks": {g.o.Scheduler},
		"memory":          {c.Memory.Enabled && g.o.Store != nil},
		"skills":          {g.o.Skills != nil},
		"suggestions":     {false},
	})
}

// modelJSON is DeerFlow's ModelResponse (frontend core/models/types.ts),
// plus supports_vision.
type modelJSON struct {
	ID                      string `json:"id"`
	Name                    string `json:"name"`
	Model                   string `json:"model"`
	DisplayName             string `json:"display_name"`
	Description             string `json:"description"`
	SupportsThinking        bool   `json:"supports_thinking"`
	SupportsReasoningEffort bool   `json:"supports_reasoning_effort"`
	SupportsVision          bool   `json:"supports_vision"`
}

func modelOf(m config.Model) modelJSON {
	return modelJSON{
		ID: m.Name, Name: m.Name, Model: m.Model, DisplayName: m.Name, Description: m.Description,
		SupportsThinking:        m.Thinking.Enabled != nil && *m.Thinking.Enabled,
		SupportsReasoningEffort: m.ReasoningEffort != "",
		SupportsVision:          m.SupportsVision,
	}
}

// models answers GET /api/models: the configured models, first the
// default, without keys or endpoints. Token usage display is off.
func (g *Gateway) models(w http.ResponseWriter, r *http.Request) {
	list := []modelJSON{}
	for _, m := range g.o.Config.Models {
		list = append(list, modelOf(m))
	}
	reply(w, http.StatusOK, map[string]any{"models": list, "token_usage": enabled{false}})
}

// model answers GET /api/models/{name}.
func (g *Gateway) model(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	for _, m := range g.o.Config.Models {
		if m.Name == name {
			reply(w, http.StatusOK, modelOf(m))
			return
		}
	}
	fail(w, http.StatusNotFound, "Model '"+name+"' not found")
}

// mcpServerJSON is one of DeerFlow's MCPServerConfig entries (frontend
// core/mcp/types.ts reads enabled and description; the rest is shown).
type mcpServerJSON struct {
	Enabled     bool              `json:"enabled"`
	Description string            `json:"description"`
	Type        string            `json:"type"` // stdio | http
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers"`
	Sandboxed   bool              `json:"sandboxed"`
}

// mcpConfig answers GET /api/mcp/config: the configured servers, every
// env and header value masked, credentials in URLs and secret-looking
// arguments too. Every configured server is on (deerflow has no switch).
func (g *Gateway) mcpConfig(w http.ResponseWriter, r *http.Request) {
	out := map[string]mcpServerJSON{}
	for _, s := range g.o.Config.MCP.Servers {
		j := mcpServerJSON{
			Enabled: true, Type: "stdio", Command: s.Command, Args: maskArgs(s.Args),
			Env: maskValues(s.Env), URL: redact.URLs(s.URL), Headers: maskValues(s.Headers),
		}
		if s.URL != "" {
			j.Type = "http"
		}
		j.Sandboxed = j.Type == "stdio" && (s.Sandbox == nil || *s.Sandbox)
		j.Description = mcpDescription(j)
		out[s.Name] = j
	}
	reply(w, http.StatusOK, map[string]any{"mcp_servers": out})
}

func mcpDescription(s mcpServerJSON) string {
	if s.Type == "http" {
		return "Streamable HTTP server at " + s.URL
	}
	where := "on the host"
	if s.Sandboxed {
		where = "in the sandbox"
	}
	return "stdio server started " + where + ": " + s.Command
}

// mcpWrite answers the UI's MCP edits (PUT, PATCH /api/mcp/config).
func (g *Gateway) mcpWrite(w http.ResponseWriter, r *http.Request) {
	notHere(w, "MCP servers are configured in deerflow's config file (mcp.servers) and read at start-up; they cannot be changed over HTTP.")
}

func maskValues(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ""
		if v != "" {
			out[k] = redact.Mask
		}
	}
	return out
}

// maskArgs hides credentials in URLs and the values of secret-looking
// flags: --api-key=x and --token x.
func maskArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		flag, _, isPair := strings.Cut(a, "=")
		switch {
		case isPair && strings.HasPrefix(flag, "-") && secretFlag(flag):
			out[i] = flag + "=" + redact.Mask
		case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && secretFlag(args[i-1]):
			out[i] = redact.Mask
		default:
			out[i] = redact.URLs(a)
		}
	}
	return out
}

func secretFlag(flag string) bool {
	name := strings.ReplaceAll(strings.TrimLeft(flag, "-"), "-", "_")
	return redact.Secret(name) || strings.Contains(strings.ToLower(name), "secret") ||
		strings.Contains(strings.ToLower(name), "password")
}

// suggestionsConfig answers GET /api/suggestions/config: deerflow does not
// generate follow-up questions.
func (g *Gateway) suggestionsConfig(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]any{"enabled": false, "max_suggestions": 3})
}
