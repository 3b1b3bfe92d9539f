package lgwire

// Agent is a named agent as GET /api/agents shows it, and the
// assistants it becomes.
type Agent struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Model       string   `json:"model,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	Skills      []string `json:"skills,omitempty"`
	MCPServers  []string `json:"mcp_servers,omitempty"`
	Memory      string   `json:"memory,omitempty"`
	Source      string   `json:"source"` // "config" or "chat" (created with setup_agent)
}
