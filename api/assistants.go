package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/api/lgwire"
)

// The assistants are the agents, as LangGraph names them: lead_agent (the
// built-in agent) and each named agent, all of the lead_agent graph.
func (s *Server) assistantRoutes() {
	s.mux.HandleFunc("POST /api/assistants/search", s.searchAssistants)
	s.mux.HandleFunc("GET /api/assistants/{id}", s.getAssistant)
	s.mux.HandleFunc("GET /api/assistants/{id}/graph", s.assistantGraph)
	s.mux.HandleFunc("GET /api/assistants/{id}/schemas", s.assistantSchemas)
	s.mux.HandleFunc("GET /api/assistants/{id}/subgraphs", s.assistantSubgraphs)
}

func (s *Server) assistants() []lgwire.Assistant {
	out := []lgwire.Assistant{lgwire.NewAssistant(lgwire.LeadAgent, "DeerFlow's lead agent")}
	if s.o.Agents != nil {
		for _, a := range s.o.Agents() {
			out = append(out, lgwire.NewAssistant(a.Name, a.Description))
		}
	}
	return out
}

// findAssistant answers 404 itself when there is no assistant id.
func (s *Server) findAssistant(w http.ResponseWriter, id string) (lgwire.Assistant, bool) {
	if builtInAssistants[id] {
		id = lgwire.LeadAgent
	}
	for _, a := range s.assistants() {
		if a.AssistantID == id {
			return a, true
		}
	}
	fail(w, http.StatusNotFound, fmt.Sprintf("Assistant %q not found.", id))
	return lgwire.Assistant{}, false
}

func (s *Server) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q struct {
		GraphID string         `json:"graph_id"`
		Name    string         `json:"name"`
		Limit   int            `json:"limit"`
		Offset  int            `json:"offset"`
		Meta    map[string]any `json:"metadata"`
	}
	if !decode(w, r, &q) {
		return
	}
	out := []lgwire.Assistant{}
	for _, a := range s.assistants() {
		if (q.GraphID == "" || q.GraphID == a.GraphID) && (q.Name == "" || strings.Contains(a.Name, q.Name)) && lgwire.MetaMatch(a.Metadata, q.Meta) {
			out = append(out, a)
		}
	}
	reply(w, http.StatusOK, lgwire.Page(out, q.Offset, q.Limit))
}

func (s *Server) getAssistant(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.findAssistant(w, r.PathValue("id")); ok {
		reply(w, http.StatusOK, a)
	}
}

func (s *Server) assistantGraph(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.findAssistant(w, r.PathValue("id")); !ok {
		return
	}
	reply(w, http.StatusOK, lgwire.Graph())
}

func (s *Server) assistantSchemas(w http.ResponseWriter, r *http.Request) {
	a, ok := s.findAssistant(w, r.PathValue("id"))
	if !ok {
		return
	}
	reply(w, http.StatusOK, lgwire.Schemas(a.GraphID))
}

func (s *Server) assistantSubgraphs(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.findAssistant(w, r.PathValue("id")); ok {
		reply(w, http.StatusOK, map[string]any{})
	}
}
