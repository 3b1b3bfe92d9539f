package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agent/guard"
	"github.com/deerflow/deerflow/agent/loopdetect"
	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/api"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/logctx"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/mcp"
	"github.com/deerflow/deerflow/memory"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/research"
	"github.com/deerflow/deerflow/router"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/scheduler"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
	"github.com/deerflow/deerflow/web"
)

// app is everything one deerflow process runs, wired from a Config.
type app struct {
	cfg     *config.Config
	log     *slog.Logger
	store   *store.Store
	sandbox *sandbox.Manager
	tools   *tools.Registry
	agent   *agent.Agent
	router  *router.Router
	metrics *metrics.Metrics // nil without http.listen

	unpacked  chan struct{} // closed once the built-in skills are on disk
	bgGo      chan struct{} // closed by background: start-up's background work may run
	bgOnce    sync.Once
	mcp       *mcp.Manager // nil without mcp.servers
	mcpStop   context.CancelFunc
	subagents *subagents.Manager
	research  *research.Researcher // nil when research.enabled is false
	api       *api.Server          // nil when http.listen is empty
	runner    *runner.Runner       // every run, whatever starts it
	memory    *memory.Manager      // nil when memory.enabled is false
	skills    *skills.Manager
	scheduler *scheduler.Scheduler // nil when scheduler.enabled is false
	agents    *agents.Registry
	plan      *plan.Book   // goals, plan modes and checklists
	asks      *choice.Asks // questions running tools wait on (ACP permissions)
}

// newLogger returns the process logger writing to w, per cfg.Log.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	// A run's id travels in its context; every line logged with it
	// carries it.
	return slog.New(logctx.Wrap(h))
}

// newApp opens the store and wires the agent and the bus. The caller must
// call close.
func newApp(cfg *config.Config, log *slog.Logger) (*app, error) {
	a, err := newAppDeferred(cfg, log, nil)
	if err == nil {
		a.background()
	}
	return a, err
}

// newAppDeferred is newApp leaving start-up's background work (unpacking
// the built-in skills, probing bubblewrap) until background is called, so
// that it does not compete with connecting the channels. ready, when
// set, is asked once everything is wired and before anything of the
// store's is resumed; its error ends it (the store closed).
func newAppDeferred(cfg *config.Config, log *slog.Logger, ready func() error) (*app, error) {
	st, err := store.Open(cfg.DBPath(), store.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: log, store: st, metrics: newMetrics(cfg), bgGo: make(chan struct{})}
	if err := a.wire(); err != nil {
		st.Close()
		return nil, err
	}
	if ready != nil {
		if err := ready(); err != nil {
			a.abandon()
			return nil, err
		}
	}
	// The one recovery pass, before anything can submit a run: runs a
	// crash cut short are reported, waiting ones queued again (they
	// start with startRuns, once the senders are registered).
	if _, _, err := a.runner.Recover(); err != nil {
		log.Error("recovering runs", "err", err)
	}
	if a.memory != nil {
		if err := a.memory.Start(); err != nil {
			log.Error("resuming memory updates", "err", err)
		}
	}
	return a, nil
}

// background lets start-up's background work run: unpacking the built-in
// skills and probing bubblewrap.
func (a *app) background() {
	a.bgOnce.Do(func() {
		close(a.bgGo)
		a.sandbox.Probe()
	})
}

// newWebTools builds web_fetch, and web_search when a provider is set.
func newWebTools(cfg *config.Config) ([]tools.Tool, error) {
	wf := cfg.Tools.WebFetch
	out := []tools.Tool{web.FetchTool(web.FetchOptions{
		AllowPrivate: wf.AllowPrivateAddresses,
		MaxChars:     wf.MaxChars,
		Timeout:      time.Duration(wf.TimeoutSeconds) * time.Second,
	})}
	ws := cfg.Tools.WebSearch
	if ws.Provider == "" {
		return out, nil
	}
	p, err := web.NewProvider(ws.Provider, ws.APIKey, ws.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("tools.web_search: %w", err)
	}
	return append(out, web.SearchTool(p, ws.MaxResults), web.ImageSearchTool(p, ws.MaxResults)), nil
}

func loopLimits(cfg *config.Config) loopdetect.Limits {
	ld := cfg.Agent.LoopDetection
	return loopdetect.Limits{Window: ld.Window, WarnRepeats: ld.WarnRepeats, StopRepeats: ld.StopRepeats, ToolWarn: ld.ToolWarn, ToolStop: ld.ToolStop}
}

func summarizeOptions(cfg *config.Config, models []agent.ModelRef) *agent.Summarize {
	sm := cfg.Agent.Summarization
	if !sm.Enabled {
		return nil
	}
	return &agent.Summarize{TriggerTokens: sm.TriggerTokens, Fraction: sm.TriggerFraction, Keep: sm.KeepMessages, Model: modelNamed(models, sm.Model)}
}

// modelNamed returns the model called name, or nil for "" (or an unknown
// name, which validation has refused).
func modelNamed(models []agent.ModelRef, name string) *agent.ModelRef {
	for i := range models {
		if name != "" && models[i].Name == name {
			return &models[i]
		}
	}
	return nil
}

// turnContext is what a run's user message comes with in the model's view:
// the sender's memory, the skill the message activated and the
// conversation's goal (/goal).
func (a *app) turnContext(_ context.Context, in *agent.Input) string {
	var parts []string
	if a.memory != nil {
		if b := a.memory.Block(memoryKeys(in)); b != "" {
			parts = append(parts, b)
		}
	}
	if in.Skill != "" {
		if text, _, ok := a.skills.Activation(in.Skill); ok {
			parts = append(parts, text)
		}
	}
	if g := a.plan.GoalContext(in.ChatKey); g != "" {
		parts = append(parts, g)
	}
	if n := a.mcp.Note(); n != "" { // servers not ready, by name
		parts = append(parts, n)
	}
	return strings.Join(parts, "\n\n")
}

// publicSkillsDir is where the built-in skills are unpacked for the
// sandbox.
func publicSkillsDir(dataDir string) string { return filepath.Join(dataDir, "skills", "public") }

// shutdown stops intake, lets running turns finish for up to grace, then
// cancels the rest (they record their state), runs the waiting memory
// updates and closes the store. Everything after the grace period gets at
// most shutdownTail.
func (a *app) shutdown(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace+shutdownTail)
	defer cancel()
	if a.scheduler != nil {
		a.scheduler.Close() // no new scheduled runs
	}
	a.runner.Close(ctx, grace, errShutdown) // no new runs; the running ones may finish for grace
	a.router.Close(ctx)                     // their ends are shown
	if a.api != nil {
		a.api.Close() // after the runs recorded their state: the streams end
	}
	if a.memory != nil {
		a.memory.Flush(ctx) // the exchanges that have waited for quiet
	}
	if a.mcp != nil {
		a.mcpStop()
		a.mcp.Close()
	}
	select {
	case <-a.bgGo: // unpacking started: let it finish
		select {
		case <-a.unpacked:
		case <-ctx.Done():
		}
	default:
	}
	if err := a.store.Close(); err != nil {
		a.log.Error("closing store", "err", err)
	}
}

// abandon closes an app that never started: nothing ran, so nothing is
// waited for or flushed.
func (a *app) abandon() {
	if a.mcp != nil {
		a.mcpStop()
		a.mcp.Close()
	}
	if err := a.store.Close(); err != nil {
		a.log.Error("closing store", "err", err)
	}
}

// shutdownTail bounds the work after the grace period: cancelled runs
// recording their state, memory updates, closing MCP servers.
const shutdownTail = 10 * time.Second

var errShutdown = errors.New("deerflow is shutting down")

// newMemory builds long-term memory, updated by the default model.
func newMemory(cfg *config.Config, st *store.Store, model agent.ModelRef, log *slog.Logger) (*memory.Manager, error) {
	return memory.New(memory.Options{
		Store:    st,
		Model:    model.Model,
		ModelID:  model.ID,
		Scope:    cfg.Memory.Scope,
		Debounce: time.Duration(cfg.Memory.DebounceSeconds) * time.Second,
		Logger:   log,
	})
}

// newSubagents builds the subagent manager over the lead's tools.
func newSubagents(cfg *config.Config, st *store.Store, models []agent.ModelRef, lead *tools.Registry, sb *sandbox.Manager, log *slog.Logger, met *metrics.Metrics) (*subagents.Manager, error) {
	sc := cfg.Subagents
	types := make([]subagents.Type, len(sc.Types))
	for i, t := range sc.Types {
		types[i] = subagents.Type{
			Name: t.Name, Description: t.Description, SystemPrompt: t.SystemPrompt,
			Tools: t.Tools, DisallowedTools: t.DisallowedTools, Model: t.Model,
			MaxTurns: t.MaxTurns, Timeout: time.Duration(t.TimeoutSeconds) * time.Second,
		}
	}
	working := sb.PromptSection()
	return subagents.New(subagents.Options{
		Store:          st,
		Models:         models,
		Tools:          lead,
		Types:          types,
		Sections:       []agent.Section{{Name: agent.SectionWorkingDir, Text: agent.Static(working)}},
		MaxPerResponse: sc.MaxPerResponse,
		MaxPerRun:      sc.MaxPerRun,
		MaxRunning:     sc.MaxRunning,
		Timeout:        time.Duration(sc.TimeoutSeconds) * time.Second,
		ToolTimeout:    time.Duration(cfg.Agent.ToolTimeoutSeconds) * time.Second,
		Middlewares:    guard.FromConfig(agent.DefaultChain(), cfg, sb),
		Logger:         log,
		Metrics:        met,
	})
}

func modelRefs(cfg *config.Config, log *slog.Logger) []agent.ModelRef {
	refs := make([]agent.ModelRef, 0, len(cfg.Models))
	for _, m := range cfg.Models {
		name := m.Name
		client := llm.New(modelOptions(m, func(ctx context.Context, format string, args ...any) {
			log.WarnContext(ctx, fmt.Sprintf(format, args...), "model", name)
		}))
		refs = append(refs, agent.ModelRef{
			Name: m.Name, ID: m.Model, Description: m.Description, Model: client,
			MaxTokens: m.MaxTokens, Temperature: m.Temperature,
			ContextWindow: m.ContextWindow, Vision: m.SupportsVision,
			Price: agent.Price{In: m.PriceIn, Out: m.PriceOut},
		})
	}
	return refs
}

// researchSection tells the lead when to propose /research.
const researchSection = `<research>
When a request calls for in-depth research across many sources (a market or literature overview, a comparison of options with evidence, the state of a field), suggest that the person send /research <topic>: they review the outline first, its parts are researched in parallel and the write-up cites the pages read (/research auto <topic> starts at once). For a quick question, just answer.
</research>`

func prompt(cfg *config.Config, sb *sandbox.Manager) *agent.Prompt {
	p := agent.DefaultPrompt(cfg.Agent.Name)
	section := sb.PromptSection()
	p.SetSection(agent.SectionWorkingDir, func(context.Context, *agent.Input) string { return section })
	if soul := strings.TrimSpace(cfg.Agent.Soul); soul != "" {
		p.SetSection(agent.SectionSoul, func(context.Context, *agent.Input) string {
			return "<soul>\n" + soul + "\n</soul>"
		})
	}
	return p
}
