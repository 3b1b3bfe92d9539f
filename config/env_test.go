package config

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// With no file, the environment alone makes a service: a channel whose
// token is set is on, with its allow-list; the API has its token and
// address; state goes where DEERFLOW_DATA_DIR says.
func TestEnvOnly(t *testing.T) {
	c, err := parse(nil, "", mapLookup(map[string]string{
		"OPENAI_API_KEY":                  "sk-x",
		"TELEGRAM_BOT_TOKEN":              "1:tok",
		"DEERFLOW_TELEGRAM_ALLOWED_USERS": " 42, @ann ,,",
		"DEERFLOW_API_TOKEN":              "0123456789abcdef0123456789abcdef",
		"DEERFLOW_HTTP_LISTEN":            "0.0.0.0:9090",
		"DEERFLOW_DATA_DIR":               "/data",
		"SLACK_BOT_TOKEN":                 "xoxb-1",
		"SLACK_APP_TOKEN":                 "xapp-1",
		"DEERFLOW_SLACK_ALLOWED_USERS":    "U1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	tg, sl := c.Channels.Telegram, c.Channels.Slack
	if !tg.Enabled || tg.BotToken != "1:tok" || !slices.Equal(tg.AllowedUsers, []string{"42", "@ann"}) {
		t.Errorf("telegram = %+v", tg)
	}
	if !sl.Enabled || !slices.Equal(sl.AllowedUsers, []string{"U1"}) || c.Channels.Lark.Enabled {
		t.Errorf("slack on %v %v, lark on %v", sl.Enabled, sl.AllowedUsers, c.Channels.Lark.Enabled)
	}
	if c.HTTP.APIToken == "" || c.HTTP.Listen != "0.0.0.0:9090" || c.DataDir != "/data" {
		t.Errorf("http %q, data_dir %q", c.HTTP.Listen, c.DataDir)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
}

// A value in the file wins over the environment; a file that says
// enabled: false keeps the channel off even with its token set.
func TestEnvFileWins(t *testing.T) {
	env := mapLookup(map[string]string{"TELEGRAM_BOT_TOKEN": "1:env", "DEERFLOW_TELEGRAM_ALLOWED_USERS": "7", "DEERFLOW_DATA_DIR": "/env"})
	c, err := parse([]byte("data_dir: /file\nchannels:\n  telegram: {enabled: false, allowed_users: [9]}\n"), "config.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if tg := c.Channels.Telegram; tg.Enabled || !slices.Equal(tg.AllowedUsers, []string{"9"}) || c.DataDir != "/file" {
		t.Errorf("telegram %+v, data_dir %q", tg, c.DataDir)
	}
}

// Every documented variable is one EnvVars lists, and each is unique.
func TestEnvVarsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range EnvVars {
		if seen[e.Name] || seen[e.Key] {
			t.Errorf("%s (%s) listed twice", e.Name, e.Key)
		}
		seen[e.Name], seen[e.Key] = true, true
	}
}

// A file with wrong types, an unknown key and wrong values reports them
// all from one Validate; the key whose type is wrong is not reported
// again by the value checks.
func TestValidateAfterDecodeErrors(t *testing.T) {
	yml := "agent:\n  max_turns: lots\n  max_turnz: 6\nmemory:\n  scope: team\nhttp:\n  api_token: x\n"
	c, err := parse([]byte(yml), "config.yaml", mapLookup(nil))
	if err == nil || c == nil {
		t.Fatalf("parse: %v, %v", c, err)
	}
	got := strings.Split(c.Validate().Error(), "\n")
	want := []string{
		`config.yaml:2: agent.max_turns: expected an integer, got a value of 4 characters`,
		`config.yaml:3: unknown key "agent.max_turnz"`,
		`config.yaml:7: http.api_token: must be at least 32 characters long (it has 1); generate one with: openssl rand -hex 32`,
		`config.yaml:5: memory.scope: must be "user" or "chat"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A missing key names the variable that should have held it.
func TestModelKeys(t *testing.T) {
	for _, tt := range []struct {
		name, yml string
		env       map[string]string
		want      string
	}{
		{"defaults", "", nil, "models[0].api_key: $OPENAI_API_KEY is not set (api.openai.com needs a key: export OPENAI_API_KEY)"},
		{"written variable", "models:\n  - {model: m, api_key: $MY_KEY}\n", nil,
			"config.yaml:2: models[0].api_key: $MY_KEY is not set (api.openai.com needs a key: set models[0].api_key)"},
		{"not written", "models:\n  - {model: m}\n", nil, "config.yaml:2: models[0].api_key: api.openai.com needs a key: set models[0].api_key"},
		{"set", "", map[string]string{"OPENAI_API_KEY": "sk"}, ""},
		{"local server", "models:\n  - {model: m, base_url: \"http://127.0.0.1:11434/v1\"}\n", nil, ""},
	} {
		c, err := parse([]byte(tt.yml), "config.yaml", mapLookup(tt.env))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := c.ModelKeys(); err != nil {
			got = err.Error()
		}
		if tt.yml == "" {
			got = strings.TrimPrefix(got, "config.yaml: ")
		}
		if got != tt.want {
			t.Errorf("%s: got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// Warnings: a channel open to everyone, and a key variable that is not
// set for a server that may not need one; never an error.
func TestWarnings(t *testing.T) {
	yml := "models:\n  - {model: m, base_url: \"http://127.0.0.1:1/v1\", api_key: $LOCAL_KEY}\nchannels:\n  telegram: {enabled: true, bot_token: \"1:x\"}\n  slack: {enabled: true, bot_token: xoxb-1, app_token: xapp-1, allowed_users: [U1]}\n"
	c := mustParse(t, yml)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, w.Error())
	}
	want := []string{
		"config.yaml:4: channels.telegram.allowed_users: channel telegram is open to everyone: anyone who finds the bot can use it and its tools; list who may in channels.telegram.allowed_users or DEERFLOW_TELEGRAM_ALLOWED_USERS",
		"config.yaml:2: models[0].api_key: $LOCAL_KEY is not set: requests to m go without a key",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The container's built-in configuration, with the environment of
// deploy/deerflow.env.example: Telegram on with its allow-list, the API
// with its token, state in /data; TELEGRAM_ENABLED=false keeps it off.
func TestContainerConfig(t *testing.T) {
	data, err := os.ReadFile("../deploy/container.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"OPENAI_API_KEY": "sk-x", "TELEGRAM_BOT_TOKEN": "1:x", "DEERFLOW_TELEGRAM_ALLOWED_USERS": "12345678,@alice",
		"DEERFLOW_API_TOKEN": "0123456789abcdef0123456789abcdef",
	}
	c, err := parse(data, "container.yaml", mapLookup(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(c.Validate(), c.ModelKeys()); err != nil {
		t.Fatal(err)
	}
	tg := c.Channels.Telegram
	if !tg.Enabled || len(tg.AllowedUsers) != 2 || c.HTTP.APIToken == "" || c.HTTP.Listen != "0.0.0.0:9090" || c.DataDir != "/data" {
		t.Errorf("telegram on %v, users %v, api token set %v, listen %q, data_dir %q", tg.Enabled, tg.AllowedUsers, c.HTTP.APIToken != "", c.HTTP.Listen, c.DataDir)
	}
	if c.Channels.Slack.Enabled || c.Channels.Lark.Enabled || len(c.Warnings()) != 0 {
		t.Errorf("slack %v, lark %v, warnings %v", c.Channels.Slack.Enabled, c.Channels.Lark.Enabled, c.Warnings())
	}
	env["TELEGRAM_ENABLED"] = "false"
	if c, _ := parse(data, "container.yaml", mapLookup(env)); c.Channels.Telegram.Enabled {
		t.Error("TELEGRAM_ENABLED=false left Telegram on")
	}
}
