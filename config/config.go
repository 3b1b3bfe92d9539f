// Package config holds deerflow's configuration: the types, Load (YAML with
// $VAR / ${VAR} expansion and defaults) and Validate.
//
// It imports no package of ours. The keys are a contract with operators and
// outside tools (see config.yaml.example): add keys freely, never rename.
package config

import (
	"path/filepath"

	"github.com/deerflow/deerflow/internal/yamlstruct"
)

// Config is the whole configuration file.
type Config struct {
	DataDir       string         `yaml:"data_dir"`
	Log           Log            `yaml:"log"`
	HTTP          HTTP           `yaml:"http"`
	Shutdown      Shutdown       `yaml:"shutdown"`
	Models        []Model        `yaml:"models"`
	Agent         Agent          `yaml:"agent"`
	Router        Router         `yaml:"router"`
	Channels      Channels       `yaml:"channels"`
	Sandbox       Sandbox        `yaml:"sandbox"`
	Subagents     Subagents      `yaml:"subagents"`
	Research      Research       `yaml:"research"`
	Scheduler     Scheduler      `yaml:"scheduler"`
	Uploads       Uploads        `yaml:"uploads"`
	Transcription Transcription  `yaml:"transcription"`
	Agents        []AgentDef     `yaml:"agents"`
	Memory        Memory         `yaml:"memory"`
	Skills        Skills         `yaml:"skills"`
	SkillEvo      SkillEvolution `yaml:"skill_evolution"`
	Tools         Tools          `yaml:"tools"`
	MCP           MCP            `yaml:"mcp"`
	ACP           ACP            `yaml:"acp"`
	Console       Console        `yaml:"console"`

	// ImageGeneration is generate_image's image model (images.go).
	ImageGeneration ImageGeneration `yaml:"image_generation"`

	src *source // where it was read from; nil for a Config built in code
}

// Model returns the model called name.
func (c *Config) Model(name string) (Model, bool) {
	for _, m := range c.Models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// DefaultModel returns the first model, or the zero Model if there is none
// (Validate rejects that).
func (c *Config) DefaultModel() Model {
	if len(c.Models) == 0 {
		return Model{}
	}
	return c.Models[0]
}

// File is the file the Config was read from, or "" for one built in code.
func (c *Config) File() string {
	if c.src == nil {
		return ""
	}
	return c.src.File
}

// DBPath is the bbolt file under DataDir.
func (c *Config) DBPath() string { return filepath.Join(c.DataDir, "deerflow.db") }

// Log configures log/slog output.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// HTTP configures the operator endpoints.
type HTTP struct {
	Listen string `yaml:"listen"` // e.g. 127.0.0.1:9090; empty disables
	// APIToken is the bearer token every /api route needs; empty: the
	// HTTP API is off.
	APIToken string `yaml:"api_token"`
	// TrustLoopback lets requests from this machine (127.0.0.0/8, ::1)
	// use the API without the token: for DeerFlow's web UI, whose
	// server proxies the browser's calls and cannot add one. Only when
	// every local user and program may act as the operator.
	TrustLoopback bool `yaml:"trust_loopback"`
	// CORSOrigins are the browser origins (or "*") allowed to call /api.
	CORSOrigins []string `yaml:"cors_origins"`
}

// Shutdown configures what SIGTERM/SIGINT does to running replies.
type Shutdown struct {
	// GraceSeconds is how long running replies may take to finish before
	// they are cancelled; absent: 30, 0: cancel at once.
	GraceSeconds int `yaml:"grace_seconds"`
}

// Model is one OpenAI-compatible chat model. The first entry is the default.
type Model struct {
	Name           string   `yaml:"name"`            // what users pick with /models NAME
	Model          string   `yaml:"model"`           // the provider's model id
	BaseURL        string   `yaml:"base_url"`        // OpenAI-compatible endpoint, ending before /chat/completions
	APIKey         string   `yaml:"api_key"`         // sent as a Bearer token; never logged
	Description    string   `yaml:"description"`     // shown by /models
	MaxTokens      int      `yaml:"max_tokens"`      // 0: provider default
	Temperature    *float32 `yaml:"temperature"`     // unset: provider default
	ContextWindow  int      `yaml:"context_window"`  // tokens; 0: unknown
	TimeoutSeconds int      `yaml:"timeout_seconds"` // per request (whole stream); default 600
	MaxRetries     int      `yaml:"max_retries"`     // retries on 408/409/425/429/5xx/connection errors; absent: 3, 0 or negative: none
	// SendReasoning echoes stored reasoning_content back to the provider in
	// later requests. Some providers require it, others reject it.
	SendReasoning bool `yaml:"send_reasoning"`
	// SupportsVision: the model takes images; view_image is offered.
	SupportsVision bool `yaml:"supports_vision"`
	// ReasoningEffort is sent as reasoning_effort: none, minimal, low,
	// medium, high, xhigh or max (which ones a model takes is the
	// provider's business); empty: not sent.
	ReasoningEffort string `yaml:"reasoning_effort"`
	// Thinking switches the provider's extended thinking on or off; the
	// zero value sends nothing.
	Thinking Thinking `yaml:"thinking"`
	// ExtraBody is merged into every request's JSON body: provider
	// switches deerflow has no key for.
	ExtraBody map[string]any `yaml:"extra_body"`
	// PriceIn and PriceOut are US dollars per million input and output
	// tokens; 0: unknown (no cost is shown).
	PriceIn  float64 `yaml:"price_in"`
	PriceOut float64 `yaml:"price_out"`
}

// Thinking is a model's thinking switch. YAML accepts a switch
// (`thinking: on`, `off`, `true`, `false`) or a mapping
// (`thinking: {enabled: true, budget: 2048}`); a budget implies on.
type Thinking struct {
	Enabled *bool `yaml:"enabled"` // nil: not said
	Budget  int   `yaml:"budget"`  // thinking tokens; 0: the provider's default
}

// Mode is "on", "off", or "" when the config says nothing.
func (t Thinking) Mode() string {
	switch {
	case t.Enabled != nil && *t.Enabled, t.Enabled == nil && t.Budget > 0:
		return "on"
	case t.Enabled != nil:
		return "off"
	}
	return ""
}

// SetScalar reads the switch form: on, off, true, false (yes, no).
func (t *Thinking) SetScalar(s string) bool {
	b, ok := yamlstruct.ParseBool(s)
	if ok {
		t.Enabled = &b
	}
	return ok
}

// Agent configures the lead agent.
type Agent struct {
	Name               string `yaml:"name"`                 // how the agent introduces itself; default "DeerFlow"
	MaxTurns           int    `yaml:"max_turns"`            // model calls per run; default 100
	ToolTimeoutSeconds int    `yaml:"tool_timeout_seconds"` // per tool call; default 600
	Soul               string `yaml:"soul"`                 // extra persona text added to the system prompt
	// TitleModel names threads after their first exchange (a models[].name);
	// empty titles them with the start of the first message.
	TitleModel string `yaml:"title_model"`
	// DailyTokenBudget caps the tokens one conversation may use per UTC
	// day; 0 means no cap.
	DailyTokenBudget int64 `yaml:"daily_token_budget"`
	// PlanMode is plan mode where a conversation has not chosen with
	// /plan on|off: the model keeps a checklist (write_todos) for work of
	// several steps. Default false.
	PlanMode bool `yaml:"plan_mode"`
	// ToolOutputShare is the part of the model's context window one tool
	// result may fill (about 4 characters a token); longer results are
	// cut in the middle. Default 0.1; 20,000 characters when the model's
	// context_window is unknown.
	ToolOutputShare float64 `yaml:"tool_output_share"`
	// ToolFailureLimit is how many times in a row a tool may fail the
	// same way before it is switched off for the rest of the run; default
	// 3, negative: never.
	ToolFailureLimit int           `yaml:"tool_failure_limit"`
	Summarization    Summarization `yaml:"summarization"`
	LoopDetection    LoopDetection `yaml:"loop_detection"`
}

// Summarization configures folding long conversations into a summary.
type Summarization struct {
	Enabled         bool    `yaml:"enabled"`          // default true (only when the key is absent)
	TriggerTokens   int     `yaml:"trigger_tokens"`   // default 32000
	TriggerFraction float64 `yaml:"trigger_fraction"` // of the model's context_window, when set; default 0.8
	KeepMessages    int     `yaml:"keep_messages"`    // default 10
	Model           string  `yaml:"model"`            // a models[].name; empty = the conversation's model
}

// LoopDetection configures when repeated tool calls are warned about and
// stopped.
type LoopDetection struct {
	Window      int `yaml:"window"`       // recent tool-calling responses compared; default 20
	WarnRepeats int `yaml:"warn_repeats"` // default 3
	StopRepeats int `yaml:"stop_repeats"` // default 5
	ToolWarn    int `yaml:"tool_warn"`    // calls of one tool per message; default 30
	ToolStop    int `yaml:"tool_stop"`    // default 50
}

// Router configures per-conversation queuing.
type Router struct {
	MaxQueued int `yaml:"max_queued"` // messages waiting per conversation while a run is active; default 20
}

// Console configures the terminal channel used by `deerflow chat`.
type Console struct {
	User string `yaml:"user"` // user id recorded for terminal messages; default $USER
}

// Sandbox configures where tools run.
type Sandbox struct {
	Network            bool     `yaml:"network"`       // bash may use the public internet; default true (only when the key is absent)
	NetworkAllow       []string `yaml:"network_allow"` // exceptions: "10.0.0.5:5432", "db.internal"
	HostNetwork        bool     `yaml:"host_network"`  // share the host's network (trusted users only)
	Limits             Limits   `yaml:"limits"`
	AllowHostBash      bool     `yaml:"allow_host_bash"`
	Mounts             []Mount  `yaml:"mounts"`
	BashTimeoutSeconds int      `yaml:"bash_timeout_seconds"` // default 600
	MaxUploadMB        int      `yaml:"max_upload_mb"`        // default 50
}

// Limits bound what sandboxed commands may take; 0 means the default.
type Limits struct {
	MemoryMB  int `yaml:"memory_mb"` // all processes of one command together; default 1024
	Processes int `yaml:"processes"` // processes of one command; default 256
	DiskMB    int `yaml:"disk_mb"`   // a conversation's uploads + workspace + outputs; default 2048
	TmpMB     int `yaml:"tmp_mb"`    // the sandbox's /tmp; default 256
}

// Mount exposes a host directory to the sandbox.
type Mount struct {
	HostPath string `yaml:"host_path"`
	Path     string `yaml:"path"` // virtual path, absolute, e.g. /mnt/data
	ReadOnly bool   `yaml:"read_only"`
}

// Subagents configures task delegation.
type Subagents struct {
	MaxPerResponse int `yaml:"max_per_response"`
	MaxPerRun      int `yaml:"max_per_run"`
	MaxRunning     int `yaml:"max_running"`
	TimeoutSeconds int `yaml:"timeout_seconds"`
	// Types adds subagent types to the built-in general-purpose and bash.
	Types []SubagentType `yaml:"types"`
}

// SubagentType is a custom kind of subagent the lead agent may delegate to.
type SubagentType struct {
	Name            string   `yaml:"name"`
	Description     string   `yaml:"description"` // when the lead should pick it
	SystemPrompt    string   `yaml:"system_prompt"`
	Tools           []string `yaml:"tools"`            // allowed tools; empty = all the lead has
	DisallowedTools []string `yaml:"disallowed_tools"` // taken away from the allowed ones
	Model           string   `yaml:"model"`            // a models[].name; empty = the lead's model
	MaxTurns        int      `yaml:"max_turns"`        // 0 = 50
	TimeoutSeconds  int      `yaml:"timeout_seconds"`  // 0 = subagents.timeout_seconds
}

// Research configures /research.
type Research struct {
	Enabled           bool `yaml:"enabled"`             // default true (only when the key is absent)
	MaxClarifications int  `yaml:"max_clarifications"`  // questions before planning, 0 to 5; absent: 2, 0: never ask
	MaxSteps          int  `yaml:"max_steps"`           // steps per plan, 1 to 10; default 5
	MaxPlanIterations int  `yaml:"max_plan_iterations"` // revised plans from the person's changes, 0 to 10; absent: 3
}

// Memory configures long-term memory.
type Memory struct {
	Enabled         bool   `yaml:"enabled"` // default true (only when the key is absent)
	Scope           string `yaml:"scope"`   // user | chat
	DebounceSeconds int    `yaml:"debounce_seconds"`
}

// Skills configures SKILL.md loading.
type Skills struct {
	Path string `yaml:"path"`
	// Admins may switch skills on and off with /skills ("channel:user
	// id"); empty lets everyone.
	Admins []string `yaml:"admins"`
}

// SkillEvolution configures agent-authored skills.
type SkillEvolution struct {
	Enabled bool `yaml:"enabled"`
}

// Tools configures built-in tools.
type Tools struct {
	WebFetch  WebFetch  `yaml:"web_fetch"`
	WebSearch WebSearch `yaml:"web_search"`
}
