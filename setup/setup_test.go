package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

const tgToken = "123456:secret-token"

// world is the four fake parties init talks to, and the flags that point
// it at them with good credentials.
type world struct {
	tg    *faketelegram.Server
	slack *fakeslack.Server
	lark  *fakelark.Server
	model *fakeopenai.Server
	dir   string
	env   map[string]string
}

func newWorld(t *testing.T) *world {
	w := &world{
		tg: faketelegram.New(t, tgToken), slack: fakeslack.New(t), lark: fakelark.New(t), model: fakeopenai.New(t),
		dir: t.TempDir(), env: map[string]string{},
	}
	w.model.Key, w.model.Models = "sk-good", []string{"fake-model", "fake-model-large"}
	return w
}

func (w *world) path() string { return filepath.Join(w.dir, "config.yaml") }

// flags are --yes flags for every platform, each overridable by a later
// flag of the same name (the flag package keeps the last).
func (w *world) flags(extra ...string) []string {
	return append([]string{"--yes", "--config", w.path(),
		"--platform", "telegram,slack,lark",
		"--telegram-token", tgToken, "--telegram-api-url", w.tg.URL, "--telegram-allow", "@ann, 12345",
		"--slack-bot-token", w.slack.BotToken, "--slack-app-token", w.slack.AppToken,
		"--slack-api-url", w.slack.URL + "/api/", "--slack-allow", "U0ANN",
		"--lark-app-id", w.lark.AppID, "--lark-app-secret", w.lark.AppSecret, "--lark-domain", w.lark.URL,
		"--lark-allow", "ou_ann",
		"--base-url", w.model.URL, "--model", "fake-model", "--api-key", "sk-good",
	}, extra...)
}

// run runs init with w's environment; stdin is the interactive answers.
func (w *world) run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := w.env[k]; return v, ok }
	code = run(context.Background(), args, lookup, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// load reads the written file as deerflow serve would, with w's
// environment set for its $VAR references.
func (w *world) load(t *testing.T) *config.Config {
	t.Helper()
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	cfg, used, err := config.Resolve(w.path())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if used != w.path() {
		t.Fatalf("used %q", used)
	}
	return cfg
}

func TestYesWritesAConfigTheLoaderAccepts(t *testing.T) {
	w := newWorld(t)
	w.env["OPENAI_API_KEY"] = "sk-good" // from the environment: written as $OPENAI_API_KEY
	args := w.flags()
	args = slicesDelete(args, "--api-key")
	code, stdout, stderr := w.run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"✓ Telegram: the bot is @deerflow_test_bot (DeerFlow)\n",
		"✓ Slack: the bot is @deerflow in Test (T0TEAM); Socket Mode opens\n",
		"✓ Feishu: app " + w.lark.AppID + " gets a tenant token\n",
		"✓ Model: fake-model is served at " + w.model.URL + "\n",
		"export OPENAI_API_KEY=…",
		"deerflow serve --config " + w.path(),
		"https://t.me/deerflow_test_bot",
		"/invite @deerflow",
		"socket_mode_enabled: true",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	if fi, err := os.Stat(w.path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fi, err)
	}
	data, _ := os.ReadFile(w.path())
	if !strings.Contains(string(data), "api_key: $OPENAI_API_KEY  #") || strings.Contains(string(data), "sk-good") {
		t.Errorf("the key from the environment is not written as a reference:\n%s", data)
	}
	cfg := w.load(t)
	m := cfg.DefaultModel()
	got := []any{m.Model, m.BaseURL, m.APIKey, cfg.Channels.Telegram, cfg.Channels.Slack.BotToken, cfg.Channels.Slack.AppToken,
		cfg.Channels.Slack.APIURL, cfg.Channels.Slack.AllowedUsers, cfg.Channels.Lark.AppID, cfg.Channels.Lark.AppSecret,
		cfg.Channels.Lark.Domain, cfg.Channels.Lark.AllowedUsers, cfg.Channels.Slack.Enabled, cfg.Channels.Lark.Enabled}
	tg := cfg.Channels.Telegram
	tg.Enabled, tg.BotToken, tg.APIURL, tg.AllowedUsers = true, tgToken, w.tg.URL, []string{"@ann", "12345"}
	want := []any{"fake-model", w.model.URL, "sk-good", tg, "xoxb-test", "xapp-test",
		w.slack.URL + "/api/", []string{"U0ANN"}, w.lark.AppID, w.lark.AppSecret,
		w.lark.URL, []string{"ou_ann"}, true, true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
}

// slicesDelete drops flag name and its value from args.
func slicesDelete(args []string, name string) []string {
	for i, a := range args {
		if a == name {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
}

func TestYesSaysWhatIsWrongAndWritesNothing(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"telegram token refused", []string{"--telegram-token", "123456:wrong"},
			"Telegram says the token is not valid (401): copy it again from @BotFather."},
		{"telegram token malformed", []string{"--telegram-token", "not-a-token"},
			"That is not a Telegram bot token: one looks like 123456789:AAH…, as @BotFather sends it."},
		{"telegram unreachable", []string{"--telegram-api-url", "http://127.0.0.1:1"},
			"Could not reach Telegram at http://127.0.0.1:1 ("},
		{"slack bot token refused", []string{"--slack-bot-token", "xoxb-wrong"},
			"Slack says the bot token is not valid (invalid_auth): copy the Bot User OAuth Token (xoxb-…) again from Install App, and reinstall the app if it was removed."},
		{"slack app token refused", []string{"--slack-app-token", "xapp-wrong"},
			"Slack refused the app-level token (invalid_auth): create one with connections:write under Basic Information → App-Level Tokens, and turn on Socket Mode."},
		{"slack bot token as app token", []string{"--slack-app-token", "xoxb-test"},
			"The Slack app-level token must start with xapp-: create one with connections:write under Basic Information → App-Level Tokens."},
		{"lark secret refused", []string{"--lark-app-secret", "wrong"},
			"Feishu says the app id or secret is not valid (10014): copy both again from Credentials & Basic Info, and check --lark-domain (Feishu: feishu, Lark: lark)."},
		{"model key refused", []string{"--api-key", "sk-wrong"},
			"The model provider says the API key is not valid (401): check --api-key, and that the key belongs to " + w.model.URL + "."},
		{"model unknown", []string{"--model", "fake-modle"},
			w.model.URL + ` does not know the model "fake-modle": of the 2 it lists, the closest are fake-model, fake-model-large.`},
		{"base url without /v1", []string{"--base-url", strings.TrimSuffix(w.model.URL, "/v1")},
			"Nothing answers at " + strings.TrimSuffix(w.model.URL, "/v1") + "/chat/completions (404): the base URL probably needs /v1 at the end (" + w.model.URL + ")."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := w.run(t, "", w.flags(tc.flags...)...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], tc.want) || lines[1] != "Nothing was written." {
				t.Errorf("stderr:\n%s\nwant:\n%s\nNothing was written.", stderr, tc.want)
			}
			if strings.Contains(stderr+stdout, "wrong") && !strings.Contains(tc.want, "wrong") || strings.Contains(stderr, tgToken) {
				t.Errorf("a secret was echoed:\n%s", stderr)
			}
			if _, err := os.Stat(w.path()); !os.IsNotExist(err) {
				t.Errorf("a file was written: %v", err)
			}
		})
	}
}

func TestYesNamesEveryMissingAnswer(t *testing.T) {
	w := newWorld(t)
	code, _, stderr := w.run(t, "", "--yes", "--config", w.path(), "--platform", "telegram,slack")
	want := `The Telegram bot token is missing: set TELEGRAM_BOT_TOKEN or pass --telegram-token (@BotFather sends it when you create the bot).
The Slack bot token is missing: set SLACK_BOT_TOKEN or pass --slack-bot-token (xoxb-…, the Bot User OAuth Token under Install App).
The Slack app-level token is missing: set SLACK_APP_TOKEN or pass --slack-app-token (xapp-…, under Basic Information → App-Level Tokens, with connections:write).
The model's API key is missing: set OPENAI_API_KEY or pass --api-key (or point --base-url at a server that needs none).
Nobody is named who may use the Telegram bot: pass --telegram-allow with @usernames or numeric user ids, or --allow-everyone to let anyone who finds it use it.
Nobody is named who may use the Slack bot: pass --slack-allow with Slack member ids (U0123ABCD), or --allow-everyone to let anyone who finds it use it.
`
	if code != 2 || stderr != want {
		t.Errorf("exit %d, stderr:\n%s", code, cmp.Diff(want, stderr))
	}
	code, _, stderr = w.run(t, "", "--yes", "--config", w.path())
	if code != 2 || !strings.HasPrefix(stderr, "--platform is missing: name telegram, slack and/or lark (comma-separated), or none to use only the terminal.\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(w.path()); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
}

func TestYesEveryoneWarnsLoudly(t *testing.T) {
	w := newWorld(t)
	w.env["TELEGRAM_BOT_TOKEN"] = tgToken
	code, _, stderr := w.run(t, "", "--yes", "--config", w.path(), "--platform", "telegram", "--telegram-api-url", w.tg.URL,
		"--allow-everyone", "--base-url", w.model.URL, "--model", "fake-model", "--api-key", "sk-good")
	if code != 0 || !strings.Contains(stderr, "WARNING: anyone who finds the Telegram bot can use it") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	cfg := w.load(t)
	if tg := cfg.Channels.Telegram; len(tg.AllowedUsers) != 0 || tg.BotToken != tgToken || !tg.Enabled {
		t.Errorf("telegram = %+v", tg)
	}
	data, _ := os.ReadFile(w.path())
	if !strings.Contains(string(data), "bot_token: $TELEGRAM_BOT_TOKEN  #") {
		t.Errorf("file:\n%s", data)
	}
}

func TestExistingConfigIsKeptWithoutForce(t *testing.T) {
	w := newWorld(t)
	if err := os.WriteFile(w.path(), []byte("data_dir: ./mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := w.run(t, "", w.flags()...)
	if code != 1 || !strings.Contains(stderr, "already exists: deerflow init does not overwrite it (pass --force") {
		t.Errorf("exit %d, stderr: %s", code, stderr)
	}
	if data, _ := os.ReadFile(w.path()); string(data) != "data_dir: ./mine\n" {
		t.Errorf("overwritten: %s", data)
	}
	if code, _, stderr = w.run(t, "", w.flags("--force")...); code != 0 {
		t.Fatalf("--force: exit %d, stderr: %s", code, stderr)
	}
	if fi, _ := os.Stat(w.path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if cfg := w.load(t); cfg.DefaultModel().Model != "fake-model" || cfg.DataDir != "./.deerflow" {
		t.Errorf("not replaced: %+v", cfg.DefaultModel())
	}
	if entries, _ := os.ReadDir(w.dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestSlackManifestPrinted(t *testing.T) {
	w := newWorld(t)
	if code, stdout, _ := w.run(t, "", "--slack-manifest"); code != 0 || stdout != slackManifest {
		t.Errorf("--slack-manifest: exit %d", code)
	}
}

func TestNoCheckWritesWithoutAsking(t *testing.T) {
	w := newWorld(t)
	code, stdout, stderr := w.run(t, "", w.flags("--no-check", "--telegram-token", "123456:wrong", "--telegram-api-url", "http://127.0.0.1:1")...)
	if code != 0 || !strings.Contains(stderr, "Not checking the tokens and the model (--no-check)") || strings.Contains(stdout, "✓") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(w.tg.Calls()) != 0 {
		t.Errorf("telegram was called: %+v", w.tg.Calls())
	}
	if cfg := w.load(t); cfg.Channels.Telegram.BotToken != "123456:wrong" {
		t.Errorf("token %q", cfg.Channels.Telegram.BotToken)
	}
}
