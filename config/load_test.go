package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var testEnv = map[string]string{
	"TG_ON":          "true",
	"TG_OFF":         "false",
	"TURNS":          "42",
	"TOKEN":          "123:abc",
	"EVIL":           "a\nb: c",
	"EVIL_LIST":      "x\n- y",
	"USERS":          "123, @alice ,,",
	"PRICE":          "5",
	"EMPTY":          "",
	"OPENAI_API_KEY": "sk-test",
}

func mustParse(t *testing.T, yml string) *Config {
	t.Helper()
	c, err := parse([]byte(yml), "config.yaml", mapLookup(testEnv))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return c
}

func TestParseExpansion(t *testing.T) {
	tests := []struct {
		name, yml string
		got       func(*Config) any
		want      any
	}{
		{"braces quoted in flow style", "channels: {telegram: {enabled: \"${TG_ON}\"}}", func(c *Config) any { return c.Channels.Telegram.Enabled }, true},
		{"bool from env", "channels:\n  telegram:\n    enabled: ${TG_ON}", func(c *Config) any { return c.Channels.Telegram.Enabled }, true},
		{"false bool from env", "sandbox:\n  network: $TG_OFF", func(c *Config) any { return c.Sandbox.Network }, false},
		{"int from env", "agent:\n  max_turns: $TURNS", func(c *Config) any { return c.Agent.MaxTurns }, 42},
		{"quoted int from env", "agent:\n  max_turns: \"$TURNS\"", func(c *Config) any { return c.Agent.MaxTurns }, 42},
		{"unset int is absent", "agent:\n  max_turns: ${NOPE}", func(c *Config) any { return c.Agent.MaxTurns }, 100},
		{"unset bool is absent", "memory:\n  enabled: ${NOPE}", func(c *Config) any { return c.Memory.Enabled }, true},
		{"string", "channels:\n  telegram:\n    bot_token: ${TOKEN}", func(c *Config) any { return c.Channels.Telegram.BotToken }, "123:abc"},
		{"default form", "data_dir: ${NOPE:-/var/lib/df}", func(c *Config) any { return c.DataDir }, "/var/lib/df"},
		{"dollar escape", "agent:\n  soul: costs $$${PRICE}", func(c *Config) any { return c.Agent.Soul }, "costs $5"},
		{"unset string", "agent:\n  soul: x${NOPE}y", func(c *Config) any { return c.Agent.Soul }, "xy"},
		{"injection stays a string", "agent:\n  soul: $EVIL", func(c *Config) any { return c.Agent.Soul }, "a\nb: c"},
		{"injection in list item", "channels:\n  slack:\n    allowed_users: [$EVIL_LIST]", func(c *Config) any { return c.Channels.Slack.AllowedUsers }, []string{"x\n- y"}},
		{"comma list from env", "channels:\n  telegram:\n    allowed_users: $USERS", func(c *Config) any { return c.Channels.Telegram.AllowedUsers }, []string{"123", "@alice"}},
		{"empty list from env", "channels:\n  telegram:\n    allowed_users: $EMPTY", func(c *Config) any { return c.Channels.Telegram.AllowedUsers }, []string(nil)},
		{"keys are not expanded, map values are", "mcp:\n  servers:\n    - name: x\n      command: y\n      env: {$TOKEN: $TOKEN}",
			func(c *Config) any { return c.MCP.Servers[0].Env }, map[string]string{"$TOKEN": "123:abc"}},
		{"float pointer", "models:\n  - model: m\n    temperature: 0.5", func(c *Config) any { return *c.Models[0].Temperature }, float32(0.5)},
		{"null pointer", "models:\n  - model: m\n    temperature: ~", func(c *Config) any { return c.Models[0].Temperature == nil }, true},
		{"number as string", "models:\n  - model: 0x1F", func(c *Config) any { return c.Models[0].Model }, "0x1F"},
		{"yaml 1.2 decimal", "agent:\n  max_turns: 010", func(c *Config) any { return c.Agent.MaxTurns }, 10},
		{"hex int", "router:\n  max_queued: 0x10", func(c *Config) any { return c.Router.MaxQueued }, 16},
		{"merge keys", "x-base: &b {model: m, api_key: k}\nmodels:\n  - <<: *b\n    name: one\n  - <<: *b\n    name: two\n    api_key: other",
			func(c *Config) any {
				return [][2]string{{c.Models[0].Name, c.Models[0].APIKey}, {c.Models[1].Name, c.Models[1].APIKey}}
			},
			[][2]string{{"one", "k"}, {"two", "other"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.yml)
			if got := tt.got(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c, err := parse(nil, "", mapLookup(map[string]string{"OPENAI_API_KEY": "sk-x", "USER": "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DataDir: "./.deerflow",
		Log:     Log{Level: "info", Format: "text"},
		Models: []Model{{Name: "default", Model: "gpt-4o-mini", BaseURL: "https://api.openai.com/v1",
			APIKey: "sk-x", TimeoutSeconds: 600, MaxRetries: 3}},
		Agent: Agent{Name: "DeerFlow", MaxTurns: 100, ToolTimeoutSeconds: 600, ToolOutputShare: 0.1, ToolFailureLimit: 3,
			Summarization: Summarization{Enabled: true, TriggerTokens: 32000, TriggerFraction: 0.8, KeepMessages: 10},
			LoopDetection: LoopDetection{Window: 20, WarnRepeats: 3, StopRepeats: 5, ToolWarn: 30, ToolStop: 50}},
		Router:   Router{MaxQueued: 20},
		Shutdown: Shutdown{GraceSeconds: 30},
		Channels: Channels{
			Telegram: Telegram{APIURL: "https://api.telegram.org",
				Limits: TelegramLimits{PerChatPerSecond: 1, PerChatBurst: 4, PerGroupPerMinute: 20, GlobalPerSecond: 30}},
			Slack: Slack{APIURL: "https://slack.com/api/", Limits: SendLimits{PerChatPerSecond: 1, PerChatBurst: 3}},
			Lark:  Lark{Domain: "https://open.feishu.cn", Limits: SendLimits{PerChatPerSecond: 5, PerChatBurst: 1, GlobalPerSecond: 16}},
		},
		Console:       Console{User: "ann"},
		Sandbox:       Sandbox{Network: true, BashTimeoutSeconds: 600, MaxUploadMB: 50, Limits: Limits{MemoryMB: 1024, Processes: 256, DiskMB: 2048, TmpMB: 256}},
		Subagents:     Subagents{MaxPerResponse: 3, MaxPerRun: 6, MaxRunning: 16, TimeoutSeconds: 1800},
		Research:      Research{Enabled: true, MaxClarifications: 2, MaxSteps: 5, MaxPlanIterations: 3},
		MCP:           MCP{DeferThreshold: 20},
		Scheduler:     Scheduler{Enabled: true, MinIntervalSeconds: 60, MaxPerUser: 20, MaxFailures: 3, Timezone: "UTC"},
		Uploads:       Uploads{Convert: Convert{Enabled: true, TimeoutSeconds: 60, MaxMB: 50, MaxUnpackedMB: 200, MaxMarkdownKB: 4096}},
		Transcription: Transcription{BaseURL: "https://api.openai.com/v1", APIKey: "sk-x", TimeoutSeconds: 120, MaxMB: 25},
		Memory:        Memory{Enabled: true, Scope: "user", DebounceSeconds: 30},
		Skills:        Skills{Path: "./skills"},
		Tools:         Tools{WebFetch: WebFetch{MaxChars: 4096, TimeoutSeconds: 20}, WebSearch: WebSearch{Provider: "duckduckgo", MaxResults: 5}},
	}
	c.src = nil
	if !reflect.DeepEqual(*c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", *c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	if got := c.DBPath(); got != filepath.Join(".deerflow", "deerflow.db") {
		t.Errorf("DBPath = %q", got)
	}

	c, _ = parse(nil, "", mapLookup(map[string]string{"OPENAI_MODEL": "m1", "OPENAI_BASE_URL": "http://llm:8000/v1"}))
	if m := c.DefaultModel(); m.Model != "m1" || m.BaseURL != "http://llm:8000/v1" || m.Name != "default" {
		t.Errorf("model from env = %+v", m)
	}
	if c.Console.User != "local" {
		t.Errorf("console.user without $USER = %q, want local", c.Console.User)
	}
}

func TestDefaultsRespectExplicitValues(t *testing.T) {
	c := mustParse(t, `
sandbox: {network: false}
memory: {enabled: false}
research: {enabled: false, max_clarifications: 0, max_steps: 0, max_plan_iterations: 0}
channels: {slack: {api_url: "http://127.0.0.1:9/api"}}
models:
  - model: a
  - {model: b, name: bee, base_url: "http://x/v1", max_retries: 0, timeout_seconds: 5}
  - {model: c, max_retries: -2}
`)
	got := []any{c.Sandbox.Network, c.Memory.Enabled, c.Channels.Slack.APIURL,
		c.Models[0].Name, c.Models[0].MaxRetries, c.Models[1].Name, c.Models[1].BaseURL,
		c.Models[1].MaxRetries, c.Models[1].TimeoutSeconds, c.Models[2].MaxRetries,
		c.Research.Enabled, c.Research.MaxClarifications, c.Research.MaxSteps, c.Research.MaxPlanIterations}
	want := []any{false, false, "http://127.0.0.1:9/api/", "a", 3, "bee", "http://x/v1", 0, 5, 0,
		false, 0, 5, 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m, ok := c.Model("bee"); !ok || m.Model != "b" {
		t.Errorf("Model(bee) = %+v, %v", m, ok)
	}
	if _, ok := c.Model("nope"); ok {
		t.Error("Model(nope) found")
	}
	if c.DefaultModel().Name != "a" {
		t.Errorf("DefaultModel = %q", c.DefaultModel().Name)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yml string
		want      []string // each an exact line of the error
	}{
		{"unknown key with line", "channels:\n  telegram:\n    enabled: true\n    bot_tokn: x\n",
			[]string{`config.yaml:4: unknown key "channels.telegram.bot_tokn"`}},
		{"unknown top-level key", "\n\nmodel: x", []string{`config.yaml:3: unknown key "model"`}},
		{"all unknown keys at once", "a: 1\nlog:\n  levle: x\n", []string{`config.yaml:1: unknown key "a"`, `config.yaml:3: unknown key "log.levle"`}},
		{"unknown key in list item", "models:\n  - model: m\n    apikey: k", []string{`config.yaml:3: unknown key "models[0].apikey"`}},
		{"type error int", "agent:\n  max_turns: lots", []string{`config.yaml:2: agent.max_turns: expected an integer, got a value of 4 characters`}},
		{"type error from env", "agent:\n  max_turns: ${TOKEN}", []string{`config.yaml:2: agent.max_turns: expected an integer, got a value of 7 characters`}},
		{"type error float as int", "router:\n  max_queued: 1.5", []string{`config.yaml:2: router.max_queued: expected an integer, got a value of 3 characters`}},
		{"type error bool", "sandbox:\n  network: maybe", []string{`config.yaml:2: sandbox.network: expected true or false, got a value of 5 characters`}},
		{"mapping for scalar", "data_dir: {a: 1}", []string{`config.yaml:1: data_dir: expected a string, got a mapping`}},
		{"scalar for mapping", "log: loud", []string{`config.yaml:1: log: expected a mapping, got a value of 4 characters`}},
		{"scalar for list of structs", "models: gpt", []string{`config.yaml:1: models: expected a list, got a value of 3 characters`}},
		{"duplicate key", "log:\n  level: info\n  level: debug", []string{`config.yaml:3: duplicate key "log.level"`}},
		{"bad reference", "data_dir: ${A B}", []string{`config.yaml:1: data_dir: bad variable reference in value (want ${NAME} or ${NAME:-default})`}},
		{"x- only at top level", "log:\n  x-note: 1", []string{`config.yaml:2: unknown key "log.x-note"`}},
		{"two documents", "log: {}\n---\nlog: {}\n", []string{`config.yaml:2: only one YAML document is allowed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.yml), "config.yaml", mapLookup(testEnv))
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("error:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseSyntaxError(t *testing.T) {
	_, err := parse([]byte("log:\n  level: [\n"), "my.yaml", mapLookup(nil))
	if err == nil || !strings.HasPrefix(err.Error(), "my.yaml: yaml: ") {
		t.Errorf("err = %v, want my.yaml: yaml: ...", err)
	}
}

func TestResolve(t *testing.T) {
	t.Setenv("OPENAI_MODEL", "from-env")
	t.Setenv("DF_TEST_DIR", "/from/env")
	dir := t.TempDir()
	t.Chdir(dir)

	// No flag and no ./config.yaml: defaults plus the environment.
	c, used, err := Resolve("")
	if err != nil || used != "" || c.DefaultModel().Model != "from-env" {
		t.Fatalf("no file: used=%q err=%v model=%q", used, err, c.DefaultModel().Model)
	}

	// A missing --config file is an error naming it.
	missing := filepath.Join(dir, "nope.yaml")
	if _, _, err := Resolve(missing); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing --config: err = %v", err)
	}

	// ./config.yaml is read when present.
	if err := os.WriteFile(DefaultPath, []byte("data_dir: $DF_TEST_DIR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, used, err = Resolve("")
	if err != nil || used != DefaultPath || c.DataDir != "/from/env" {
		t.Errorf("./config.yaml: used=%q err=%v data_dir=%q", used, err, c.DataDir)
	}

	// --config wins over ./config.yaml, and errors carry its name.
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte("log:\n  levl: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, used, err = Resolve(other)
	if want := other + `:2: unknown key "log.levl"`; err == nil || err.Error() != want || used != other {
		t.Errorf("--config: used=%q err=%v, want %q", used, err, want)
	}

	// Default reads the environment too.
	if Default().DefaultModel().Model != "from-env" {
		t.Error("Default ignores OPENAI_MODEL")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("models:\n  - model: m\n    temperature: 0.5\n"))
	f.Add([]byte("x-a: &a {model: m}\nmodels: [*a, {<<: *a, name: b}]\n"))
	f.Add([]byte("channels:\n  telegram:\n    allowed_users: $USERS\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse(data, "f.yaml", mapLookup(testEnv))
		if err == nil {
			_ = c.Validate()
		}
	})
}

func TestAliasLimits(t *testing.T) {
	bomb := "x-a: &a {model: m}\n"
	prev := "a"
	for _, n := range "bcdefgh" {
		bomb += fmt.Sprintf("x-%c: &%c {<<: [", n, n) + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]}\n"
		prev = string(n)
	}
	bomb += "models: [*h]\n"
	tests := []struct{ name, yml, want string }{
		{"merge cycle", "models: &x\n  - <<: *x\n", `config.yaml:2: models[0]: a merge (<<) refers to itself`},
		{"merge bomb", bomb, `config.yaml:2: models[0]: aliases or merges expand too far`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.yml), "config.yaml", mapLookup(nil))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}
