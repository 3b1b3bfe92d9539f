package agents

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/deerflow/deerflow/config"
)

// Check finds what the config's agents and bot bindings name that does
// not exist (tools, skills, agents), each problem naming its config key.
// Bindings name agents of the config: an agent created in a chat is
// chosen there, with /agent.
func Check(cfg *config.Config, tools, skills []string) []string {
	var out []string
	names := map[string]bool{}
	for i, a := range cfg.Agents {
		names[a.Name] = true
		k := fmt.Sprintf("agents[%d]", i)
		for j, t := range a.Tools {
			if !slices.Contains(tools, t) && t != SetupTool && !fromMCP(cfg, t) {
				out = append(out, fmt.Sprintf("%s.tools[%d]: agent %q: no tool called %q", k, j, a.Name, t))
			}
		}
		for j, s := range a.Skills {
			if !slices.Contains(skills, s) {
				out = append(out, fmt.Sprintf("%s.skills[%d]: agent %q: no skill called %q", k, j, a.Name, s))
			}
		}
	}
	for _, ci := range cfg.ChannelInstances() {
		if ci.Agent != "" && !names[ci.Agent] {
			out = append(out, fmt.Sprintf("%s.agent: no agent called %q in agents", ci.Key, ci.Agent))
		}
		chats := make([]string, 0, len(ci.ChatAgents))
		for chat := range ci.ChatAgents {
			chats = append(chats, chat)
		}
		sort.Strings(chats)
		for _, chat := range chats {
			if a := ci.ChatAgents[chat]; !names[a] {
				out = append(out, fmt.Sprintf("%s.chat_agents.%s: no agent called %q in agents", ci.Key, chat, a))
			}
		}
	}
	return out
}

// fromMCP reports whether tool may be an MCP server's ("<server>_<tool>"):
// those are known only once the servers run.
func fromMCP(cfg *config.Config, tool string) bool {
	return slices.ContainsFunc(cfg.MCP.Servers, func(s config.MCPServer) bool {
		return strings.HasPrefix(tool, s.Name+"_")
	})
}
