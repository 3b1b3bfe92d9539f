// Package tools defines what a tool is (a name, a description, a JSON schema
// and a Run func), a registry of them, and argument decoding whose errors go
// back to the model as tool results instead of failing a run.
//
// Of our packages it imports only event (what its tools report while they
// run). Tools learn about the conversation they run in through the context
// (see Env).
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Spec is what the model is told about a tool.
type Spec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON schema of the arguments object
}

// Tool is something the model can call. A returned error becomes a tool
// result the model reads ("Error: ..."); it never ends the run.
type Tool interface {
	Spec() Spec
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// ArgError reports arguments that do not fit a tool's schema. The model sees
// its message and may call again with corrected arguments.
type ArgError struct {
	Tool string
	Msg  string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, e.Msg)
}

// IsArgError reports whether err is (or wraps) an *ArgError.
func IsArgError(err error) bool {
	var ae *ArgError
	return errors.As(err, &ae)
}

// Registry is a set of tools by name. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool)}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add registers t, replacing a tool of the same name.
func (r *Registry) Add(t Tool) {
	name := t.Spec().Name // outside the lock: a Spec may read the registry (tool_search)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools[name] = t
}

// Remove drops the named tool.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tools, name)
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Specs returns every tool's spec, sorted by name so that prompts are stable
// (and cacheable by providers).
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	ts := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		ts = append(ts, t)
	}
	r.mu.RUnlock() // a Spec may read the registry (tool_search)
	specs := make([]Spec, 0, len(ts))
	for _, t := range ts {
		specs = append(specs, t.Spec())
	}
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return specs
}

// Filter returns a new registry with the tools for which keep returns true.
func (r *Registry) Filter(keep func(name string) bool) *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &Registry{tools: make(map[string]Tool, len(r.tools))}
	for n, t := range r.tools {
		if keep(n) {
			out.tools[n] = t
		}
	}
	return out
}

// Len is the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Call runs the named tool. Unknown tools and bad arguments come back as
// errors whose text tells the model what to do differently.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	t, ok := r.Get(name)
	if !ok {
		return "", fmt.Errorf("unknown tool %q; available tools: %s", name, strings.Join(r.Names(), ", "))
	}
	return t.Run(ctx, args)
}

// SelfTimed is implemented by tools that enforce their own time limit (a
// subagent task may run for half an hour): the agent's per-call timeout
// does not apply to them.
type SelfTimed interface {
	SelfTimed() bool
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut
// with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Ender is implemented by tools whose successful call ends the run, its
// result becoming the answer the person reads (ask_clarification).
type Ender interface {
	EndsRun() bool
}

// Visual is implemented by tools offered only to models that see images
// (view_image).
type Visual interface {
	NeedsVision() bool
}
