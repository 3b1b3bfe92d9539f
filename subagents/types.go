// Package subagents lets the lead agent delegate: the task tool starts a
// subagent (its own agent loop, in the conversation's workspace, with a
// subset of the lead's tools and never task itself), waits for it and
// returns its answer as the tool result. Subagents of one response run in
// parallel; a global cap with FIFO waiting bounds how many run at once
// across all conversations. Every task is recorded with its run in the
// store, and reports task_started, task_progress and task_done events that
// the router shows as one threaded reply per subagent.
package subagents

import (
	"slices"
	"time"
)

// Type is a kind of subagent the lead can delegate to.
type Type struct {
	Name         string
	Description  string // tells the lead when to pick it
	SystemPrompt string
	// Tools are the lead's tools this type may use; empty means all of
	// them. DisallowedTools are then taken away. task, ask_clarification
	// and present_files are never given to a subagent.
	Tools           []string
	DisallowedTools []string
	Model           string        // a model name; "" = the lead's model
	MaxTurns        int           // model calls per task; 0 = 50
	Timeout         time.Duration // 0 = Options.Timeout
	// Needs names a tool without which the type is not offered.
	Needs string
}

// Built-in type names.
const (
	GeneralPurpose = "general-purpose"
	Bash           = "bash"
)

// Researcher is the type of a research plan's research steps; the lead is
// not offered it.
const Researcher = "researcher"

// internalTypes are the types only Run uses.
func internalTypes() []Type {
	return []Type{{
		Name:         Researcher,
		Description:  "Researches one question on the web and reports the findings with their sources.",
		SystemPrompt: researcherPrompt,
		Tools:        []string{"web_search", "web_fetch", "bash", "read_file", "write_file", "ls", "glob", "grep"},
		MaxTurns:     60,
		Needs:        "web_fetch",
	}}
}

const researcherPrompt = `<role>
You are a research subagent. You carry out one step of a research plan, alone: nobody reads your messages except the reporter, which reads only your final answer and writes the report from it and the other steps' findings.
</role>

<guidelines>
- Search the web (web_search) with several precise queries, then read the most relevant and authoritative pages in full with web_fetch. A page counts as a source only if you fetched it; search snippets are leads, not sources.
- Prefer primary sources, recent data and concrete facts: numbers, dates, names, direct statements. Note conflicting figures and where each comes from.
- Use bash (Python in the sandbox) when a calculation or a data file helps; keep files under /mnt/user-data/workspace.
- Stay within your step; other steps cover the rest of the plan.
- Finish with your findings in Markdown: the facts, each followed by the URL of the page it comes from, then a short "Sources" list of the URLs you fetched. No preamble. If you found little, say what you tried and what is missing.
</guidelines>`

// ToolName is the name of the lead's delegation tool.
const ToolName = "task"

// never are the tools no subagent gets: no nesting, and only the lead
// talks to the person.
var never = []string{ToolName, "ask_clarification", "present_files", "skill_manage"}

// BuiltIn returns the built-in types: general-purpose and bash.
func BuiltIn() []Type {
	return []Type{
		{
			Name:         GeneralPurpose,
			Description:  "A capable agent for a self-contained piece of a larger job that takes several steps: researching a question across files or the web, writing and checking code, analysing data. It has all of your tools except task.",
			SystemPrompt: generalPrompt,
			MaxTurns:     150,
		},
		{
			Name:         Bash,
			Description:  "Runs a sequence of shell commands (builds, tests, installs, git, data processing) and reports the outcome, so their long output stays out of your context.",
			SystemPrompt: bashPrompt,
			Tools:        []string{"bash", "ls", "read_file", "write_file", "str_replace"},
			MaxTurns:     60,
			Needs:        "bash",
		},
	}
}

const generalPrompt = `<role>
You are a subagent. The lead agent gave you one task that is part of a larger job, and works on other parts while you do this one. You cannot ask anyone anything: nobody reads your messages except the lead, and it reads only your final answer.
</role>

<guidelines>
- Do the whole task with the tools you have, and stay within it.
- Call independent tools in parallel; when a tool fails, read the error and adapt.
- Files you write go to /mnt/user-data/workspace (or /mnt/user-data/outputs for results the person should get), where the lead can read them.
- Finish with your answer: what you found or did, concretely (facts, numbers, file paths, command outcomes). No preamble, no offers of further help.
- If you cannot finish, say what you did, what is missing, and why.
</guidelines>`

const bashPrompt = `<role>
You are a subagent that runs shell commands for the lead agent, in the conversation's workspace. You cannot ask anyone anything; only your final answer reaches the lead.
</role>

<guidelines>
- Run the commands the task needs, checking each result before the next step; fix what you reasonably can when a command fails.
- Keep commands non-interactive (use flags such as -y) and their output short (pipe long output through tail, grep or head).
- Finish with a short report: what ran, whether it worked (exit status), and the lines of output that matter. Name any file you wrote by its full path.
</guidelines>`

// allows reports whether type t may use the named tool.
func (t *Type) allows(name string) bool {
	if slices.Contains(never, name) || slices.Contains(t.DisallowedTools, name) {
		return false
	}
	return len(t.Tools) == 0 || slices.Contains(t.Tools, name)
}
