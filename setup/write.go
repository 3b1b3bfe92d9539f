package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// render writes the answers as config.yaml: only the keys init asked
// about; everything else keeps its default.
func render(a *answers) []byte {
	var b bytes.Buffer
	b.WriteString("# deerflow configuration, written by `deerflow init`. Every key not written\n" +
		"# here takes its default; config.yaml.example lists them all, with comments.\n" +
		"# Check this file with: deerflow check --config <this file>\n\n")
	b.WriteString("models:\n  - name: default\n")
	fmt.Fprintf(&b, "    model: %s\n    base_url: %s\n", quote(a.Model), quote(strings.TrimRight(a.BaseURL, "/")))
	writeSecret(&b, "    api_key", a.APIKey, "OPENAI_API_KEY", "none: the server asks for no key")
	if len(a.Platforms) > 0 {
		b.WriteString("\nchannels:\n")
	}
	for _, p := range a.Platforms {
		fmt.Fprintf(&b, "  %s:\n    enabled: true\n", p)
		switch p {
		case "telegram":
			writeSecret(&b, "    bot_token", a.TelegramToken, "TELEGRAM_BOT_TOKEN", "")
			if !sameURL(a.TelegramURL, defaultTelegramURL) {
				fmt.Fprintf(&b, "    api_url: %s\n", quote(strings.TrimRight(a.TelegramURL, "/")))
			}
		case "slack":
			writeSecret(&b, "    bot_token", a.SlackBot, "SLACK_BOT_TOKEN", "")
			writeSecret(&b, "    app_token", a.SlackApp, "SLACK_APP_TOKEN", "")
			if !sameURL(a.SlackURL, defaultSlackURL) {
				fmt.Fprintf(&b, "    api_url: %s\n", quote(strings.TrimRight(a.SlackURL, "/")+"/"))
			}
		case "lark":
			writeSecret(&b, "    app_id", a.LarkID, "LARK_APP_ID", "")
			writeSecret(&b, "    app_secret", a.LarkSecret, "LARK_APP_SECRET", "")
			fmt.Fprintf(&b, "    domain: %s\n", quote(a.LarkDomain))
		}
		writeAllow(&b, a.allow(p))
	}
	return b.Bytes()
}

// writeSecret writes key: the variable's reference when the value came
// from the environment, else the value itself, with a comment saying which.
func writeSecret(b *bytes.Buffer, key string, s secret, envName, emptyNote string) {
	switch {
	case s.Env == "" && envName == "LARK_APP_ID": // an id, not a secret
		fmt.Fprintf(b, "%s: %s\n", key, quote(s.Value))
	case s.Env != "":
		fmt.Fprintf(b, "%s: $%s  # read from the environment when deerflow starts: export %s there\n", key, s.Env, s.Env)
	case s.Value == "":
		fmt.Fprintf(b, "%s: \"\"  # %s\n", key, emptyNote)
	default:
		fmt.Fprintf(b, "%s: %s  # written here as given: keep this file private, or write $%s and export that variable\n", key, quote(s.Value), envName)
	}
}

func writeAllow(b *bytes.Buffer, users []string) {
	if len(users) == 0 {
		b.WriteString("    allowed_users: []  # WARNING: empty lets anyone who finds the bot use it\n")
		return
	}
	q := make([]string, len(users))
	for i, u := range users {
		q[i] = quote(u)
	}
	fmt.Fprintf(b, "    allowed_users: [%s]  # who may use the bot; nobody else gets an answer\n", strings.Join(q, ", "))
}

// quote writes s as a YAML double-quoted scalar (a JSON string is one),
// with $ doubled so that the config's $VAR expansion leaves it as typed.
func quote(s string) string {
	j, _ := json.Marshal(strings.ReplaceAll(s, "$", "$$"))
	return string(j)
}

// write puts data at path, readable only by its owner. Without force an
// existing file is never replaced; with it, the old file is replaced in
// one rename, so a failure leaves it whole.
func write(path string, data []byte, force bool) error {
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err = f.Write(data); err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename: nothing there
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o600)
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// nextSteps says what to do now that the file is written.
func nextSteps(w io.Writer, a *answers, path string) {
	fmt.Fprintf(w, "\nWrote %s (only you can read it).\n\nNext:\n", path)
	for _, s := range []secret{a.APIKey, a.TelegramToken, a.SlackBot, a.SlackApp, a.LarkID, a.LarkSecret} {
		if s.Env != "" && (s.Env == "OPENAI_API_KEY" || a.has(platformOf(s.Env))) {
			fmt.Fprintf(w, "  export %s=…   # keep it set where deerflow runs: the config reads it from there\n", s.Env)
		}
	}
	flag := ""
	if filepath.Clean(path) != "config.yaml" {
		flag = " --config " + path
	}
	if len(a.Platforms) == 0 {
		fmt.Fprintf(w, "  deerflow chat%s   # talk to the agent in this terminal\n", flag)
		return
	}
	fmt.Fprintf(w, "  deerflow serve%s\n  (or first talk to it in this terminal: deerflow chat%s)\n", flag, flag)
	if a.has("telegram") && a.telegramBot != "" {
		fmt.Fprintf(w, "\nTelegram: open https://t.me/%s and say hello.\n", a.telegramBot)
	}
	if a.has("lark") {
		fmt.Fprint(w, "\nFeishu/Lark: with deerflow serve running, open the app's Events & Callbacks, choose\n"+
			"\"Receive events through persistent connection\", add the event im.message.receive_v1\n"+
			"and the callback card.action.trigger, then create a version and publish it.\n")
	}
	if a.has("slack") {
		botName := a.slackBot
		if botName == "" {
			botName = "deerflow"
		}
		fmt.Fprintf(w, "\nSlack: invite the bot with /invite @%s in a channel, or send it a direct message.\n"+
			"The app needs the settings of this manifest (Socket Mode, events, scopes, interactivity);\n"+
			"if it was not created from it, paste it under Features → App Manifest and save:\n\n%s", botName, slackManifest)
	}
}

// platformOf is the platform whose secret variable name is env.
func platformOf(env string) string {
	return strings.ToLower(strings.Split(env, "_")[0])
}
