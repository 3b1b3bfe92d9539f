package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deerflow/deerflow/agents"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/redact"
	"github.com/deerflow/deerflow/mcp/oauth"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/scheduler"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
)

// check prints what serve and chat would start with cfg (already
// validated). It changes nothing on disk. Secrets are never printed.
func check(cfg *config.Config, used string, stdout io.Writer) int {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	printConfig(w, cfg, used)
	// The sandbox is built in a scratch directory: check changes nothing.
	scratch, err := os.MkdirTemp("", "deerflow-check")
	if err == nil {
		defer os.RemoveAll(scratch)
		var sb *sandbox.Manager
		if sb, err = newSandbox(cfg, scratch); err == nil {
			printSandbox(w, sb)
			toolNames, skillNames := printTools(w, cfg, sb)
			if problems := agents.Check(cfg, toolNames, skillNames); len(problems) > 0 {
				w.Flush()
				fmt.Fprintf(stdout, "agents: %s\n", strings.Join(problems, "\nagents: "))
				return 1
			}
			printAgents(w, cfg)
		}
	}
	if err != nil {
		w.Flush()
		fmt.Fprintf(stdout, "sandbox: %v\n", err)
		return 1
	}
	if len(cfg.MCP.Servers) > 0 {
		printMCP(w, cfg, scratch)
	}
	w.Flush()
	return 0
}

// printConfig says where the config came from and what it sets up before
// the sandbox: store, models, channels, agent, HTTP and shutdown.
func printConfig(w io.Writer, cfg *config.Config, used string) {
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
	for _, c := range channelSwitches(cfg) {
		state := "disabled"
		if c.enabled {
			state = "enabled, " + c.detail + ", " + whoMay(c.allowed)
		}
		fmt.Fprintf(w, "channel\t%s: %s\n", c.name, state)
		if c.enabled {
			fmt.Fprintf(w, "channel\t%s limits: %s\n", c.name, describeLimits(c.limits, c.groups))
		}
	}
	fmt.Fprintf(w, "channel\tconsole: available through `deerflow chat`\n")
	fmt.Fprintf(w, "agent\t%s, up to %d model calls per message, %d messages queued per conversation\n",
		cfg.Agent.Name, cfg.Agent.MaxTurns, cfg.Router.MaxQueued)
	printScheduler(w, cfg.Scheduler)
	printUploads(w, cfg)
	printHTTP(w, cfg)
	fmt.Fprintf(w, "shutdown\trunning replies get %d s to finish on SIGTERM\n", cfg.Shutdown.GraceSeconds)
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
		fmt.Fprintf(w, "model\t%s%s: %s at %s, %s\n", m.Name, role, m.Model, redact.URLs(m.BaseURL), key)
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

// printTools lists the lead's tools and what the web tools, skills,
// subagents and research are set to, with the tools of sb.
func printTools(w io.Writer, cfg *config.Config, sb *sandbox.Manager) (toolNames, skillNames []string) {
	reg := tools.NewRegistry(sb.Tools()...)
	types := []string{subagents.GeneralPurpose}
	if _, ok := reg.Get("bash"); ok {
		types = append(types, subagents.Bash)
	}
	for _, t := range cfg.Subagents.Types {
		types = append(types, t.Name)
	}
	if wt, err := newWebTools(cfg); err == nil {
		for _, t := range wt {
			reg.Add(t)
		}
	}
	reg.Add(tools.Clarify())
	names := append(reg.Names(), subagents.ToolName)
	if cfg.SkillEvo.Enabled {
		names = append(names, skills.ManageTool)
	}
	if cfg.Scheduler.Enabled {
		names = append(names, scheduler.ToolSchedule, scheduler.ToolList, scheduler.ToolCancel)
	}
	fmt.Fprintf(w, "tools\t%s\n", strings.Join(names, ", "))
	fetch := "private and local addresses refused"
	if cfg.Tools.WebFetch.AllowPrivateAddresses {
		fetch = "private and local addresses ALLOWED"
	}
	search := "web_search and image_search off (tools.web_search.provider: none)"
	if p := cfg.Tools.WebSearch.Provider; p != "" {
		search = "web_search and image_search with " + p
	}
	fmt.Fprintf(w, "web\tweb_fetch (%s); %s\n", fetch, search)
	skillNames = printSkills(w, cfg)
	sc := cfg.Subagents
	fmt.Fprintf(w, "subagents\t%s; %d per response, %d per message, %d running at once, %d s timeout\n",
		strings.Join(types, ", "), sc.MaxPerResponse, sc.MaxPerRun, sc.MaxRunning, sc.TimeoutSeconds)
	if r := cfg.Research; r.Enabled {
		fmt.Fprintf(w, "research\t/research on: up to %d questions, %d steps per plan, %d plan revisions\n",
			r.MaxClarifications, r.MaxSteps, r.MaxPlanIterations)
	} else {
		fmt.Fprintf(w, "research\toff (research.enabled is false)\n")
	}
	return names, skillNames
}

// printSkills lists the skills found, the ones skipped and why, and
// whether the agent may write its own.
func printSkills(w io.Writer, cfg *config.Config) (names []string) {
	all, problems := skills.List(cfg.Skills.Path)
	var loaded []string
	for _, s := range all {
		loaded = append(loaded, s.Name+" ("+s.Source()+")")
		names = append(names, s.Name)
	}
	fmt.Fprintf(w, "skills\t%s; custom ones from %s\n", strings.Join(loaded, ", "), cfg.Skills.Path)
	for _, p := range problems {
		fmt.Fprintf(w, "skills\tskipped %s\n", p)
	}
	if cfg.SkillEvo.Enabled {
		fmt.Fprintf(w, "skills\tskill_manage is on: the agent may write custom skills (each write is checked)\n")
	}
	return names
}

// printMCP connects to each MCP server once, in a sandbox in the scratch
// directory, and lists its tools.
func printMCP(w io.Writer, cfg *config.Config, scratch string) {
	sb, err := newSandbox(cfg, scratch)
	if err != nil {
		return
	}
	m := newMCP(&config.Config{MCP: cfg.MCP, DataDir: scratch}, sb, oauth.ForCheck(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	for _, st := range m.Inventory(ctx) {
		if st.Err != nil {
			fmt.Fprintf(w, "mcp\t%s%s: unavailable: %s\n", st.Server, where(cfg, st.Server), redact.URLs(st.Err.Error()))
		} else {
			fmt.Fprintf(w, "mcp\t%s%s: %s\n", st.Server, where(cfg, st.Server), strings.Join(st.Tools, ", "))
		}
	}
	cancel()
	m.Close()
}

// printSandbox says how bash runs and, in bubblewrap, with what network
// and limits.
func printSandbox(w io.Writer, sb *sandbox.Manager) {
	ok, how := sb.BashStatus()
	fmt.Fprintf(w, "bash\t%s\n", how)
	if ok && !strings.HasPrefix(how, "host") {
		_, net := sb.NetworkStatus()
		fmt.Fprintf(w, "sandbox network\t%s\n", net)
		fmt.Fprintf(w, "sandbox limits\t%s\n", sb.LimitsStatus())
	}
}

// where says how a stdio MCP server runs: " (sandboxed)" or " (on this
// machine: sandbox: false)"; "" for an HTTP server.
func where(cfg *config.Config, server string) string {
	for _, s := range cfg.MCP.Servers {
		switch {
		case s.Name != server || s.Command == "":
		case s.Sandbox != nil && !*s.Sandbox:
			return " (on this machine: sandbox: false)"
		default:
			return " (sandboxed)"
		}
	}
	return ""
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
