package config

import "slices"

// AgentDef is a named agent: its own persona, model, tools, skills, MCP
// servers and memory. Bots and chats are bound to agents with the
// channels' agent and chat_agents keys; people switch with /agent.
type AgentDef struct {
	Name        string   `yaml:"name"`        // used by /agent and bindings: [a-z0-9-], at most 32
	Description string   `yaml:"description"` // shown by /agent
	Model       string   `yaml:"model"`       // a models[].name; "" = the default model
	Soul        string   `yaml:"soul"`        // persona text for the system prompt; "" = agent.soul
	Tools       []string `yaml:"tools"`       // exact allow-list of tool names; empty = all
	Skills      []string `yaml:"skills"`      // allow-list of skill names; empty = all
	MCPServers  []string `yaml:"mcp_servers"` // allow-list of mcp.servers[].name; empty = all
	Memory      string   `yaml:"memory"`      // shared (the person's facts, default) | own (kept per agent)
}

// ValidAgentName reports whether name can name an agent: 1 to 32 of
// a-z, 0-9 and '-', not starting with '-'.
func ValidAgentName(name string) bool {
	if name == "" || len(name) > 32 || name[0] == '-' {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// agents checks the agents' names and what they refer to in this config
// (models, MCP servers); tools, skills and bindings are checked by
// deerflow check, which knows them.
func (v *validator) agents() {
	seen := map[string]bool{}
	for i, a := range v.c.Agents {
		k := index("agents", i)
		switch {
		case !ValidAgentName(a.Name):
			v.fail(k+".name", "must be 1 to 32 of a-z, 0-9 and -, got %q", a.Name)
		case seen[a.Name]:
			v.fail(k+".name", "duplicate agent name %q", a.Name)
		}
		seen[a.Name] = true
		if a.Model != "" && !slices.ContainsFunc(v.c.Models, func(m Model) bool { return m.Name == a.Model }) {
			v.fail(k+".model", "agent %q: no model named %q in models", a.Name, a.Model)
		}
		for j, s := range a.MCPServers {
			if !slices.ContainsFunc(v.c.MCP.Servers, func(m MCPServer) bool { return m.Name == s }) {
				v.fail(index(k+".mcp_servers", j), "agent %q: no MCP server named %q in mcp.servers", a.Name, s)
			}
		}
		v.oneOf(k+".memory", a.Memory, "shared", "own")
	}
}

func (c *Config) agentsDefaults() {
	for i := range c.Agents {
		defString(&c.Agents[i].Memory, "shared")
	}
}
