package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
)

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
