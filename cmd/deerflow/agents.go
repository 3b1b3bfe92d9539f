package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/api/lgwire"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/store"
)

// wireAgents builds the named agents and who answers where, from the
// config's agents and each bot's agent, chat_agents and admins;
// setup_agent joins the tools when some bot has admins. Needs the tools
// and skills; MCP servers are looked up when a run asks.
func (a *app) wireAgents(models []agent.ModelRef) {
	bind := map[string]agents.Binding{}
	for _, ci := range a.cfg.ChannelInstances() {
		bind[ci.Name] = agents.Binding{Default: ci.Agent, Chats: ci.ChatAgents, Admins: ci.Admins}
	}
	a.agents = agents.New(agents.Options{
		Store: a.store, Config: a.cfg.Agents, Bindings: bind, Logger: a.log,
		ServerOf: func(tool string) (string, bool) {
			if m := a.mcp; m != nil {
				return m.ServerOf(tool)
			}
			return "", false
		},
		KnownModel: func(name string) bool { return modelNamed(models, name) != nil },
		KnownTool:  func(name string) bool { _, ok := a.tools.Get(name); return ok },
		KnownSkill: func(name string) bool { _, ok := a.skills.Lookup(name); return ok },
	})
	if t := a.agents.Tool(); t != nil {
		a.tools.Add(t)
	}
}

// memoryKeys are the keys memory keeps in's facts under: the person's
// and the chat's, or an agent's own when its memory is "own".
func memoryKeys(in *agent.Input) (user, chat string) {
	return agents.MemoryKey(in.Persona, in.UserID), agents.MemoryKey(in.Persona, in.ChatKey)
}

// agentList is GET /api/agents.
func (a *app) agentList() []lgwire.Agent {
	defs, err := a.agents.List()
	if err != nil {
		a.log.Warn("listing agents", "err", err)
	}
	out := make([]lgwire.Agent, len(defs))
	for i, d := range defs {
		src := "config"
		if d.FromChat() {
			src = "chat"
		}
		out[i] = lgwire.Agent{Name: d.Name, Description: d.Description, Model: d.Model, Tools: d.Tools,
			Skills: d.Skills, MCPServers: d.MCPServers, Memory: d.Memory, Source: src}
	}
	return out
}

// agentsCLI runs `deerflow agents`: the store must not be in use by a
// running deerflow.
func agentsCLI(cfg *config.Config, args []string, stdout, stderr io.Writer) int {
	st, err := store.Open(cfg.DBPath(), store.Options{Timeout: time.Second})
	if err != nil {
		fmt.Fprintf(stderr, "deerflow agents: opening %s: %v (is deerflow serve running? stop it first)\n", cfg.DBPath(), err)
		return 1
	}
	defer st.Close()
	return agents.New(agents.Options{Store: st, Config: cfg.Agents}).CLI(args, stdout, stderr)
}

// printAgents says which agents there are and which bot and chat each
// answers (deerflow check).
func printAgents(w io.Writer, cfg *config.Config) {
	for _, a := range cfg.Agents {
		model := cmp.Or(a.Model, "the default model")
		fmt.Fprintf(w, "agent\t%s: %s; %s, %s memory\n", a.Name, a.Description, model, a.Memory)
	}
	for _, ci := range cfg.ChannelInstances() {
		if ci.Agent != "" || len(ci.ChatAgents) > 0 {
			fmt.Fprintf(w, "agent\t%s answers as %s, %d chat(s) bound to their own agent\n", ci.Name, cmp.Or(ci.Agent, "the built-in agent"), len(ci.ChatAgents))
		}
	}
}
