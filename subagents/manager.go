package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Options configures a Manager. Zero numbers take the documented defaults.
type Options struct {
	Store  *store.Store     // required
	Models []agent.ModelRef // required; the same list as the lead's
	// Tools are the lead's tools (task need not be among them yet);
	// each type gets its share of them when the Manager is built.
	Tools *tools.Registry
	// Types are added to the built-in ones; a custom type may not reuse a
	// built-in name.
	Types []Type
	// Sections are added to every subagent's system prompt after its role
	// (the working-directory rules, for example).
	Sections       []agent.Section
	MaxPerResponse int           // task calls run per model response; 0 → 3
	MaxPerRun      int           // task calls run per lead run; 0 → 6
	MaxRunning     int           // subagents running at once, all conversations; 0 → 16
	Timeout        time.Duration // per task unless its type says; 0 → 30 minutes
	ToolTimeout    time.Duration // per tool call of a subagent; 0 → the agent's default
	Middlewares    []agent.Middleware
	Logger         *slog.Logger
	Now            func() time.Time
	// Metrics, when set, shows the running subagents and records the
	// tasks' outcomes and their agents' runs and model calls.
	Metrics *metrics.Metrics
}

// Manager runs subagent tasks. It is safe for concurrent use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	types []*kind // offered, in order
	// internal are types the lead is not offered, for Run (Researcher).
	internal map[string]*kind
	slots    *slots
	running  atomic.Int64
}

// kind is an offered type with the agent that runs it.
type kind struct {
	Type
	agent *agent.Agent
	tools []string
}

// New returns a Manager with the built-in types (bash only when the lead
// has a bash tool) and opts.Types.
func New(opts Options) (*Manager, error) {
	if opts.Store == nil || len(opts.Models) == 0 {
		return nil, errors.New("subagents: store and models are required")
	}
	opts = opts.withDefaults()
	m := &Manager{opts: opts, log: opts.Logger, slots: newSlots(opts.MaxRunning)}
	opts.Metrics.SubagentsRunning(m.Running)
	if err := m.buildTypes(); err != nil {
		return nil, err
	}
	if err := m.buildInternal(); err != nil {
		return nil, err
	}
	return m, nil
}

// withDefaults fills in the documented defaults of the zero fields.
func (opts Options) withDefaults() Options {
	if opts.Tools == nil {
		opts.Tools = tools.NewRegistry()
	}
	if opts.MaxPerResponse <= 0 {
		opts.MaxPerResponse = 3
	}
	if opts.MaxPerRun <= 0 {
		opts.MaxPerRun = 6
	}
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = 16
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts
}

// buildTypes builds the offered types, built-in and custom, leaving out
// those that need a tool the lead lacks.
func (m *Manager) buildTypes() error {
	seen := map[string]bool{}
	for _, t := range append(BuiltIn(), m.opts.Types...) {
		if seen[t.Name] {
			return fmt.Errorf("subagents: type %q is defined twice", t.Name)
		}
		seen[t.Name] = true
		if t.Needs != "" {
			if _, ok := m.opts.Tools.Get(t.Needs); !ok {
				continue
			}
		}
		k, err := m.build(t)
		if err != nil {
			return err
		}
		m.types = append(m.types, k)
	}
	return nil
}

// buildInternal builds the types the lead is not offered, when the lead
// has the tool each needs.
func (m *Manager) buildInternal() error {
	m.internal = map[string]*kind{}
	for _, t := range internalTypes() {
		if _, ok := m.opts.Tools.Get(t.Needs); !ok {
			continue
		}
		t.Tools = slices.DeleteFunc(t.Tools, func(name string) bool { // web_search is optional
			_, ok := m.opts.Tools.Get(name)
			return !ok
		})
		k, err := m.build(t)
		if err != nil {
			return err
		}
		m.internal[t.Name] = k
	}
	return nil
}

// build makes the agent that runs subagents of type t.
func (m *Manager) build(t Type) (*kind, error) {
	if t.MaxTurns <= 0 {
		t.MaxTurns = 50
	}
	if t.Timeout <= 0 {
		t.Timeout = m.opts.Timeout
	}
	if strings.TrimSpace(t.SystemPrompt) == "" {
		t.SystemPrompt = generalPrompt
	}
	reg := m.opts.Tools.Filter(t.allows)
	for _, name := range t.Tools {
		if _, ok := reg.Get(name); !ok && t.allows(name) {
			m.log.Warn("a subagent type names a tool that does not exist; it goes without", "type", t.Name, "tool", name)
		}
	}
	sections := append([]agent.Section{{Name: agent.SectionRole, Text: agent.Static(t.SystemPrompt)}}, m.opts.Sections...)
	ag, err := agent.New(agent.Options{
		Store:       m.opts.Store,
		Models:      m.opts.Models,
		Tools:       reg,
		Middlewares: m.opts.Middlewares,
		Prompt:      agent.NewPrompt(sections...),
		MaxTurns:    t.MaxTurns,
		ToolTimeout: m.opts.ToolTimeout,
		Ephemeral:   true,
		Logger:      m.log,
		Now:         m.opts.Now,
		Metrics:     m.opts.Metrics,
	})
	if err != nil {
		return nil, err
	}
	return &kind{Type: t, agent: ag, tools: reg.Names()}, nil
}

// Types returns the names of the offered types, in order.
func (m *Manager) Types() []string {
	names := make([]string, len(m.types))
	for i, k := range m.types {
		names[i] = k.Name
	}
	return names
}

// Running returns how many subagents are running now.
func (m *Manager) Running() int { return int(m.running.Load()) }

func (m *Manager) kind(name string) (*kind, bool) {
	for _, k := range m.types {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// Tool returns the task tool for the lead agent.
func (m *Manager) Tool() tools.Tool { return &taskTool{m: m, spec: m.spec()} }

type taskTool struct {
	m    *Manager
	spec tools.Spec // fixed: the types do not change
}

// SelfTimed: a task has its own timeout, longer than a tool call's.
func (t *taskTool) SelfTimed() bool { return true }

func (t *taskTool) Spec() tools.Spec { return t.spec }

func (m *Manager) spec() tools.Spec {
	var sb strings.Builder
	sb.WriteString("Delegate a self-contained task to a subagent, which works on it alone, in parallel with other task calls of the same response, and returns its final answer. The subagent sees nothing of this conversation: put everything it needs in prompt.\n\nTypes:")
	for _, k := range m.types {
		fmt.Fprintf(&sb, "\n- %s: %s", k.Name, k.Description)
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description": map[string]any{
				"type":        "string",
				"description": "What the task is, in 3 to 5 words; the person sees it.",
			},
			"prompt": map[string]any{
				"type":        "string",
				"description": "The full brief: the goal, the context the subagent cannot see, constraints, and what its answer must contain.",
			},
			"subagent_type": map[string]any{
				"type":        "string",
				"enum":        m.Types(),
				"description": "Which kind of subagent does the task.",
			},
		},
		"required":             []string{"description", "prompt", "subagent_type"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(schema)
	return tools.Spec{Name: ToolName, Description: sb.String(), Parameters: raw}
}

type taskArgs struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Type        string `json:"subagent_type"`
}

func (t *taskTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	in, err := tools.Decode[taskArgs](ToolName, args, []string{"description", "prompt", "subagent_type"}, nil)
	if err != nil {
		return "", err
	}
	in.Description = strings.Join(strings.Fields(in.Description), " ")
	if in.Description == "" || strings.TrimSpace(in.Prompt) == "" {
		return "", &tools.ArgError{Tool: ToolName, Msg: "description and prompt must not be empty"}
	}
	k, ok := t.m.kind(in.Type)
	if !ok {
		return "", fmt.Errorf("unknown subagent type %q; the available types are %s", in.Type, strings.Join(t.m.Types(), ", "))
	}
	env := tools.EnvFrom(ctx)
	if err := t.m.admit(env); err != nil {
		return "", err
	}
	return forLead(t.m.execute(ctx, env, k, in), in, k), nil
}

// Step is work given to a subagent directly, outside the lead's task tool
// and its limits (a research plan's step).
type Step struct {
	Type        string // Researcher, or a type the lead is offered
	Description string // shown to the person
	Prompt      string // the whole brief
}

// Run runs step as a task of env's run and waits for it: its events go
// through env.Emit and it is recorded with env.RunID like a delegated task,
// and it waits for a free slot like one. With env.Allow set, its subagent
// may use only the tools Allow allows, as a delegated task's may.
func (m *Manager) Run(ctx context.Context, env *tools.Env, step Step) (Outcome, error) {
	k, ok := m.internal[step.Type]
	if !ok {
		if k, ok = m.kind(step.Type); !ok {
			return Outcome{}, fmt.Errorf("subagents: unknown type %q", step.Type)
		}
	}
	args := taskArgs{Description: strings.Join(strings.Fields(step.Description), " "), Prompt: step.Prompt, Type: k.Name}
	return m.execute(ctx, env, k, args), nil
}

// Has reports whether steps of the named type can run.
func (m *Manager) Has(name string) bool {
	if _, ok := m.internal[name]; ok {
		return true
	}
	_, ok := m.kind(name)
	return ok
}

// admit applies the per-response and per-run limits. Within a response the
// first task calls (by their order in the response) are the ones run;
// earlier responses of the run count through their task records.
func (m *Manager) admit(env *tools.Env) error {
	pos, total := 0, 0
	for i, name := range env.Batch {
		if name == ToolName {
			if i < env.Index {
				pos++
			}
			total++
		}
	}
	if pos >= m.opts.MaxPerResponse {
		return fmt.Errorf("not started: at most %d task calls run per response and you made %d. Use the results of the first %d; delegate what is left in a later response, or do it yourself", m.opts.MaxPerResponse, total, m.opts.MaxPerResponse)
	}
	if env.RunID == "" {
		return nil
	}
	var before int
	err := m.opts.Store.View(func(tx *store.Tx) error {
		ts, err := tx.Tasks(env.RunID)
		for _, t := range ts {
			if t.Turn < env.Turn {
				before++
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("not started: the task records could not be read (%v)", err)
	}
	if before+pos >= m.opts.MaxPerRun {
		return fmt.Errorf("not started: this request has already delegated %d tasks, the limit is %d. Finish the work with the results you have", before+pos, m.opts.MaxPerRun)
	}
	return nil
}
