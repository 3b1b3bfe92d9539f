package agent

import (
	"slices"
	"strings"
)

// Persona is the named agent a run answers as: its persona text, its
// default model and the tools it may use. Nil (Input.Persona) is the
// built-in lead agent.
type Persona struct {
	Name string // shown in logs: the run's lines carry it as "agent"
	// Soul, when set, is the system prompt's soul section (SectionSoul) in
	// place of the configured one, fenced like it (SoulText).
	Soul string
	// Model is the model name used when the thread chose none ("" = the
	// default model); an unknown name falls back to the default.
	Model string
	// Allow reports whether the run may use a tool; nil allows all. A tool
	// it refuses is neither offered to the model nor callable: a call gets
	// exactly the error an unknown tool gets. Subagents started by the run
	// (the task tool) inherit it. It is called concurrently.
	Allow  func(tool string) bool
	Skills []string // allow-list of skill names, empty = all (data only: the caller's prompt section and skill activation read it)
	Memory string   // "shared" or "own" (data only: the caller's memory wiring reads it)
}

// allows reports whether the persona lets a run use the named tool. A nil
// Persona, or one without Allow, allows every tool.
func (p *Persona) allows(tool string) bool {
	return p == nil || p.Allow == nil || p.Allow(tool)
}

// SoulText is the soul section for soul: the text fenced in <soul> tags.
// A persona's soul is rendered with it; the configured one should be too.
func SoulText(soul string) string {
	return "<soul>\n" + strings.TrimSpace(soul) + "\n</soul>"
}

// usable reports whether the run may use the named tool: the skill's
// allowed tools (r.allowed, empty: all) and the persona both allow it.
func (r *run) usable(tool string) bool {
	return (len(r.allowed) == 0 || slices.Contains(r.allowed, tool)) && r.in.Persona.allows(tool)
}

// deferred reports whether the run may use the tool but has not loaded it.
func (r *run) deferred(tool string) bool {
	_, loaded := r.loaded.Load(tool)
	return !loaded && r.a.opts.Deferred != nil && r.a.opts.Deferred(tool) && r.usable(tool)
}

// allow is the run's tool predicate as its tool calls (and the subagents
// they start) see it (tools.Env.Allow): nil when every tool is usable.
func (r *run) allow() func(string) bool {
	if p := r.in.Persona; len(r.allowed) == 0 && (p == nil || p.Allow == nil) {
		return nil
	}
	return r.usable
}
