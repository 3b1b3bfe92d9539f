package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// errEnded is returned when the answers end before the questions do.
var errEnded = errors.New("input ended")

// prompter asks questions on w and reads one answer a line from r.
type prompter struct {
	in io.Reader // for noEcho
	r  *bufio.Reader
	w  io.Writer
}

func newPrompter(r io.Reader, w io.Writer) *prompter { return &prompter{r, bufio.NewReader(r), w} }

// ask asks question; an empty answer takes def, shown in brackets.
func (p *prompter) ask(question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.w, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.w, "%s: ", question)
	}
	line, err := p.r.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		fmt.Fprintln(p.w)
		return "", errEnded
	}
	if line = strings.TrimSpace(line); line == "" {
		return def, nil
	}
	return line, nil
}

// askSecret asks for a token; an empty answer keeps cur, which is shown
// by where it came from, never by its value.
func (p *prompter) askSecret(question string, cur secret) (secret, error) {
	hint := ""
	switch {
	case cur.Env != "":
		hint = "$" + cur.Env + " from the environment"
	case cur.Value != "":
		hint = "as given"
	}
	restore, hidden := noEcho(p.in) // a terminal does not show what is typed
	v, err := p.ask(question, hint)
	restore()
	if hidden {
		fmt.Fprintln(p.w)
	}
	if err != nil || v == hint {
		return cur, err
	}
	return secret{Value: v}, nil
}

// interview asks every question, checking each platform's tokens and the
// model as soon as they are given and asking again when one fails.
func interview(ctx context.Context, a *answers, f *flags, p *prompter, stderr io.Writer) int {
	err := p.interview(ctx, a, f, stderr)
	switch {
	case errors.Is(err, errEnded):
		fmt.Fprintln(stderr, "The answers ended before the setup was done; nothing was written.")
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "Stopped: %s; nothing was written.\n", errText(err))
		return 1
	}
	return 0
}

func (p *prompter) interview(ctx context.Context, a *answers, f *flags, stderr io.Writer) error {
	fmt.Fprintf(p.w, "This writes %s: the chat platforms, the model, and who may use the bot.\n"+
		"Press Enter to keep the answer in [brackets].\n\n", f.path)
	def := "none"
	if f.platformSet {
		def = strings.Join(append([]string{}, a.Platforms...), ",")
	}
	for {
		s, err := p.ask("Chat platforms: telegram, slack, lark (several: telegram,slack; none: only this terminal)", def)
		if err != nil {
			return err
		}
		if a.Platforms, err = parsePlatforms(s); err == nil {
			break
		}
		fmt.Fprintln(stderr, sentence(err))
	}
	for _, pl := range a.Platforms {
		if err := p.platform(ctx, a, pl, f.noCheck, stderr); err != nil {
			return err
		}
	}
	fmt.Fprintln(p.w, "\nThe model: any OpenAI-compatible endpoint (OpenAI, DeepSeek, OpenRouter, Ollama, vLLM, …).")
	return p.until(ctx, stderr, f.noCheck, a.checkModel, func() (err error) {
		if a.BaseURL, err = p.ask("Base URL", a.BaseURL); err != nil {
			return err
		}
		if a.Model, err = p.ask("Model id", a.Model); err != nil {
			return err
		}
		a.APIKey, err = p.askSecret("API key (Enter with none: the server needs no key)", a.APIKey)
		return err
	})
}

// platform asks for one platform's credentials until they pass the
// check, then for who may use the bot.
func (p *prompter) platform(ctx context.Context, a *answers, pl string, noCheck bool, stderr io.Writer) error {
	var ask func() error
	var c check
	switch pl {
	case "telegram":
		fmt.Fprintln(p.w, "\nTelegram: talk to @BotFather, send /newbot; it answers with the token.")
		ask = func() (err error) {
			a.TelegramToken, err = p.askSecret("Telegram bot token", a.TelegramToken)
			return err
		}
		c = a.checkTelegram
	case "slack":
		fmt.Fprintln(p.w, "\nSlack: no app yet? Create one at https://api.slack.com/apps from the manifest\n"+
			"that `deerflow init --slack-manifest` prints, install it, and add an app-level token.")
		ask = func() (err error) {
			if a.SlackBot, err = p.askSecret("Slack bot token (xoxb-…, under Install App)", a.SlackBot); err != nil {
				return err
			}
			a.SlackApp, err = p.askSecret("Slack app-level token (xapp-…, Basic Information → App-Level Tokens)", a.SlackApp)
			return err
		}
		c = a.checkSlack
	case "lark":
		fmt.Fprintln(p.w, "\nFeishu/Lark: a custom app with the Bot capability; its id and secret are under Credentials & Basic Info.")
		ask = p.larkQuestions(a, stderr)
		c = a.checkLark
	}
	if err := p.until(ctx, stderr, noCheck, c, ask); err != nil {
		return err
	}
	return p.allowList(a, pl, stderr)
}

func (p *prompter) larkQuestions(a *answers, stderr io.Writer) func() error {
	return func() (err error) {
		name := "feishu"
		if a.LarkDomain == larkDomain {
			name = "lark"
		} else if a.LarkDomain != feishuDomain {
			name = a.LarkDomain
		}
		for {
			if name, err = p.ask("Feishu or Lark (feishu, lark, or the open platform's URL)", name); err != nil {
				return err
			}
			if a.LarkDomain, err = parseDomain(name); err == nil {
				break
			}
			fmt.Fprintln(stderr, sentence(err))
		}
		if a.LarkID, err = p.askSecret("App ID (cli_…)", a.LarkID); err != nil {
			return err
		}
		a.LarkSecret, err = p.askSecret("App Secret", a.LarkSecret)
		return err
	}
}

// until asks, then checks, until the check passes (or noCheck).
func (p *prompter) until(ctx context.Context, stderr io.Writer, noCheck bool, c check, ask func() error) error {
	for {
		if err := ask(); err != nil {
			return err
		}
		if noCheck {
			return nil
		}
		ok, err := c(ctx)
		if err == nil {
			fmt.Fprintln(p.w, "✓ "+ok)
			return nil
		}
		fmt.Fprintln(stderr, sentence(err))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintln(p.w, "Try again:")
	}
}

// allowList asks who may use platform pl's bot, warning loudly when the
// answer is nobody in particular.
func (p *prompter) allowList(a *answers, pl string, stderr io.Writer) error {
	to := map[string]*[]string{"telegram": &a.TelegramAllow, "slack": &a.SlackAllow, "lark": &a.LarkAllow}[pl]
	for {
		s, err := p.ask(fmt.Sprintf("Who may use the %s bot? %s, separated by commas (Enter with none: everyone)", title(pl), allowWhat(pl)),
			strings.Join(*to, ","))
		if err != nil {
			return err
		}
		if *to, err = parseAllow(pl, s); err == nil {
			break
		}
		fmt.Fprintln(stderr, sentence(err))
	}
	if len(*to) == 0 {
		warnOpen(stderr, &answers{Platforms: []string{pl}})
	}
	return nil
}
