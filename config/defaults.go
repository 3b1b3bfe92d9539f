package config

import (
	"strings"
)

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

// channelDefaults: tokens come from the environment when not written, but
// a channel starts only when enabled.
func (c *Config) channelDefaults(env func(string) string) {
	defString(&c.Channels.Telegram.BotToken, env("$TELEGRAM_BOT_TOKEN"))
	defString(&c.Channels.Slack.BotToken, env("$SLACK_BOT_TOKEN"))
	defString(&c.Channels.Slack.AppToken, env("$SLACK_APP_TOKEN"))
	defString(&c.Channels.Lark.AppID, env("$LARK_APP_ID"))
	defString(&c.Channels.Lark.AppSecret, env("$LARK_APP_SECRET"))
	defString(&c.Channels.Telegram.APIURL, defaultTelegramURL)
	defString(&c.Channels.Slack.APIURL, defaultSlackURL)
	if !strings.HasSuffix(c.Channels.Slack.APIURL, "/") {
		c.Channels.Slack.APIURL += "/" // the Slack client joins method names onto it
	}
	defString(&c.Channels.Lark.Domain, defaultLarkDomain)
	c.limitDefaults()

	defString(&c.Console.User, env("$USER"))
	defString(&c.Console.User, "local")
}

// Each platform's documented limits (see config.yaml.example for the
// sources), the defaults of channels.*.limits.
var (
	defaultTelegramLimits = TelegramLimits{PerChatPerSecond: 1, PerChatBurst: 4, PerGroupPerMinute: 20, GlobalPerSecond: 30}
	defaultSlackLimits    = SendLimits{PerChatPerSecond: 1, PerChatBurst: 3}
	defaultLarkLimits     = SendLimits{PerChatPerSecond: 5, PerChatBurst: 1, GlobalPerSecond: 16}
)

// limitDefaults fills the absent channels.*.limits keys; a written 0 is
// kept (it turns that limit off).
func (c *Config) limitDefaults() {
	tg, def := &c.Channels.Telegram.Limits, defaultTelegramLimits
	const k = "channels.telegram.limits."
	defUnless(c, &tg.PerChatPerSecond, k+"per_chat_per_second", def.PerChatPerSecond)
	defUnless(c, &tg.PerChatBurst, k+"per_chat_burst", def.PerChatBurst)
	defUnless(c, &tg.PerGroupPerMinute, k+"per_group_per_minute", def.PerGroupPerMinute)
	defUnless(c, &tg.GlobalPerSecond, k+"global_per_second", def.GlobalPerSecond)
	c.sendLimitDefaults(&c.Channels.Slack.Limits, "channels.slack.limits.", defaultSlackLimits)
	c.sendLimitDefaults(&c.Channels.Lark.Limits, "channels.lark.limits.", defaultLarkLimits)
}

func (c *Config) sendLimitDefaults(l *SendLimits, k string, def SendLimits) {
	defUnless(c, &l.PerChatPerSecond, k+"per_chat_per_second", def.PerChatPerSecond)
	defUnless(c, &l.PerChatBurst, k+"per_chat_burst", def.PerChatBurst)
	defUnless(c, &l.GlobalPerSecond, k+"global_per_second", def.GlobalPerSecond)
}

// defUnless sets *p to def when key was not written (a written 0 stays).
func defUnless[T int | float64](c *Config, p *T, key string, def T) {
	if !c.given(key) {
		*p = def
	}
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
	defInt(&c.Tools.WebFetch.MaxChars, 4096)
	defInt(&c.Tools.WebFetch.TimeoutSeconds, 20)
	defInt(&c.Tools.WebSearch.MaxResults, 5)
}
