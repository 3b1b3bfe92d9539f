package main

import (
	"context"
	"strings"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/agent/guard"
	"github.com/deerflow/deerflow/choice"
	"github.com/deerflow/deerflow/mcp/oauth"
	"github.com/deerflow/deerflow/memory"
	"github.com/deerflow/deerflow/plan"
	"github.com/deerflow/deerflow/research"
	"github.com/deerflow/deerflow/router"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/scheduler"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents/acp"
	"github.com/deerflow/deerflow/tools"
	"github.com/deerflow/deerflow/tools/imagegen"
	"github.com/deerflow/deerflow/tools/toolsearch"
)

// wire builds everything on top of the store: sandbox and tools, skills,
// subagents, memory, the agent and the bus. The order matters where one
// part is built from another; each step below says what it needs.
func (a *app) wire() error {
	cfg := a.cfg
	a.unpackSkills()
	sb, err := newSandbox(cfg, cfg.DataDir)
	if err != nil {
		return err
	}
	a.sandbox = sb
	a.reportSandbox()
	models := modelRefs(cfg, a.log)
	if err := a.wireTools(models); err != nil { // needs the sandbox
		return err
	}
	a.wireAgents(models)                        // needs the tools and skills
	if err := a.wireAgent(models); err != nil { // needs the tools, subagents and skills
		return err
	}
	if a.runner, err = runner.New(runner.Options{
		Store: a.store, Logger: a.log, MaxQueued: cfg.Router.MaxQueued,
		Forget: a.agent.ForgetHistory, Stop: a.agent.StopAll,
	}); err != nil {
		return err
	}
	if err := a.wireScheduler(); err != nil { // needs the runner and the tools
		return err
	}
	if err := a.wireResearch(); err != nil { // needs the agent and subagents
		return err
	}
	a.startMCP()
	if err := a.wireRouter(); err != nil { // needs the agent, runner, memory, research
		return err
	}
	a.metrics.QueueDepth(a.runner.Depth)
	return a.newAPI(sb)
}

// unpackSkills unpacks the built-in skills for the sandbox once
// background work may run (file by file, each replaced atomically):
// nothing at start needs them on disk, and a restart finds them
// unchanged. a.unpacked is closed when it is done.
func (a *app) unpackSkills() {
	a.unpacked = make(chan struct{})
	go func() {
		defer close(a.unpacked)
		<-a.bgGo
		if err := skills.Extract(publicSkillsDir(a.cfg.DataDir)); err != nil {
			a.log.Error("unpacking the built-in skills; /mnt/skills/public may be incomplete", "err", err)
		}
	}()
}

// reportSandbox logs how bash runs once the sandbox's background check of
// bubblewrap tells.
func (a *app) reportSandbox() {
	cfg, log, sb := a.cfg, a.log, a.sandbox
	go func() {
		<-a.bgGo
		ok, how := sb.BashStatus()
		switch {
		case ok && strings.HasPrefix(how, "host"):
			log.Warn("bash runs on the host WITHOUT isolation (sandbox.allow_host_bash: true); only let trusted users talk to this deerflow", "bash", how)
		case !ok:
			log.Warn("the bash tool is off", "bash", how)
		default:
			logSandbox(log, cfg, sb)
		}
	}()
}

// wireTools builds the lead's tool registry: the sandbox's tools,
// clarification, the web tools, then the subagents (over the tools so
// far) and the skills, each adding its own tool.
func (a *app) wireTools(models []agent.ModelRef) error {
	cfg, st := a.cfg, a.store
	a.tools, a.asks = tools.NewRegistry(a.sandbox.Tools()...), choice.NewAsks(st, nil)
	a.tools.Add(tools.Clarify())
	webTools, err := newWebTools(cfg)
	if err != nil {
		return err
	}
	for _, t := range webTools {
		a.tools.Add(t)
	}
	if a.subagents, err = newSubagents(cfg, st, models, a.tools, a.sandbox, a.log, a.metrics); err != nil {
		return err
	}
	a.tools.Add(a.subagents.Tool())
	if t := imagegen.FromConfig(cfg, a.sandbox); t != nil {
		a.tools.Add(t)
	}
	if t := acp.FromConfig(cfg, a.sandbox, a.asks.Ask, a.log); t != nil {
		a.tools.Add(t)
	}
	if a.skills, err = skills.New(skills.Options{
		Store: st, CustomDir: cfg.Skills.Path, Admins: cfg.Skills.Admins,
		Evolution: cfg.SkillEvo.Enabled, Model: models[0].Model, ModelID: models[0].ID, Logger: a.log,
	}); err != nil {
		return err
	}
	if t := a.skills.Tool(); t != nil {
		a.tools.Add(t)
	}
	// The checklist, offered only where plan mode is on (router.Options.Plan).
	a.plan = plan.New(st, cfg.Agent.PlanMode)
	a.tools.Add(a.plan.Tool())
	return nil
}

// wireAgent builds the lead agent, with memory when it is enabled.
func (a *app) wireAgent(models []agent.ModelRef) error {
	cfg := a.cfg
	p := prompt(cfg, a.sandbox)
	p.SetSection(agent.SectionSubagents, a.subagents.PromptSection())
	sk := a.skills
	p.SetSection(agent.SectionSkills, func(_ context.Context, in *agent.Input) string {
		if in.Persona != nil {
			return sk.PromptSectionOf(in.Persona.Skills)
		}
		return sk.PromptSection()
	})
	opts := agent.Options{
		Deferred:         a.toolSearch(),
		Store:            a.store,
		Metrics:          a.metrics,
		Models:           models,
		Tools:            a.tools,
		Prompt:           p,
		MaxTurns:         cfg.Agent.MaxTurns,
		ToolTimeout:      time.Duration(cfg.Agent.ToolTimeoutSeconds) * time.Second,
		Logger:           a.log,
		Middlewares:      guard.FromConfig(agent.Chain(loopLimits(cfg)), cfg, a.sandbox),
		Summarize:        summarizeOptions(cfg, models),
		TitleModel:       modelNamed(models, cfg.Agent.TitleModel),
		DailyTokenBudget: cfg.Agent.DailyTokenBudget,
		AllowedTools: func(in *agent.Input) []string {
			if in.Skill == "" {
				return nil
			}
			_, allowed, _ := sk.Activation(in.Skill)
			return allowed
		},
	}
	if cfg.Memory.Enabled {
		var err error
		if a.memory, err = newMemory(cfg, a.store, models[0], a.log); err != nil {
			return err
		}
		mem := a.memory
		opts.OnAnswer = func(tx *store.Tx, in *agent.Input, answer string) error {
			user, chat := memoryKeys(in)
			return mem.Record(tx, user, chat, in.ThreadID, in.RunID, in.Text, answer)
		}
		p.SetSection(agent.SectionMemory, agent.Static(memory.PromptSection))
	}
	opts.TurnContext = a.turnContext
	p.SetSection("plan_mode", planSection(a.plan))
	if cfg.Research.Enabled {
		p.SetSection("research", agent.Static(researchSection))
	}
	if cfg.Scheduler.Enabled {
		p.SetSection("scheduled_tasks", agent.Static(scheduler.PromptSection))
	}
	var err error
	a.agent, err = agent.New(opts)
	return err
}

// planSection is the prompt's note on keeping the checklist, in the
// conversations where plan mode is on.
func planSection(book *plan.Book) func(context.Context, *agent.Input) string {
	return func(_ context.Context, in *agent.Input) string {
		if book.On(in.ChatKey) {
			return plan.PromptNote
		}
		return ""
	}
}

// wireResearch builds the researcher when research is enabled.
func (a *app) wireResearch() error {
	rc := a.cfg.Research
	if !rc.Enabled {
		return nil
	}
	var err error
	a.research, err = research.New(research.Options{
		Store:             a.store,
		Agent:             a.agent,
		Subagents:         a.subagents,
		MaxClarifications: rc.MaxClarifications,
		MaxSteps:          rc.MaxSteps,
		MaxPlanIterations: rc.MaxPlanIterations,
		SaveReport:        a.sandbox.SaveOutput,
		Logger:            a.log,
	})
	return err
}

// startMCP connects the configured MCP servers in the background; their
// tools join the registry as they become known.
func (a *app) startMCP() {
	if len(a.cfg.MCP.Servers) == 0 {
		return
	}
	a.mcp = newMCP(a.cfg, a.sandbox, oauth.NewTokens(oauth.TokensOptions{Store: a.store, DataDir: a.cfg.DataDir, Logger: a.log}), a.log)
	ctx, cancel := context.WithCancel(context.Background())
	a.mcpStop = cancel
	a.mcp.Start(ctx, a.tools)
}

// wireRouter builds the router that turns chat messages into runs.
func (a *app) wireRouter() error {
	sb := a.sandbox
	bo := router.Options{
		Store:       a.store,
		Agent:       a.agent,
		Runner:      a.runner,
		Logger:      a.log,
		Version:     versionString(),
		SaveUpload:  a.newIntake(),
		UploadsNote: sandbox.UploadsNote,
		Skills:      a.skills,
		Agents:      a.agents,
		Reopen:      sb.Reopen,
		Health:      a.health,
		Plan:        a.plan,
		Asks:        a.asks,
	}
	if a.memory != nil {
		bo.Memory = a.memory
	}
	if a.research != nil {
		bo.Research = a.research
	}
	if a.scheduler != nil {
		bo.Schedules = a.scheduler
	}
	var err error
	a.router, err = router.New(bo)
	return err
}

// toolSearch adds tool_search: MCP tools beyond mcp.defer_threshold wait
// for it (see toolsearch). It returns the agent's Deferred.
func (a *app) toolSearch() func(string) bool {
	search := toolsearch.New(toolsearch.Options{Tools: a.tools, Threshold: a.cfg.MCP.DeferThreshold,
		Deferrable: func(n string) bool { _, ok := a.mcp.ServerOf(n); return ok }})
	a.tools.Add(search.Tool())
	return search.Deferred
}
