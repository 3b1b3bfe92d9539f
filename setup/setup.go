// Package setup is `deerflow init`: it asks (or, with --yes, takes from
// flags and the environment) which chat platforms and which model to use,
// checks every token against its platform and the model against its
// endpoint, asks who may use the bot, and writes a config.yaml that
// config.Load accepts.
//
// It imports config and internal/redact of ours, and the platforms' client
// libraries; nothing of the running service (no channels, no runner).
package setup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/deerflow/deerflow/deploy"
)

// slackManifest is what to paste into Slack's "Create New App → From an
// app manifest".
var slackManifest = deploy.SlackManifest

// The platforms, in the order they are asked about and written.
var platforms = []string{"telegram", "slack", "lark"}

// Defaults of the endpoints; the config's own defaults are the same.
const (
	defaultBaseURL     = "https://api.openai.com/v1"
	defaultModel       = "gpt-4o-mini"
	defaultTelegramURL = "https://api.telegram.org"
	defaultSlackURL    = "https://slack.com/api/"
	feishuDomain       = "https://open.feishu.cn"
	larkDomain         = "https://open.larksuite.com"
)

// secret is a token, key or id that may come from the environment.
type secret struct {
	Value string
	Env   string // the variable it was read from; "" when typed or given as a flag
}

// answers is everything the config is written from.
type answers struct {
	Platforms []string // a subset of platforms, in their order

	TelegramToken secret
	TelegramURL   string
	TelegramAllow []string

	SlackBot, SlackApp secret
	SlackURL           string
	SlackAllow         []string

	LarkID, LarkSecret secret
	LarkDomain         string
	LarkAllow          []string

	BaseURL, Model string
	APIKey         secret

	telegramBot, slackBot string // the bots' usernames, learnt by the checks
}

// has reports whether platform p was chosen.
func (a *answers) has(p string) bool {
	for _, q := range a.Platforms {
		if q == p {
			return true
		}
	}
	return false
}

// lookupFunc is os.LookupEnv, replaced in tests.
type lookupFunc func(string) (string, bool)

// Run runs `deerflow init` with args (the words after "init") and returns
// the process exit code: 0 when config.yaml was written, 1 when a check
// failed or the file could not be written, 2 for a usage error or a
// missing answer. Questions go to stdout and answers come from stdin, one
// a line; problems go to stderr, one sentence each.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, os.LookupEnv, stdin, stdout, stderr)
}

func run(ctx context.Context, args []string, env lookupFunc, stdin io.Reader, stdout, stderr io.Writer) int {
	f, code := parseFlags(args, env, stderr)
	if f == nil {
		return code
	}
	if f.manifest {
		fmt.Fprint(stdout, slackManifest)
		return 0
	}
	if !f.force {
		if _, err := os.Lstat(f.path); err == nil {
			fmt.Fprintf(stderr, "%s already exists: deerflow init does not overwrite it (pass --force to replace it, or --config to write another file).\n", f.path)
			return 1
		}
	}
	a, code := f.answers, 0
	if f.yes {
		code = complete(ctx, &a, f, stdout, stderr)
	} else {
		code = interview(ctx, &a, f, newPrompter(stdin, stdout), stderr)
	}
	if code != 0 {
		return code
	}
	if err := write(f.path, render(&a), f.force); err != nil {
		fmt.Fprintf(stderr, "Could not write %s: %v; nothing was written.\n", f.path, errText(err))
		return 1
	}
	nextSteps(stdout, &a, f.path)
	return 0
}

// complete checks the answers of --yes: first that nothing is missing,
// then each against its platform, saying every problem at once.
func complete(ctx context.Context, a *answers, f *flags, stdout, stderr io.Writer) int {
	if missing := a.missing(f); len(missing) > 0 {
		for _, m := range missing {
			fmt.Fprintln(stderr, m)
		}
		return 2
	}
	warnOpen(stderr, a)
	if f.noCheck {
		fmt.Fprintln(stderr, "Not checking the tokens and the model (--no-check): `deerflow serve` will say if one is wrong.")
		return 0
	}
	failed := false
	for _, c := range a.checks() {
		ok, err := c(ctx)
		if err != nil {
			fmt.Fprintln(stderr, sentence(err))
			failed = true
			continue
		}
		fmt.Fprintln(stdout, "✓ "+ok)
	}
	if failed {
		fmt.Fprintln(stderr, "Nothing was written.")
		return 1
	}
	return 0
}

// missing returns one sentence per answer --yes needs and did not get.
func (a *answers) missing(f *flags) []string {
	var out []string
	add := func(cond bool, s string) {
		if cond {
			out = append(out, s)
		}
	}
	add(!f.platformSet, "--platform is missing: name telegram, slack and/or lark (comma-separated), or none to use only the terminal.")
	add(a.has("telegram") && a.TelegramToken.Value == "", "The Telegram bot token is missing: set TELEGRAM_BOT_TOKEN or pass --telegram-token (@BotFather sends it when you create the bot).")
	add(a.has("slack") && a.SlackBot.Value == "", "The Slack bot token is missing: set SLACK_BOT_TOKEN or pass --slack-bot-token (xoxb-…, the Bot User OAuth Token under Install App).")
	add(a.has("slack") && a.SlackApp.Value == "", "The Slack app-level token is missing: set SLACK_APP_TOKEN or pass --slack-app-token (xapp-…, under Basic Information → App-Level Tokens, with connections:write).")
	add(a.has("lark") && a.LarkID.Value == "", "The Lark app id is missing: set LARK_APP_ID or pass --lark-app-id (cli_…, under Credentials & Basic Info).")
	add(a.has("lark") && a.LarkSecret.Value == "", "The Lark app secret is missing: set LARK_APP_SECRET or pass --lark-app-secret (under Credentials & Basic Info).")
	add(a.APIKey.Value == "" && sameURL(a.BaseURL, defaultBaseURL), "The model's API key is missing: set OPENAI_API_KEY or pass --api-key (or point --base-url at a server that needs none).")
	if !f.allowEveryone {
		for _, p := range a.Platforms {
			add(len(a.allow(p)) == 0, fmt.Sprintf("Nobody is named who may use the %s bot: pass --%s-allow with %s, or --allow-everyone to let anyone who finds it use it.", title(p), p, allowWhat(p)))
		}
	}
	return out
}

// warnOpen warns, loudly, about every bot anyone may use.
func warnOpen(w io.Writer, a *answers) {
	for _, p := range a.Platforms {
		if len(a.allow(p)) == 0 {
			fmt.Fprintf(w, "WARNING: anyone who finds the %s bot can use it: run commands in its sandbox and spend your model's tokens. Set channels.%s.allowed_users in the config to stop that.\n", title(p), p)
		}
	}
}

func (a *answers) allow(p string) []string {
	switch p {
	case "telegram":
		return a.TelegramAllow
	case "slack":
		return a.SlackAllow
	}
	return a.LarkAllow
}

func title(p string) string {
	switch p {
	case "telegram":
		return "Telegram"
	case "slack":
		return "Slack"
	}
	return "Lark"
}

func allowWhat(p string) string {
	switch p {
	case "telegram":
		return "@usernames or numeric user ids"
	case "slack":
		return "Slack member ids (U0123ABCD)"
	}
	return "open ids (ou_…)"
}

// sameURL compares two URLs ignoring a trailing slash.
func sameURL(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// errText is err for a person: the innermost cause, without wrapping.
func errText(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
