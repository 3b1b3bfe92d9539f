package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
)

// AgentJSON is a named agent as GET /api/agents shows it.
type AgentJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Model       string   `json:"model,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	Skills      []string `json:"skills,omitempty"`
	MCPServers  []string `json:"mcp_servers,omitempty"`
	Memory      string   `json:"memory,omitempty"`
	Source      string   `json:"source"` // "config" or "chat" (created with setup_agent)
}

// listAgents answers GET /api/agents.
func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	list := []AgentJSON{}
	if s.o.Agents != nil {
		list = append(list, s.o.Agents()...)
	}
	reply(w, http.StatusOK, struct {
		Agents []AgentJSON `json:"agents"`
	}{list})
}

// builtInAssistants are the names LangGraph clients send for "the" agent.
var builtInAssistants = map[string]bool{"": true, "agent": true, "lead_agent": true, "default": true}

// agentOf is the agent a run's body names (context or configurable
// agent_name, else assistant_id; "" for the built-in one); false when the
// client was told it does not exist.
func (s *Server) agentOf(w http.ResponseWriter, req *lgwire.RunBody) (string, bool) {
	name := strings.TrimSpace(req.AssistantID)
	if n := req.Setting("agent_name"); n != "" && builtInAssistants[name] {
		name = n
	}
	if builtInAssistants[name] {
		return "", true
	}
	if s.o.Persona != nil {
		if _, ok := s.o.Persona(name); ok {
			return name, true
		}
	}
	fail(w, http.StatusNotFound, fmt.Sprintf("Assistant %q not found (POST /api/assistants/search lists them).", name))
	return "", false
}
