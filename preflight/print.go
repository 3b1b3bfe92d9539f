package preflight

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
)

// printConfig says where the config came from and what it sets up before
// the sandbox: store, models, channels, agent, HTTP and shutdown.
func printConfig(w io.Writer, cfg *config.Config, used string, o Options) {
	src := used
	if src == "" {
		src = "built-in defaults and the environment (no config.yaml found)"
	}
	fmt.Fprintf(w, "config\t%s: valid\n", src)
	db := cfg.DBPath()
	if _, err := os.Stat(db); err == nil {
		fmt.Fprintf(w, "store\t%s\n", db)
	} else {
		fmt.Fprintf(w, "store\t%s (will be created)\n", db)
	}
	printModels(w, cfg)
	printChannels(w, cfg)
	fmt.Fprintf(w, "agent\t%s, up to %d model calls per message, %d messages queued per conversation\n",
		cfg.Agent.Name, cfg.Agent.MaxTurns, cfg.Router.MaxQueued)
	printScheduler(w, cfg.Scheduler)
	if o.Uploads != nil {
		o.Uploads(w, cfg)
	}
	printHTTP(w, cfg)
	fmt.Fprintf(w, "shutdown\trunning replies get %d s to finish on SIGTERM\n", cfg.Shutdown.GraceSeconds)
}

// printChannels lists every bot, enabled or not, with who may use it and
// how fast it sends.
func printChannels(w io.Writer, cfg *config.Config) {
	for _, in := range cfg.AllChannelInstances() {
		if !in.Enabled {
			fmt.Fprintf(w, "channel\t%s: disabled\n", in.Name)
			continue
		}
		var detail string
		var limits channels.Limits
		groups := false
		switch {
		case in.Telegram != nil:
			detail, limits, groups = "at "+in.Telegram.APIURL, telegramLimits(in.Telegram.Limits), true
		case in.Slack != nil:
			detail, limits = "Socket Mode, Web API at "+in.Slack.APIURL, sendLimits(in.Slack.Limits)
		default:
			detail, limits = "long connection at "+in.Lark.Domain, sendLimits(in.Lark.Limits)
		}
		fmt.Fprintf(w, "channel\t%s: enabled, %s, %s\n", in.Name, detail, whoMay(len(in.AllowedUsers)))
		fmt.Fprintf(w, "channel\t%s limits: %s\n", in.Name, describeLimits(limits, groups))
	}
	fmt.Fprintf(w, "channel\tconsole: available through `deerflow chat`\n")
}

// telegramLimits and sendLimits are the limits of ours a channel keeps
// to, from channels.*.limits.
func telegramLimits(l config.TelegramLimits) channels.Limits {
	return channels.Limits{PerChatPerSecond: l.PerChatPerSecond, PerChatBurst: l.PerChatBurst,
		PerGroupPerMinute: l.PerGroupPerMinute, GlobalPerSecond: l.GlobalPerSecond}
}

func sendLimits(l config.SendLimits) channels.Limits {
	return channels.Limits{PerChatPerSecond: l.PerChatPerSecond, PerChatBurst: l.PerChatBurst, GlobalPerSecond: l.GlobalPerSecond}
}

// printScheduler says whether tasks can be scheduled, and within what.
func printScheduler(w io.Writer, s config.Scheduler) {
	if !s.Enabled {
		fmt.Fprintf(w, "scheduler\toff (scheduler.enabled: false)\n")
		return
	}
	fmt.Fprintf(w, "scheduler\ton: runs at least %d s apart, %d tasks per person, paused after %d failed runs in a row, cron in %s unless a task names its zone\n",
		s.MinIntervalSeconds, s.MaxPerUser, s.MaxFailures, s.Timezone)
}

// printModels lists the models, the default first, and whether each has
// an API key (never the key).
func printModels(w io.Writer, cfg *config.Config) {
	for i, m := range cfg.Models {
		role := ""
		if i == 0 {
			role = " (default)"
		}
		key := "api key set"
		if m.APIKey == "" {
			key = "no api key"
			if u, err := url.Parse(m.BaseURL); err == nil && u.Host == "api.openai.com" {
				key = "no api key: set OPENAI_API_KEY or models[" + fmt.Sprint(i) + "].api_key"
			}
		}
		vision := ""
		if m.SupportsVision {
			vision = ", sees images"
		}
		fmt.Fprintf(w, "model\t%s%s: %s at %s, %s%s\n", m.Name, role, m.Model, redact.URLs(m.BaseURL), key, vision)
	}
}

// printHTTP says what the HTTP listener serves.
func printHTTP(w io.Writer, cfg *config.Config) {
	if cfg.HTTP.Listen == "" {
		fmt.Fprintf(w, "http\toff (set http.listen for /healthz and /metrics)\n")
		return
	}
	fmt.Fprintf(w, "http\t/healthz and /metrics on %s\n", cfg.HTTP.Listen)
	if cfg.HTTP.APIToken != "" {
		fmt.Fprintf(w, "http\tthe HTTP API under /api (bearer token set)\n")
	} else {
		fmt.Fprintf(w, "http\tthe HTTP API is off (set http.api_token)\n")
	}
}

// describeLimits says how fast a channel lets itself send, from its
// limits; a 0 is "no limit of ours".
func describeLimits(l channels.Limits, groups bool) string {
	perChat := "no limit of ours per chat"
	if l.PerChatPerSecond > 0 {
		perChat = fmt.Sprintf("%g/s per chat in bursts of %d", l.PerChatPerSecond, max(l.PerChatBurst, 1))
	}
	parts := []string{perChat}
	if groups {
		group := "no limit of ours per group"
		if l.PerGroupPerMinute > 0 {
			group = fmt.Sprintf("%g/min per group", l.PerGroupPerMinute)
		}
		parts = append(parts, group)
	}
	global := "no limit of ours overall"
	if l.GlobalPerSecond > 0 {
		global = fmt.Sprintf("%g/s overall", l.GlobalPerSecond)
	}
	parts = append(parts, global)
	return strings.Join(parts, ", ") + " (the platform's 429s are waited out too)"
}

// whoMay describes an allow-list.
func whoMay(allowed int) string {
	if allowed == 0 {
		return "open to everyone"
	}
	return fmt.Sprintf("%d allowed user(s)", allowed)
}
