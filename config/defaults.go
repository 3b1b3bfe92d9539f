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
	str := func(p *string, def string) {
		if *p == "" {
			*p = def
		}
	}
	num := func(p *int, def int) {
		if *p == 0 {
			*p = def
		}
	}

	str(&c.DataDir, defaultDataDir)
	str(&c.Log.Level, "info")
	str(&c.Log.Format, "text")

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
		str(&m.Name, m.Model)
		str(&m.BaseURL, defaultBaseURL)
		num(&m.TimeoutSeconds, 600)
		switch {
		case !c.given(index("models", i) + ".max_retries"):
			m.MaxRetries = 3
		case m.MaxRetries < 0:
			m.MaxRetries = 0 // documented: negative means no retries
		}
	}

	str(&c.Agent.Name, "DeerFlow")
	num(&c.Agent.MaxTurns, 100)
	num(&c.Agent.ToolTimeoutSeconds, 600)
	num(&c.Router.MaxQueued, 20)
	if !c.given("shutdown.grace_seconds") {
		c.Shutdown.GraceSeconds = 30
	}
	if !c.given("agent.summarization.enabled") {
		c.Agent.Summarization.Enabled = true
	}
	num(&c.Agent.Summarization.TriggerTokens, 32000)
	if c.Agent.Summarization.TriggerFraction == 0 {
		c.Agent.Summarization.TriggerFraction = 0.8
	}
	num(&c.Agent.Summarization.KeepMessages, 10)
	ld := &c.Agent.LoopDetection
	num(&ld.Window, 20)
	num(&ld.WarnRepeats, 3)
	num(&ld.StopRepeats, 5)
	num(&ld.ToolWarn, 30)
	num(&ld.ToolStop, 50)

	// Tokens come from the environment when not written, but a channel
	// starts only when enabled.
	str(&c.Channels.Telegram.BotToken, env("$TELEGRAM_BOT_TOKEN"))
	str(&c.Channels.Slack.BotToken, env("$SLACK_BOT_TOKEN"))
	str(&c.Channels.Slack.AppToken, env("$SLACK_APP_TOKEN"))
	str(&c.Channels.Lark.AppID, env("$LARK_APP_ID"))
	str(&c.Channels.Lark.AppSecret, env("$LARK_APP_SECRET"))
	str(&c.Channels.Telegram.APIURL, defaultTelegramURL)
	str(&c.Channels.Slack.APIURL, defaultSlackURL)
	if !strings.HasSuffix(c.Channels.Slack.APIURL, "/") {
		c.Channels.Slack.APIURL += "/" // the Slack client joins method names onto it
	}
	str(&c.Channels.Lark.Domain, defaultLarkDomain)

	str(&c.Console.User, env("$USER"))
	str(&c.Console.User, "local")

	if !c.given("sandbox.network") {
		c.Sandbox.Network = true
	}
	num(&c.Sandbox.BashTimeoutSeconds, 600)
	num(&c.Sandbox.MaxUploadMB, 50)
	num(&c.Sandbox.Limits.MemoryMB, 1024)
	num(&c.Sandbox.Limits.Processes, 256)
	num(&c.Sandbox.Limits.DiskMB, 2048)
	num(&c.Sandbox.Limits.TmpMB, 256)

	num(&c.Subagents.MaxPerResponse, 3)
	num(&c.Subagents.MaxPerRun, 6)
	num(&c.Subagents.MaxRunning, 16)
	num(&c.Subagents.TimeoutSeconds, 1800)

	if !c.given("research.enabled") {
		c.Research.Enabled = true
	}
	if !c.given("research.max_clarifications") {
		c.Research.MaxClarifications = 2
	}
	num(&c.Research.MaxSteps, 5)
	if !c.given("research.max_plan_iterations") {
		c.Research.MaxPlanIterations = 3
	}

	if !c.given("memory.enabled") {
		c.Memory.Enabled = true
	}
	str(&c.Memory.Scope, "user")
	num(&c.Memory.DebounceSeconds, 30)

	str(&c.Skills.Path, "./skills")
	num(&c.Tools.WebFetch.MaxChars, 4096)
	num(&c.Tools.WebFetch.TimeoutSeconds, 20)
	num(&c.Tools.WebSearch.MaxResults, 5)
}
