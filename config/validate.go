package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Validate checks the whole configuration and returns every problem at
// once (an errors.Join of *Error), each naming its key and, when the config
// came from a file, the line; first the file's own (wrong types, unknown
// keys) when Parse found some. A required value left empty by an unset
// variable names it ("$OPENAI_API_KEY is not set"). Messages never echo a
// secret's value. Model keys are checked apart: ModelKeys.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.basics()
	v.models()
	v.channels()
	v.sandbox()
	v.limits()
	v.research()
	v.scheduler()
	v.uploads()
	v.imageGeneration()
	v.agents()
	v.mcp()
	v.acp()
	return errors.Join(v.withDecodeErrors()...)
}

// withDecodeErrors puts the file's own problems (types, unknown keys)
// first, then the value checks' except those about a key that already has
// one: a value of the wrong type is left at its default, which proves
// nothing.
func (v *validator) withDecodeErrors() []error {
	if v.c.src == nil || len(v.c.src.Errs) == 0 {
		return v.errs
	}
	out := slices.Clone(v.c.src.Errs)
	for _, e := range v.errs {
		if ve, ok := e.(*Error); !ok || !v.decodeFailed(ve.Key) {
			out = append(out, e)
		}
	}
	return out
}

// decodeFailed reports whether key, a key inside it or a key around it
// could not be decoded.
func (v *validator) decodeFailed(key string) bool {
	for _, e := range v.c.src.Errs {
		de, ok := e.(*Error)
		if !ok || de.Key == "" {
			continue
		}
		if inside(key, de.Key) || inside(de.Key, key) {
			return true
		}
	}
	return false
}

// inside reports whether key is parent or a key under it.
func inside(key, parent string) bool {
	return key == parent || strings.HasPrefix(key, parent+".") || strings.HasPrefix(key, parent+"[")
}

// MinAPIToken is the shortest http.api_token accepted: a bearer token
// that guards running an agent must not be guessable.
const MinAPIToken = 32

type validator struct {
	c    *Config
	errs []error
}

func (v *validator) fail(key, format string, args ...any) {
	e := &Error{Line: v.c.line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	if v.c.src != nil {
		e.File = v.c.src.File
	}
	v.errs = append(v.errs, e)
}

func (v *validator) required(key, value string) {
	if strings.TrimSpace(value) == "" {
		v.fail(key, "%s", v.missing(key, "required"))
	}
}

// needsKey reports whether the endpoint at base refuses every request
// without a key, as llm knows api.openai.com does.
func needsKey(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// missing says why key is empty: the variables it named that are not
// set, with why it is needed in brackets; or just why.
func (v *validator) missing(key, why string) string {
	u := v.c.unset(key)
	switch {
	case u == "":
		return why
	case strings.Contains(u, " and "):
		return u + " are not set (" + why + ")"
	}
	return u + " is not set (" + why + ")"
}

// ModelKeys reports each model of api.openai.com that has no key (the
// client would refuse every request), naming the variable that should
// hold it, as Validate reports problems. It is apart from Validate
// because only the commands that call models need a key: check, chat and
// serve call it, doctor and agents do not.
func (c *Config) ModelKeys() error {
	v := &validator{c: c}
	for i, m := range c.Models {
		v.apiKey(index("models", i), i, m)
	}
	return errors.Join(v.errs...)
}

func (v *validator) apiKey(k string, i int, m Model) {
	if strings.TrimSpace(m.APIKey) != "" || !needsKey(m.BaseURL) {
		return
	}
	fix := "set " + k + ".api_key"
	if i == 0 && !v.c.written("models") {
		fix = "export OPENAI_API_KEY"
	}
	v.fail(k+".api_key", "%s", v.missing(k+".api_key", "api.openai.com needs a key: "+fix))
}

func (v *validator) oneOf(key, value string, allowed ...string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	v.fail(key, "must be %s", orList(quoted))
}

func (v *validator) httpURL(key, value string) {
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.fail(key, "must be an http(s) URL") // never echoed: it may hold credentials
	}
}

func (v *validator) between(key string, n, lo, hi int) {
	if n < lo || n > hi {
		v.fail(key, "must be between %d and %d, got %d", lo, hi, n)
	}
}

// modelName checks that name, when set, is one of the models.
func (v *validator) modelName(key, name string) {
	if name == "" {
		return
	}
	for _, m := range v.c.Models {
		if m.Name == name {
			return
		}
	}
	v.fail(key, "no model is named %q in models", name)
}

func (v *validator) nonNegative(key string, n int) {
	if n < 0 {
		v.fail(key, "must not be negative, got %d", n)
	}
}

func (v *validator) basics() {
	c := v.c
	v.required("data_dir", c.DataDir)
	v.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	v.oneOf("log.format", c.Log.Format, "text", "json")
	if c.HTTP.Listen != "" {
		_, port, err := net.SplitHostPort(c.HTTP.Listen)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			v.fail("http.listen", "must be host:port, e.g. 127.0.0.1:9090")
		}
	}
	if n := len(c.HTTP.APIToken); n > 0 && n < MinAPIToken {
		// The length only: the token itself is never echoed.
		v.fail("http.api_token", "must be at least %d characters long (it has %d); generate one with: openssl rand -hex 32", MinAPIToken, n)
	}
	for i, o := range c.HTTP.CORSOrigins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "") {
			v.fail(fmt.Sprintf("http.cors_origins[%d]", i), "must be an http(s) origin such as https://app.example.com, or \"*\"")
		}
	}
	v.agent()
	v.between("router.max_queued", c.Router.MaxQueued, 1, 10000)
	v.between("shutdown.grace_seconds", c.Shutdown.GraceSeconds, 0, 3600)
	v.required("console.user", c.Console.User)
	v.oneOf("memory.scope", c.Memory.Scope, "user", "chat")
	v.nonNegative("memory.debounce_seconds", c.Memory.DebounceSeconds)
	v.required("skills.path", c.Skills.Path)
	for i, a := range c.Skills.Admins {
		if ch, id, ok := strings.Cut(a, ":"); !ok || ch == "" || id == "" {
			v.fail(index("skills.admins", i), `must be "channel:user id", such as telegram:123456789`)
		}
	}
	v.webTools()
}

// agent checks the agent keys.
func (v *validator) agent() {
	c := v.c
	v.required("agent.name", c.Agent.Name)
	v.between("agent.max_turns", c.Agent.MaxTurns, 1, 1000)
	v.nonNegative("agent.tool_timeout_seconds", c.Agent.ToolTimeoutSeconds)
	if c.Agent.DailyTokenBudget < 0 {
		v.fail("agent.daily_token_budget", "must not be negative, got %d", c.Agent.DailyTokenBudget)
	}
	v.modelName("agent.title_model", c.Agent.TitleModel)
	if c.Agent.ToolOutputShare <= 0 || c.Agent.ToolOutputShare > 0.5 {
		v.fail("agent.tool_output_share", "must be above 0 and at most 0.5, got %g", c.Agent.ToolOutputShare)
	}
	sm := c.Agent.Summarization
	v.nonNegative("agent.summarization.trigger_tokens", sm.TriggerTokens)
	if sm.TriggerFraction <= 0 || sm.TriggerFraction >= 1 {
		v.fail("agent.summarization.trigger_fraction", "must be between 0 and 1 (exclusive), got %g", sm.TriggerFraction)
	}
	v.nonNegative("agent.summarization.keep_messages", sm.KeepMessages)
	v.modelName("agent.summarization.model", sm.Model)
	ld := c.Agent.LoopDetection
	v.nonNegative("agent.loop_detection.window", ld.Window)
	if ld.WarnRepeats >= ld.StopRepeats {
		v.fail("agent.loop_detection.warn_repeats", "must be below stop_repeats (%d), got %d", ld.StopRepeats, ld.WarnRepeats)
	}
	if ld.ToolWarn >= ld.ToolStop {
		v.fail("agent.loop_detection.tool_warn", "must be below tool_stop (%d), got %d", ld.ToolStop, ld.ToolWarn)
	}
}

func (v *validator) models() {
	if len(v.c.Models) == 0 {
		v.fail("models", "at least one model is required")
	}
	seen := map[string]bool{}
	for i, m := range v.c.Models {
		k := index("models", i)
		v.required(k+".model", m.Model)
		switch {
		case m.Name == "":
			v.fail(k+".name", "required")
		case seen[m.Name]:
			v.fail(k+".name", "duplicate model name %q", m.Name)
		}
		seen[m.Name] = true
		v.httpURL(k+".base_url", m.BaseURL)
		v.nonNegative(k+".max_tokens", m.MaxTokens)
		v.nonNegative(k+".context_window", m.ContextWindow)
		v.nonNegative(k+".timeout_seconds", m.TimeoutSeconds)
		if t := m.Temperature; t != nil && (*t < 0 || *t > 2) {
			v.fail(k+".temperature", "must be between 0 and 2")
		}
		v.modelSwitches(k, m)
	}
}

// Keys of the request body that deerflow writes itself; extra_body may
// not replace them.
var ownBodyKeys = []string{"model", "messages", "tools", "stream"}

// modelSwitches checks a model's reasoning, thinking, extra body and
// prices. Its messages name the model: the same mistake is often made in
// one entry of several.
func (v *validator) modelSwitches(k string, m Model) {
	of := fmt.Sprintf("model %q: ", m.Name)
	switch m.ReasoningEffort {
	case "", "none", "minimal", "low", "medium", "high", "xhigh", "max":
	default:
		v.fail(k+".reasoning_effort", "%smust be none, minimal, low, medium, high, xhigh or max (or left out, to send none); another value can go in extra_body", of)
	}
	t := m.Thinking
	if t.Budget < 0 {
		v.fail(k+".thinking.budget", "%smust not be negative, got %d", of, t.Budget)
	}
	if t.Enabled != nil && !*t.Enabled && t.Budget > 0 {
		v.fail(k+".thinking.budget", "%sa budget needs thinking on, but enabled is false", of)
	}
	for _, key := range ownBodyKeys {
		if _, ok := m.ExtraBody[key]; ok {
			v.fail(k+".extra_body."+key, "%sdeerflow sets %s itself; remove it from extra_body", of, key)
		}
	}
	for _, p := range []struct {
		key   string
		price float64
	}{{"price_in", m.PriceIn}, {"price_out", m.PriceOut}} {
		if p.price < 0 || math.IsNaN(p.price) || math.IsInf(p.price, 0) {
			v.fail(k+"."+p.key, "%smust be US dollars per million tokens, 0 or more (0: unknown)", of)
		}
	}
}

// Virtual paths the sandbox itself provides; a mount may not shadow them.
var reservedPaths = []string{"/mnt/user-data", "/mnt/skills"}

// System directories the sandbox binds read-only; no mount point can be
// made inside them.
var systemDirs = []string{"/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

func (v *validator) sandbox() {
	s := v.c.Sandbox
	v.nonNegative("sandbox.bash_timeout_seconds", s.BashTimeoutSeconds)
	v.nonNegative("sandbox.max_upload_mb", s.MaxUploadMB)
	v.nonNegative("sandbox.limits.memory_mb", s.Limits.MemoryMB)
	v.nonNegative("sandbox.limits.processes", s.Limits.Processes)
	v.nonNegative("sandbox.limits.disk_mb", s.Limits.DiskMB)
	v.nonNegative("sandbox.limits.tmp_mb", s.Limits.TmpMB)
	for i, a := range s.NetworkAllow {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(strings.TrimSpace(a), " \t") {
			v.fail(index("sandbox.network_allow", i), "must be an address, a prefix or a host name, with an optional :port, e.g. 10.0.0.5:5432 or db.internal")
		}
	}
	seen := map[string]bool{}
	for i, m := range s.Mounts {
		k := index("sandbox.mounts", i)
		v.required(k+".host_path", m.HostPath)
		p := path.Clean(m.Path)
		switch {
		case !path.IsAbs(m.Path) || p == "/":
			v.fail(k+".path", "must be an absolute virtual path such as /mnt/data")
		case seen[p]:
			v.fail(k+".path", "duplicate mount path %q", p)
		}
		for _, r := range reservedPaths {
			if p == r || strings.HasPrefix(p, r+"/") || strings.HasPrefix(r, p+"/") {
				v.fail(k+".path", "overlaps %s, which the sandbox provides", r)
			}
		}
		for _, d := range systemDirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				v.fail(k+".path", "is inside %s, which the sandbox keeps read-only; use a path such as /mnt/data", d)
			}
		}
		seen[p] = true
	}
}

func (v *validator) limits() {
	s := v.c.Subagents
	v.between("subagents.max_per_response", s.MaxPerResponse, 1, 8)
	v.between("subagents.max_per_run", s.MaxPerRun, 1, 50)
	v.nonNegative("subagents.max_running", s.MaxRunning)
	v.nonNegative("subagents.timeout_seconds", s.TimeoutSeconds)
	seen := map[string]bool{}
	for i, t := range s.Types {
		k := index("subagents.types", i)
		switch {
		case !isName(t.Name, 40, true):
			v.fail(k+".name", "must be a word of letters, digits, - or _ (such as researcher)")
		case t.Name == "general-purpose" || t.Name == "bash":
			v.fail(k+".name", "%q is a built-in type; pick another name", t.Name)
		case seen[t.Name]:
			v.fail(k+".name", "duplicate type %q", t.Name)
		}
		seen[t.Name] = true
		v.required(k+".description", t.Description)
		v.modelName(k+".model", t.Model)
		for j, name := range t.Tools {
			if name == "task" {
				v.fail(index(k+".tools", j), "subagents cannot delegate: task is never given to them")
			}
		}
		v.nonNegative(k+".max_turns", t.MaxTurns)
		v.nonNegative(k+".timeout_seconds", t.TimeoutSeconds)
	}
}

func (v *validator) research() {
	r := v.c.Research
	v.between("research.max_clarifications", r.MaxClarifications, 0, 5)
	v.between("research.max_steps", r.MaxSteps, 1, 10)
	v.between("research.max_plan_iterations", r.MaxPlanIterations, 0, 10)
}

// isName reports whether s is 1 to maxLen letters, digits, '-' or '_',
// the first a letter or digit when alnumFirst is set. (A loop rather than
// regexps: compiling the two counted repetitions this replaces cost every
// start 0.3 ms and 70 KB of heap.)
func isName(s string, maxLen int, alnumFirst bool) bool {
	if len(s) == 0 || len(s) > maxLen || alnumFirst && (s[0] == '-' || s[0] == '_') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
