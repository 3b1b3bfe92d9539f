package api

import (
	"fmt"
	"net/http"
	"strings"
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

// agentOf is the agent a run's body names (agent, else assistant_id);
// false when the client was told it does not exist.
func (s *Server) agentOf(w http.ResponseWriter, req *createRunReq) (string, bool) {
	name := strings.TrimSpace(req.Agent)
	if name == "" {
		name = strings.TrimSpace(req.AssistantID)
	}
	if builtInAssistants[name] {
		return "", true
	}
	if s.o.Persona != nil {
		if _, ok := s.o.Persona(name); ok {
			return name, true
		}
	}
	fail(w, http.StatusNotFound, "unknown_agent", fmt.Sprintf("There is no agent called %q (GET /api/agents lists them).", name))
	return "", false
}
