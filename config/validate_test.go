package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name, yml string
		want      []string // exact lines of the joined error; nil: valid
	}{
		{"defaults", "", nil},
		{"enabled channels with good tokens", `
channels:
  telegram: {enabled: true, bot_token: "1:x", allowed_users: ["1", "@a"]}
  slack: {enabled: true, bot_token: xoxb-1, app_token: xapp-1}
  lark: {enabled: true, app_id: cli_1, app_secret: s}
http: {listen: ":9090"}
sandbox:
  mounts: [{host_path: /srv, path: /mnt/data, read_only: true}]
mcp:
  servers: [{name: a, command: a}, {name: b, url: "http://h/mcp"}]
tools: {web_search: {provider: brave, api_key: k}}
`, nil},
		{"short api_token", "http:\n  listen: \":9090\"\n  api_token: tooshort-SECRET", []string{
			`config.yaml:3: http.api_token: must be at least 32 characters long (it has 15); generate one with: openssl rand -hex 32`}},
		{"long api_token", "http:\n  listen: \":9090\"\n  api_token: 0123456789abcdef0123456789abcdef", nil},
		{"bad base_url", "models:\n  - model: m\n    base_url: ftp://x", []string{`config.yaml:3: models[0].base_url: must be an http(s) URL`}},
		{"duplicate model", "models:\n  - model: a\n  - model: b\n    name: a\n", []string{`config.yaml:4: models[1].name: duplicate model name "a"`}},
		{"model id required", "models:\n  - name: x\n", []string{`config.yaml:2: models[0].model: required`}},
		{"model numbers", "models:\n  - model: m\n    max_tokens: -1\n    context_window: -1\n    timeout_seconds: -1\n    temperature: 3", []string{
			`config.yaml:3: models[0].max_tokens: must not be negative, got -1`,
			`config.yaml:4: models[0].context_window: must not be negative, got -1`,
			`config.yaml:5: models[0].timeout_seconds: must not be negative, got -1`,
			`config.yaml:6: models[0].temperature: must be between 0 and 2`}},
		{"telegram token", "channels:\n  telegram:\n    enabled: true\n", []string{
			`config.yaml:2: channels.telegram.bot_token: $TELEGRAM_BOT_TOKEN is not set (required when channels.telegram.enabled is true)`}},
		{"telegram empty token from env", "channels:\n  telegram:\n    enabled: true\n    bot_token: $NOPE\n", []string{
			`config.yaml:4: channels.telegram.bot_token: $NOPE is not set (required when channels.telegram.enabled is true)`}},
		{"disabled channels need nothing", "channels:\n  telegram: {enabled: false}\n  slack: {bot_token: wrong}", nil},
		{"slack prefixes", "channels:\n  slack:\n    enabled: true\n    bot_token: xapp-secret-1\n    app_token: xoxb-secret-2\n", []string{
			`config.yaml:4: channels.slack.bot_token: must start with "xoxb-"`,
			`config.yaml:5: channels.slack.app_token: must start with "xapp-"`}},
		{"slack missing", "channels:\n  slack:\n    enabled: true\n", []string{
			`config.yaml:2: channels.slack.bot_token: $SLACK_BOT_TOKEN is not set (required when channels.slack.enabled is true)`,
			`config.yaml:2: channels.slack.app_token: $SLACK_APP_TOKEN is not set (required when channels.slack.enabled is true)`}},
		{"lark missing", "channels:\n  lark: {enabled: true, app_id: x}", []string{
			`config.yaml:2: channels.lark.app_secret: $LARK_APP_SECRET is not set (required when channels.lark.enabled is true)`}},
		{"channel urls", "channels:\n  telegram: {api_url: nope}\n  lark: {domain: \"open.feishu.cn\"}", []string{
			`config.yaml:2: channels.telegram.api_url: must be an http(s) URL`,
			`config.yaml:3: channels.lark.domain: must be an http(s) URL`}},
		{"empty allowed user", "channels:\n  slack:\n    allowed_users: [U1, \"\"]", []string{`config.yaml:3: channels.slack.allowed_users[1]: must not be empty`}},
		{"memory scope", "memory:\n  scope: team", []string{`config.yaml:2: memory.scope: must be "user" or "chat"`}},
		{"negative numbers", "memory: {debounce_seconds: -1}\nsubagents: {max_per_run: -1, timeout_seconds: -5}\nsandbox: {max_upload_mb: -1}\nagent: {tool_timeout_seconds: -1}", []string{
			`config.yaml:4: agent.tool_timeout_seconds: must not be negative, got -1`,
			`config.yaml:1: memory.debounce_seconds: must not be negative, got -1`,
			`config.yaml:3: sandbox.max_upload_mb: must not be negative, got -1`,
			`config.yaml:2: subagents.max_per_run: must be between 1 and 50, got -1`,
			`config.yaml:2: subagents.timeout_seconds: must not be negative, got -5`}},
		{"subagent limits", "subagents:\n  max_per_response: 9\n  max_per_run: 51", []string{
			`config.yaml:2: subagents.max_per_response: must be between 1 and 8, got 9`,
			`config.yaml:3: subagents.max_per_run: must be between 1 and 50, got 51`}},
		{"subagent types", `models:
  - {name: fast, model: m}
subagents:
  types:
    - {name: researcher, description: reads, tools: [ls, read_file], model: fast, max_turns: 10, timeout_seconds: 60}
    - {name: "bad name", description: x}
    - {name: bash, description: x}
    - {name: researcher, description: x, model: slow}
    - name: nodesc
      tools: [ls, task]
      max_turns: -1
`, []string{
			`config.yaml:6: subagents.types[1].name: must be a word of letters, digits, - or _ (such as researcher)`,
			`config.yaml:7: subagents.types[2].name: "bash" is a built-in type; pick another name`,
			`config.yaml:8: subagents.types[3].name: duplicate type "researcher"`,
			`config.yaml:8: subagents.types[3].model: no model is named "slow" in models`,
			`config.yaml:9: subagents.types[4].description: required`,
			`config.yaml:10: subagents.types[4].tools[1]: subagents cannot delegate: task is never given to them`,
			`config.yaml:11: subagents.types[4].max_turns: must not be negative, got -1`}},
		{"research limits", "research:\n  max_clarifications: 6\n  max_steps: 11\n  max_plan_iterations: -1", []string{
			`config.yaml:2: research.max_clarifications: must be between 0 and 5, got 6`,
			`config.yaml:3: research.max_steps: must be between 1 and 10, got 11`,
			`config.yaml:4: research.max_plan_iterations: must be between 0 and 10, got -1`}},
		{"research at the edges", "research: {enabled: false, max_clarifications: 0, max_steps: 10, max_plan_iterations: 0}", nil},
		{"skills admins", "skills:\n  admins: [telegram:1, \"1002\", \"slack:\"]", []string{
			`config.yaml:2: skills.admins[1]: must be "channel:user id", such as telegram:123456789`,
			`config.yaml:2: skills.admins[2]: must be "channel:user id", such as telegram:123456789`}},
		{"max_turns range", "agent:\n  max_turns: 1001", []string{`config.yaml:2: agent.max_turns: must be between 1 and 1000, got 1001`}},
		{"max_turns negative", "agent:\n  max_turns: -3", []string{`config.yaml:2: agent.max_turns: must be between 1 and 1000, got -3`}},
		{"max_queued range", "router:\n  max_queued: 10001", []string{`config.yaml:2: router.max_queued: must be between 1 and 10000, got 10001`}},
		{"mounts", `sandbox:
  mounts:
    - {host_path: /a, path: relative}
    - {path: /mnt/x}
    - {host_path: /c, path: /mnt/x/}
    - {host_path: /d, path: /mnt/user-data/outputs}
    - {host_path: /e, path: /}
    - {host_path: /f, path: /usr/local/data}
`, []string{
			`config.yaml:3: sandbox.mounts[0].path: must be an absolute virtual path such as /mnt/data`,
			`config.yaml:4: sandbox.mounts[1].host_path: required`,
			`config.yaml:5: sandbox.mounts[2].path: duplicate mount path "/mnt/x"`,
			`config.yaml:6: sandbox.mounts[3].path: overlaps /mnt/user-data, which the sandbox provides`,
			`config.yaml:7: sandbox.mounts[4].path: must be an absolute virtual path such as /mnt/data`,
			`config.yaml:8: sandbox.mounts[5].path: is inside /usr, which the sandbox keeps read-only; use a path such as /mnt/data`}},
		{"mcp", `mcp:
  servers:
    - command: x
    - name: both
      command: x
      url: http://h
    - name: neither
    - name: both
      url: "nope"
`, []string{
			`config.yaml:3: mcp.servers[0].name: required`,
			`config.yaml:4: mcp.servers[1]: needs exactly one of command (stdio) or url (HTTP)`,
			`config.yaml:7: mcp.servers[2]: needs exactly one of command (stdio) or url (HTTP)`,
			`config.yaml:8: mcp.servers[3].name: duplicate server name "both"`,
			`config.yaml:9: mcp.servers[3].url: must be an http(s) URL`}},
		{"web search provider", "tools:\n  web_search:\n    provider: google", []string{
			`config.yaml:3: tools.web_search.provider: must be duckduckgo, tavily, brave, searxng or none`}},
		{"web search needs", "tools:\n  web_search:\n    provider: brave\n    max_results: 11\n", []string{
			`config.yaml:2: tools.web_search.api_key: required for the brave provider`,
			`config.yaml:4: tools.web_search.max_results: must be between 1 and 10, got 11`}},
		{"searxng needs a url", "tools:\n  web_search:\n    provider: searxng\n", []string{
			`config.yaml:2: tools.web_search.url: required for searxng: the instance's URL`}},
		{"log enums", "log:\n  level: verbose\n  format: xml", []string{
			`config.yaml:2: log.level: must be "debug", "info", "warn" or "error"`,
			`config.yaml:3: log.format: must be "text" or "json"`}},
		{"http listen", "http:\n  listen: 9090", []string{`config.yaml:2: http.listen: must be host:port, e.g. 127.0.0.1:9090`}},
		{"http listen port", "http:\n  listen: localhost:http", []string{`config.yaml:2: http.listen: must be host:port, e.g. 127.0.0.1:9090`}},
		{"agents", `agents:
  - {name: Coder}
  - {name: ok, model: huge, mcp_servers: [docs], memory: forever}
  - {name: ok}
`, []string{
			`config.yaml:2: agents[0].name: must be 1 to 32 of a-z, 0-9 and -, got "Coder"`,
			`config.yaml:3: agents[1].model: agent "ok": no model named "huge" in models`,
			`config.yaml:3: agents[1].mcp_servers[0]: agent "ok": no MCP server named "docs" in mcp.servers`,
			`config.yaml:3: agents[1].memory: must be "shared" or "own"`,
			`config.yaml:4: agents[2].name: duplicate agent name "ok"`}},
		{"transcription", "transcription:\n  model: whisper-1\n  base_url: nope\nuploads:\n  convert: {max_mb: 5000}", []string{
			`config.yaml:5: uploads.convert.max_mb: must be between 1 and 2048, got 5000`,
			`config.yaml:3: transcription.base_url: must be an http(s) URL`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErrors(t, tt.yml, tt.want) })
	}
}

func TestValidateTypedErrors(t *testing.T) {
	err := mustParse(t, "memory:\n  scope: x\n").Validate()
	var e *Error
	if !errors.As(err, &e) || e.Key != "memory.scope" || e.Line != 2 || e.File != "config.yaml" {
		t.Errorf("errors.As = %+v", e)
	}
	// A Config built in code has no file or lines.
	c := Default()
	c.src = nil
	c.Agent.MaxTurns = 0
	if err := c.Validate(); err == nil || err.Error() != "agent.max_turns: must be between 1 and 1000, got 0" {
		t.Errorf("err = %v", err)
	}
	c.Agent.MaxTurns = 100
	c.MCP.DeferThreshold = -1
	if err := c.Validate(); err == nil || err.Error() != "mcp.defer_threshold: must not be negative, got -1" {
		t.Errorf("err = %v", err)
	}
	c.Models = nil
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "models: at least one model is required") {
		t.Errorf("err = %v", err)
	}
}

const secretYAML = `
models:
  - model: m
    api_key: sk-SECRET0
    base_url: "https://user:SECRET1@llm.example/v1?key=SECRET11&api-version=2"
channels:
  telegram: {bot_token: "SECRET2", api_url: "SECRET3-not-a-url"}
  slack: {enabled: true, bot_token: xapp-SECRET4, app_token: SECRET5}
  lark: {enabled: true, app_secret: SECRET6}
mcp:
  servers:
    - name: s
      url: "http://SECRET7@h/mcp"
      command: also-set
      headers: {Authorization: Bearer SECRET8}
      env: {TOKEN: SECRET9}
http: {api_token: SECRET10}
`

func TestSecretsNotInErrors(t *testing.T) {
	c := mustParse(t, secretYAML)
	err := c.Validate()
	if err == nil {
		t.Fatal("want validation errors")
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error leaks a secret:\n%v", err)
	}
	// A wrong shape under a secret key is reported without its content.
	_, err = parse([]byte("channels:\n  slack:\n    bot_token: {x: SECRET}\n"), "c.yaml", mapLookup(nil))
	if want := "c.yaml:3: channels.slack.bot_token: expected a string, got a mapping"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// checkErrors checks that yml parses and fails validation with exactly
// want, one error a line.
func checkErrors(t *testing.T, yml string, want []string) {
	t.Helper()
	err := mustParse(t, yml).Validate()
	var got []string
	if err != nil {
		got = strings.Split(err.Error(), "\n")
	}
	if !slices.Equal(got, want) {
		t.Errorf("error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}
