// Package toolsearch defers tools: when a registry holds more deferrable
// tools (MCP servers' tools) than a threshold, the model is sent none of
// their schemas. It is offered tool_search instead, whose description
// lists the deferred tools by name with a one-line description, and whose
// call returns the matching tools' full schemas and loads them
// (tools.Env.Load): from then on the run offers them like any other tool.
//
// A call of a deferred tool that was not loaded fails, telling the model to
// use tool_search first (the agent's doing: see agent.Options.Deferred).
package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/tools"
)

// Name is the search tool's name, as DeerFlow's.
const Name = "tool_search"

// MaxResults caps the tools one keyword search returns (and loads).
const MaxResults = 5

// descChars caps each deferred tool's line in tool_search's description.
const descChars = 60

// Options configures a Search.
type Options struct {
	Tools *tools.Registry // where the deferrable tools are (and come and go)
	// Deferrable reports whether the named tool may be deferred (an MCP
	// tool). It is called concurrently.
	Deferrable func(name string) bool
	// Threshold: above this many deferrable tools, they are deferred;
	// 0 (or less) never defers.
	Threshold int
}

// Search decides which tools are deferred and is the tool_search tool.
// It is safe for concurrent use.
type Search struct {
	o Options

	mu    sync.Mutex
	n     int       // deferrable tools when last counted
	ofLen int       // the registry's size then
	at    time.Time // and when
}

// New returns a Search over o.Tools.
func New(o Options) *Search {
	if o.Deferrable == nil {
		o.Deferrable = func(string) bool { return false }
	}
	return &Search{o: o, ofLen: -1}
}

// Active reports whether tools are deferred now: there are more deferrable
// tools than the threshold.
func (s *Search) Active() bool {
	return s.o.Threshold > 0 && s.count() > s.o.Threshold
}

// Deferred reports whether the named tool is kept from the model until a
// tool_search call loads it: a deferrable tool while Active, and
// tool_search itself while not (there is nothing to search then).
func (s *Search) Deferred(name string) bool {
	if name == Name {
		return !s.Active()
	}
	return s.o.Deferrable(name) && s.Active()
}

// count is the number of deferrable tools in the registry, recounted when
// its size changes or after a second (Deferred is asked once per tool per
// model call: counting each time would be quadratic).
func (s *Search) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.o.Tools.Len(); l != s.ofLen || time.Since(s.at) > time.Second {
		s.n = 0
		for _, name := range s.o.Tools.Names() {
			if s.o.Deferrable(name) {
				s.n++
			}
		}
		s.ofLen, s.at = l, time.Now()
	}
	return s.n
}

// deferred returns the specs of the deferred tools allow permits (nil:
// all), sorted by name.
func (s *Search) deferred(allow func(string) bool) []tools.Spec {
	if !s.Active() {
		return nil
	}
	var out []tools.Spec
	for _, name := range s.o.Tools.Names() { // not Specs: that would ask this tool's Spec
		if name == Name || !s.o.Deferrable(name) || (allow != nil && !allow(name)) {
			continue
		}
		if t, ok := s.o.Tools.Get(name); ok {
			out = append(out, t.Spec())
		}
	}
	return out
}

// Tool returns tool_search. Its description names the tools deferred at
// the time it is asked for.
func (s *Search) Tool() tools.Tool { return searchTool{s} }

type searchTool struct{ s *Search }

var schema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Keywords matched against the deferred tools' names and descriptions, or select:name1,name2 for exact names."}},"required":["query"]}`)

func (t searchTool) Spec() tools.Spec {
	var b strings.Builder
	b.WriteString("Load deferred tools. The tools below can be called only after this tool has returned their schemas; " +
		"query by keywords (case-insensitive) or select:name1,name2. Deferred tools:")
	for _, sp := range t.s.deferred(nil) {
		b.WriteString("\n- " + sp.Name)
		if d := oneLine(sp.Description); d != "" {
			b.WriteString(": " + d)
		}
	}
	return tools.Spec{Name: Name, Description: b.String(), Parameters: schema}
}

type searchIn struct {
	Query string `json:"query"`
}

func (t searchTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	in, err := tools.Decode[searchIn](Name, args, []string{"query"}, nil)
	if err != nil {
		return "", err
	}
	env := tools.EnvFrom(ctx)
	found := Match(t.s.deferred(env.Allow), in.Query)
	if len(found) == 0 {
		return "", fmt.Errorf("no deferred tool matches %q; try other keywords, or select:<name> with a name from this tool's description", in.Query)
	}
	type result struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	out := make([]result, len(found))
	names := make([]string, len(found))
	for i, sp := range found {
		if env.Load != nil {
			env.Load(sp.Name)
		}
		out[i] = result{sp.Name, sp.Description, sp.Parameters}
		names[i] = sp.Name
	}
	js, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Loaded %s; you can call them now. Their schemas:\n%s", strings.Join(names, ", "), js), nil
}

// oneLine is the first line of a description, without a leading "[server]"
// tag (the name has the server), cut to descChars.
func oneLine(d string) string {
	d, _, _ = strings.Cut(strings.TrimSpace(d), "\n")
	if tag, rest, ok := strings.Cut(d, "] "); ok && strings.HasPrefix(tag, "[") && !strings.Contains(tag, " ") {
		d = rest
	}
	d = strings.TrimSpace(d)
	if r := []rune(d); len(r) > descChars {
		d = strings.TrimSpace(string(r[:descChars-1])) + "…"
	}
	return d
}
