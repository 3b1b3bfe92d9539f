package preflight

import (
	"fmt"
	"io"
	"strings"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/scheduler"
	"github.com/deerflow/deerflow/skills"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
	"github.com/deerflow/deerflow/tools/imagegen"
)

// printTools lists the lead's tools and what the web tools, skills,
// subagents and research are set to, with the tools of sb. It returns
// every tool name (those for vision models too) and skill name, for
// checking the agents.
func printTools(w io.Writer, cfg *config.Config, sb *sandbox.Manager, o Options) (toolNames, skillNames []string) {
	reg := tools.NewRegistry(sb.Tools()...)
	types := []string{subagents.GeneralPurpose}
	if _, ok := reg.Get("bash"); ok {
		types = append(types, subagents.Bash)
	}
	for _, t := range cfg.Subagents.Types {
		types = append(types, t.Name)
	}
	if o.WebTools != nil {
		if wt, err := o.WebTools(cfg); err == nil {
			for _, t := range wt {
				reg.Add(t)
			}
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
	if cfg.ImageGeneration.Model != "" {
		names = append(names, imagegen.Name)
	}
	fmt.Fprintf(w, "tools\t%s\n", strings.Join(shown(cfg, reg, names), ", "))
	printWeb(w, cfg)
	fmt.Fprintln(w, imagegen.Describe(cfg))
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

// shown is names as the models see them: a tool only vision models are
// offered (view_image) is named with those models, and left out when no
// model has supports_vision.
func shown(cfg *config.Config, reg *tools.Registry, names []string) []string {
	var vision []string
	for _, m := range cfg.Models {
		if m.SupportsVision {
			vision = append(vision, m.Name)
		}
	}
	var out []string
	for _, n := range names {
		t, ok := reg.Get(n)
		if v, visual := t.(tools.Visual); !ok || !visual || !v.NeedsVision() {
			out = append(out, n)
		} else if len(vision) > 0 {
			out = append(out, n+" (vision models only: "+strings.Join(vision, ", ")+")")
		}
	}
	return out
}

// printWeb says what web_fetch may reach and which search is on.
func printWeb(w io.Writer, cfg *config.Config) {
	fetch := "private and local addresses refused"
	if cfg.Tools.WebFetch.AllowPrivateAddresses {
		fetch = "private and local addresses ALLOWED"
	}
	search := "web_search and image_search off (tools.web_search.provider: none)"
	if p := cfg.Tools.WebSearch.Provider; p != "" {
		search = "web_search and image_search with " + p
	}
	fmt.Fprintf(w, "web\tweb_fetch (%s); %s\n", fetch, search)
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
