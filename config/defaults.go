package config

// Defaults for keys that are absent or zero. Bools that default to true
// (sandbox.network, memory.enabled, research.enabled) apply only when the
// key is absent, so an explicit false is kept.
const (
	defaultDataDir     = "./.deerflow"
	defaultBaseURL     = "https://api.openai.com/v1"
	defaultTelegramURL = "https://api.telegram.org"
	defaultSlackURL    = "https://slack.com/api/"
	defaultLarkDomain  = "https://open.feishu.cn"
)

func (c *Config) applyDefaults(lookup lookupFunc) {
	env := func(s string) string { v, _ := expand(s, lookup); return v }

	c.envDefaults(lookup)
	defString(&c.DataDir, defaultDataDir)
	defString(&c.Log.Level, "info")
	defString(&c.Log.Format, "text")
	c.modelDefaults(env)
	c.agentDefaults()
	c.channelDefaults(env)
	c.sandboxDefaults()
	c.featureDefaults()
	c.schedulerDefaults()
	c.uploadsDefaults(env)
	c.agentsDefaults()
}

// defString sets *p to def when it is empty.
func defString(p *string, def string) {
	if *p == "" {
		*p = def
	}
}

// defInt sets *p to def when it is zero.
func defInt(p *int, def int) {
	if *p == 0 {
		*p = def
	}
}

// modelDefaults gives a config without models one from the OPENAI_*
// environment, and every model its defaults.
func (c *Config) modelDefaults(env func(string) string) {
	if len(c.Models) == 0 {
		c.Models = []Model{{
			Name:    "default",
			Model:   env("${OPENAI_MODEL:-gpt-4o-mini}"),
			BaseURL: env("${OPENAI_BASE_URL:-" + defaultBaseURL + "}"),
			APIKey:  env("$OPENAI_API_KEY"),
		}}
		if c.Models[0].APIKey == "" {
			c.noteUnset("models[0].api_key", "OPENAI_API_KEY")
		}
	}
	for i := range c.Models {
		m := &c.Models[i]
		defString(&m.Name, m.Model)
		defString(&m.BaseURL, defaultBaseURL)
		defInt(&m.TimeoutSeconds, 600)
		switch {
		case !c.given(index("models", i) + ".max_retries"):
			m.MaxRetries = 3
		case m.MaxRetries < 0:
			m.MaxRetries = 0 // documented: negative means no retries
		}
	}
}

func (c *Config) agentDefaults() {
	defString(&c.Agent.Name, "DeerFlow")
	defInt(&c.Agent.MaxTurns, 100)
	defInt(&c.Agent.ToolTimeoutSeconds, 600)
	if c.Agent.ToolOutputShare == 0 {
		c.Agent.ToolOutputShare = 0.1
	}
	defInt(&c.Agent.ToolFailureLimit, 3)
	defInt(&c.Router.MaxQueued, 20)
	if !c.given("shutdown.grace_seconds") {
		c.Shutdown.GraceSeconds = 30
	}
	if !c.given("agent.summarization.enabled") {
		c.Agent.Summarization.Enabled = true
	}
	defInt(&c.Agent.Summarization.TriggerTokens, 32000)
	if c.Agent.Summarization.TriggerFraction == 0 {
		c.Agent.Summarization.TriggerFraction = 0.8
	}
	defInt(&c.Agent.Summarization.KeepMessages, 10)
	ld := &c.Agent.LoopDetection
	defInt(&ld.Window, 20)
	defInt(&ld.WarnRepeats, 3)
	defInt(&ld.StopRepeats, 5)
	defInt(&ld.ToolWarn, 30)
	defInt(&ld.ToolStop, 50)
}

func (c *Config) sandboxDefaults() {
	if !c.given("sandbox.network") {
		c.Sandbox.Network = true
	}
	defInt(&c.Sandbox.BashTimeoutSeconds, 600)
	defInt(&c.Sandbox.MaxUploadMB, 50)
	defInt(&c.Sandbox.Limits.MemoryMB, 1024)
	defInt(&c.Sandbox.Limits.Processes, 256)
	defInt(&c.Sandbox.Limits.DiskMB, 2048)
	defInt(&c.Sandbox.Limits.TmpMB, 256)
}

// featureDefaults covers subagents, research, memory, skills and tools.
func (c *Config) featureDefaults() {
	defInt(&c.Subagents.MaxPerResponse, 3)
	defInt(&c.Subagents.MaxPerRun, 6)
	defInt(&c.Subagents.MaxRunning, 16)
	defInt(&c.Subagents.TimeoutSeconds, 1800)

	if !c.given("mcp.defer_threshold") {
		c.MCP.DeferThreshold = 20
	}
	if !c.given("research.enabled") {
		c.Research.Enabled = true
	}
	if !c.given("research.max_clarifications") {
		c.Research.MaxClarifications = 2
	}
	defInt(&c.Research.MaxSteps, 5)
	if !c.given("research.max_plan_iterations") {
		c.Research.MaxPlanIterations = 3
	}

	if !c.given("memory.enabled") {
		c.Memory.Enabled = true
	}
	defString(&c.Memory.Scope, "user")
	defInt(&c.Memory.DebounceSeconds, 30)

	defString(&c.Skills.Path, "./skills")
	c.webDefaults()
}
