package agents

import (
	"slices"
	"strings"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
)

// Persona is what the run answering in sees of its agent: persona text,
// model, and the tools it may use. setup_agent is offered only to the
// bot's admins, whatever the agent.
func (r *Registry) Persona(in *bus.Inbound) *agent.Persona {
	d, _, ok := r.For(in)
	admin := r.IsAdmin(in)
	if !ok {
		if admin || !r.setupOn() {
			return nil // the built-in agent as it always was
		}
		return &agent.Persona{Allow: func(tool string) bool { return tool != SetupTool }}
	}
	return &agent.Persona{
		Name: d.Name, Soul: d.Soul, Model: d.Model, Skills: d.Skills, Memory: d.Memory,
		Allow: r.allow(d, admin),
	}
}

// allow is d's tool rule: its exact tool list, then its MCP servers.
func (r *Registry) allow(d Def, admin bool) func(string) bool {
	if len(d.Tools) == 0 && len(d.MCPServers) == 0 && (admin || !r.setupOn()) {
		return nil
	}
	return func(tool string) bool {
		if tool == SetupTool && !admin {
			return false
		}
		if len(d.Tools) > 0 && !slices.Contains(d.Tools, tool) {
			return false
		}
		if len(d.MCPServers) > 0 && r.opts.ServerOf != nil {
			if srv, ok := r.opts.ServerOf(tool); ok && !slices.Contains(d.MCPServers, srv) {
				return false
			}
		}
		return true
	}
}

// setupOn reports whether setup_agent exists: some bot has admins.
func (r *Registry) setupOn() bool {
	for _, b := range r.opts.Bindings {
		if len(b.Admins) > 0 {
			return true
		}
	}
	return false
}

// IsAdmin reports whether in's sender is one of its bot's admins (by id,
// or by @username where the platform has them).
func (r *Registry) IsAdmin(in *bus.Inbound) bool {
	for _, a := range r.opts.Bindings[in.Channel].Admins {
		if a == in.UserID || in.UserName != "" && strings.EqualFold(a, "@"+in.UserName) {
			return true
		}
	}
	return false
}

// MemoryKey is the key memory keeps a person's (or chat's) facts under
// for persona p: key itself for shared memory, a key of the agent's own
// for "own", so such an agent neither sees nor changes the shared facts.
func MemoryKey(p *agent.Persona, key string) string {
	if p == nil || p.Memory != "own" || key == "" {
		return key
	}
	return "agent:" + p.Name + "|" + key
}

// SkillAllowed reports whether persona p may use the skill called name.
func SkillAllowed(p *agent.Persona, name string) bool {
	return p == nil || len(p.Skills) == 0 || slices.Contains(p.Skills, name)
}

// Named is the persona of the agent called name, for a run that has no
// person behind it (the HTTP API): setup_agent is never offered.
func (r *Registry) Named(name string) (*agent.Persona, bool) {
	d, ok := r.Get(name)
	if !ok {
		return nil, false
	}
	return &agent.Persona{
		Name: d.Name, Soul: d.Soul, Model: d.Model, Skills: d.Skills, Memory: d.Memory,
		Allow: r.allow(d, false),
	}, true
}
