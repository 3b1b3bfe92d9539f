package setup

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// flags is the command line of `deerflow init`, with the answers it gives
// (flags first, then the environment, then the defaults).
type flags struct {
	path                           string
	yes, force, noCheck, manifest  bool
	allowEveryone                  bool
	platformSet                    bool // --platform was given
	answers                        answers
	telegramAllow, slackAllow      string
	larkAllow                      string
	platformList, larkDomainOrName string
}

const usageHead = `Usage: deerflow init [--yes] [--force] [--config FILE] [flags]

Asks which chat platforms and which model to use, checks each token and the
model, asks who may use the bot, and writes config.yaml (readable only by
you). With --yes nothing is asked: the answers come from the flags and the
environment (TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN, SLACK_APP_TOKEN,
LARK_APP_ID, LARK_APP_SECRET, OPENAI_BASE_URL, OPENAI_MODEL,
OPENAI_API_KEY). Secrets from the environment are written as $VARIABLE
references, so prefer the environment to flags, which other users of this
machine can see in the process list.

Flags:
`

// parseFlags parses args; on failure or -h it returns nil and the exit code.
func parseFlags(args []string, env lookupFunc, stderr io.Writer) (*flags, int) {
	f := &flags{}
	fs := flag.NewFlagSet("deerflow init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usageHead); fs.PrintDefaults() }
	a := &f.answers
	var tgToken, slBot, slApp, lkID, lkSecret, key string
	fs.StringVar(&f.path, "config", "config.yaml", "the file to write")
	fs.BoolVar(&f.yes, "yes", false, "ask nothing: take every answer from the flags and the environment")
	fs.BoolVar(&f.yes, "y", false, "short for --yes")
	fs.BoolVar(&f.force, "force", false, "replace the file if it exists")
	fs.BoolVar(&f.noCheck, "no-check", false, "write the file without checking the tokens and the model")
	fs.BoolVar(&f.manifest, "slack-manifest", false, "print the Slack app manifest to paste at api.slack.com/apps, and exit")
	fs.StringVar(&f.platformList, "platform", "", "chat platforms: telegram, slack, lark, comma-separated; none: only the terminal")
	fs.StringVar(&tgToken, "telegram-token", "", "Telegram bot token from @BotFather (default $TELEGRAM_BOT_TOKEN)")
	fs.StringVar(&a.TelegramURL, "telegram-api-url", defaultTelegramURL, "the Telegram Bot API server, for a self-hosted one")
	fs.StringVar(&f.telegramAllow, "telegram-allow", "", "who may use the Telegram bot: @usernames or numeric ids, comma-separated")
	fs.StringVar(&slBot, "slack-bot-token", "", "Slack bot token, xoxb-… (default $SLACK_BOT_TOKEN)")
	fs.StringVar(&slApp, "slack-app-token", "", "Slack app-level token, xapp-… (default $SLACK_APP_TOKEN)")
	fs.StringVar(&a.SlackURL, "slack-api-url", defaultSlackURL, "Slack Web API base URL")
	fs.StringVar(&f.slackAllow, "slack-allow", "", "who may use the Slack app: member ids (U0123ABCD), comma-separated")
	fs.StringVar(&lkID, "lark-app-id", "", "Feishu/Lark app id, cli_… (default $LARK_APP_ID)")
	fs.StringVar(&lkSecret, "lark-app-secret", "", "Feishu/Lark app secret (default $LARK_APP_SECRET)")
	fs.StringVar(&f.larkDomainOrName, "lark-domain", "feishu", "feishu, lark, or the open platform's URL")
	fs.StringVar(&f.larkAllow, "lark-allow", "", "who may use the Feishu/Lark app: open ids (ou_…), comma-separated")
	fs.StringVar(&a.BaseURL, "base-url", "", "OpenAI-compatible base URL (default $OPENAI_BASE_URL, else "+defaultBaseURL+")")
	fs.StringVar(&a.Model, "model", "", "the provider's model id (default $OPENAI_MODEL, else "+defaultModel+")")
	fs.StringVar(&key, "api-key", "", "the model's API key (default $OPENAI_API_KEY)")
	fs.BoolVar(&f.allowEveryone, "allow-everyone", false, "with --yes: let anyone use a bot whose allow list is empty")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, 0
		}
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "deerflow init takes no arguments, got %q; see deerflow init -h.\n", fs.Arg(0))
		return nil, 2
	}
	fs.Visit(func(fl *flag.Flag) { f.platformSet = f.platformSet || fl.Name == "platform" })
	a.TelegramToken = fromEnv(tgToken, "TELEGRAM_BOT_TOKEN", env)
	a.SlackBot, a.SlackApp = fromEnv(slBot, "SLACK_BOT_TOKEN", env), fromEnv(slApp, "SLACK_APP_TOKEN", env)
	a.LarkID, a.LarkSecret = fromEnv(lkID, "LARK_APP_ID", env), fromEnv(lkSecret, "LARK_APP_SECRET", env)
	a.APIKey = fromEnv(key, "OPENAI_API_KEY", env)
	a.BaseURL = orEnv(a.BaseURL, "OPENAI_BASE_URL", defaultBaseURL, env)
	a.Model = orEnv(a.Model, "OPENAI_MODEL", defaultModel, env)
	if code := f.parseLists(stderr); code != 0 {
		return nil, code
	}
	return f, 0
}

// parseLists reads --platform, --lark-domain and the allow lists.
func (f *flags) parseLists(stderr io.Writer) int {
	a := &f.answers
	var err error
	if a.Platforms, err = parsePlatforms(f.platformList); err != nil {
		fmt.Fprintln(stderr, sentence(err))
		return 2
	}
	if a.LarkDomain, err = parseDomain(f.larkDomainOrName); err != nil {
		fmt.Fprintln(stderr, sentence(err))
		return 2
	}
	for _, l := range []struct {
		p, s string
		to   *[]string
	}{{"telegram", f.telegramAllow, &a.TelegramAllow}, {"slack", f.slackAllow, &a.SlackAllow}, {"lark", f.larkAllow, &a.LarkAllow}} {
		if *l.to, err = parseAllow(l.p, l.s); err != nil {
			fmt.Fprintln(stderr, sentence(err))
			return 2
		}
	}
	return 0
}

// fromEnv is the flag's value, else the variable's (remembered as such).
func fromEnv(flagValue, name string, env lookupFunc) secret {
	if flagValue != "" {
		return secret{Value: flagValue}
	}
	if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
		return secret{Value: strings.TrimSpace(v), Env: name}
	}
	return secret{}
}

// orEnv is the flag's value, else the variable's, else def.
func orEnv(flagValue, name, def string, env lookupFunc) string {
	if flagValue != "" {
		return flagValue
	}
	if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// parsePlatforms reads "telegram, slack" (or "none", or "") into platforms'
// order.
func parsePlatforms(s string) ([]string, error) {
	var out []string
	for _, w := range splitList(strings.ToLower(s)) {
		switch w {
		case "none":
		case "feishu":
			w = "lark"
			fallthrough
		case "telegram", "slack", "lark":
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		default:
			return nil, fault("%q is not a platform deerflow knows: name telegram, slack and/or lark, or none.", w)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(platforms, a) - slices.Index(platforms, b) })
	return out, nil
}

// parseDomain reads --lark-domain: feishu, lark or a URL.
func parseDomain(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "feishu":
		return feishuDomain, nil
	case "lark", "larksuite":
		return larkDomain, nil
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return "", fault("The Lark domain %q is neither feishu, lark nor an http(s) URL.", s)
	}
	return strings.TrimRight(strings.TrimSpace(s), "/"), nil
}

// splitList splits at commas and white space, dropping empty words.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' })
}
