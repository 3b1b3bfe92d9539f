package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A scripted session answers the questions the way a person would, one
// wrong token included, and gets the file --yes writes from the same
// answers.
func TestInteractiveWritesWhatYesWrites(t *testing.T) {
	w := newWorld(t)
	w.env["OPENAI_API_KEY"] = "sk-good"
	yesPath := filepath.Join(w.dir, "yes.yaml")
	args := slicesDelete(w.flags("--config", yesPath), "--api-key")
	if code, _, stderr := w.run(t, "", args...); code != 0 {
		t.Fatalf("--yes: exit %d: %s", code, stderr)
	}
	session := strings.Join([]string{
		"telegram, slack, lark",
		"123456:wrong", // refused: asked again
		tgToken,
		"@ann 12345",
		w.slack.BotToken,
		w.slack.AppToken,
		"U0ANN",
		w.lark.URL,
		w.lark.AppID,
		w.lark.AppSecret,
		"ou_ann",
		w.model.URL,
		"fake-model",
		"", // Enter: the key from $OPENAI_API_KEY
	}, "\n") + "\n"
	code, stdout, stderr := w.run(t, session, "--config", w.path(), "--telegram-api-url", w.tg.URL, "--slack-api-url", w.slack.URL+"/api/")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if stderr != "Telegram says the token is not valid (401): copy it again from @BotFather.\n" {
		t.Errorf("stderr:\n%s", stderr)
	}
	for _, want := range []string{
		"Telegram bot token: Try again:\nTelegram bot token [as given]: ✓ Telegram: the bot is @deerflow_test_bot",
		"API key (Enter with none: the server needs no key) [$OPENAI_API_KEY from the environment]: ✓ Model: fake-model is served at",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	yes, _ := os.ReadFile(yesPath)
	got, _ := os.ReadFile(w.path())
	if d := cmp.Diff(string(yes), string(got)); d != "" {
		t.Errorf("interactive file differs from --yes's (-yes +interactive):\n%s", d)
	}
	if cfg := w.load(t); cfg.Channels.Telegram.BotToken != tgToken || cfg.DefaultModel().APIKey != "sk-good" {
		t.Errorf("config: %+v %+v", cfg.Channels.Telegram, cfg.DefaultModel())
	}
}

func TestInteractiveAsksAgainAndWarnsAboutEveryone(t *testing.T) {
	w := newWorld(t)
	w.env["TELEGRAM_BOT_TOKEN"] = tgToken
	session := "telegrm\ntelegram\n\nann, bob!\n\n" + w.model.URL + "\nfake-model\nsk-good\n"
	code, stdout, stderr := w.run(t, session, "--config", w.path(), "--telegram-api-url", w.tg.URL)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := `"telegrm" is not a platform deerflow knows: name telegram, slack and/or lark, or none.
"bob!" is neither a Telegram @username nor a numeric user id.
WARNING: anyone who finds the Telegram bot can use it: run commands in its sandbox and spend your model's tokens. Set channels.telegram.allowed_users in the config to stop that.
`
	if stderr != want {
		t.Errorf("stderr:\n%s", cmp.Diff(want, stderr))
	}
	data, _ := os.ReadFile(w.path())
	for _, line := range []string{"bot_token: $TELEGRAM_BOT_TOKEN  #", "allowed_users: []  # WARNING", `api_key: "sk-good"`} {
		if !strings.Contains(string(data), line) {
			t.Errorf("file lacks %q:\n%s", line, data)
		}
	}
	w.load(t)
}

func TestInteractiveInputEndsEarly(t *testing.T) {
	w := newWorld(t)
	code, _, stderr := w.run(t, "telegram\n", "--config", w.path())
	if code != 1 || stderr != "The answers ended before the setup was done; nothing was written.\n" {
		t.Errorf("exit %d, stderr: %s", code, stderr)
	}
	if _, err := os.Stat(w.path()); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
}
