package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	"github.com/slack-go/slack"

	"github.com/deerflow/deerflow/internal/lazyre"
	"github.com/deerflow/deerflow/internal/redact"
)

// checkTimeout bounds each check (each of its requests).
const checkTimeout = 20 * time.Second

// check asks one platform (or the model endpoint) whether the answers for
// it work. It returns what it learnt, for a "✓" line, or a *problem.
type check func(ctx context.Context) (string, error)

// checks are the checks of the chosen platforms, then the model's.
func (a *answers) checks() []check {
	var out []check
	for _, p := range a.Platforms {
		switch p {
		case "telegram":
			out = append(out, a.checkTelegram)
		case "slack":
			out = append(out, a.checkSlack)
		case "lark":
			out = append(out, a.checkLark)
		}
	}
	return append(out, a.checkModel)
}

var telegramToken = lazyre.New(`^[0-9]+:[A-Za-z0-9_-]+$`)

// checkTelegram asks getMe who the bot is.
func (a *answers) checkTelegram(ctx context.Context) (string, error) {
	tok := a.TelegramToken.Value
	if !telegramToken().MatchString(tok) {
		return "", fault("That is not a Telegram bot token: one looks like 123456789:AAH…, as @BotFather sends it.")
	}
	b, err := bot.New(tok, bot.WithServerURL(strings.TrimRight(a.TelegramURL, "/")), bot.WithSkipGetMe(),
		bot.WithHTTPClient(checkTimeout, &http.Client{Timeout: checkTimeout}))
	if err != nil {
		return "", fault("The Telegram token cannot be used: %s.", scrub(errText(err), tok))
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	me, err := b.GetMe(ctx)
	switch {
	case errors.Is(err, bot.ErrorUnauthorized):
		return "", fault("Telegram says the token is not valid (401): copy it again from @BotFather.")
	case errors.Is(err, bot.ErrorNotFound):
		return "", fault("Telegram does not know this token (404): copy it again from @BotFather, or check --telegram-api-url.")
	case err != nil:
		return "", unreachable("Telegram", a.TelegramURL, "--telegram-api-url", err, tok)
	}
	a.telegramBot = me.Username
	return fmt.Sprintf("Telegram: the bot is @%s (%s)", me.Username, me.FirstName), nil
}

// checkSlack runs auth.test with the bot token and apps.connections.open
// with the app-level token (what Socket Mode starts with).
func (a *answers) checkSlack(ctx context.Context) (string, error) {
	bt, at := a.SlackBot.Value, a.SlackApp.Value
	switch {
	case !strings.HasPrefix(bt, "xoxb-"):
		return "", fault("The Slack bot token must start with xoxb-: it is the Bot User OAuth Token under Install App.")
	case !strings.HasPrefix(at, "xapp-"):
		return "", fault("The Slack app-level token must start with xapp-: create one with connections:write under Basic Information → App-Level Tokens.")
	}
	api := slack.New(bt, slack.OptionAppLevelToken(at), slack.OptionAPIURL(strings.TrimRight(a.SlackURL, "/")+"/"),
		slack.OptionHTTPClient(&http.Client{Timeout: checkTimeout}))
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	auth, err := api.AuthTestContext(ctx)
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return "", fault("Slack says the bot token is not valid (%s): copy the Bot User OAuth Token (xoxb-…) again from Install App, and reinstall the app if it was removed.", se.Err)
	} else if err != nil {
		return "", unreachable("Slack", a.SlackURL, "--slack-api-url", err, bt, at)
	}
	_, _, err = api.StartSocketModeContext(ctx)
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return "", fault("Slack refused the app-level token (%s): create one with connections:write under Basic Information → App-Level Tokens, and turn on Socket Mode.", se.Err)
	} else if err != nil {
		return "", unreachable("Slack", a.SlackURL, "--slack-api-url", err, bt, at)
	}
	a.slackBot = auth.User
	return fmt.Sprintf("Slack: the bot is @%s in %s (%s); Socket Mode opens", auth.User, auth.Team, auth.TeamID), nil
}

// Lark's answers to a refused app id or secret (its docs list both).
var larkBadCredentials = map[int]bool{10003: true, 10014: true, 99991663: true, 99991664: true}

// checkLark asks for a tenant access token with the app id and secret.
func (a *answers) checkLark(ctx context.Context) (string, error) {
	id, sec := a.LarkID.Value, a.LarkSecret.Value
	cli := lark.NewClient(id, sec, lark.WithOpenBaseUrl(a.LarkDomain), lark.WithLogLevel(larkcore.LogLevelError),
		lark.WithReqTimeout(checkTimeout), lark.WithHttpClient(&http.Client{Timeout: checkTimeout}))
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	resp, err := cli.GetTenantAccessTokenBySelfBuiltApp(ctx, &larkcore.SelfBuiltTenantAccessTokenReq{AppID: id, AppSecret: sec})
	switch {
	case err != nil:
		return "", unreachable("Feishu/Lark", a.LarkDomain, "--lark-domain", err, sec)
	case larkBadCredentials[resp.Code]:
		return "", fault("%s says the app id or secret is not valid (%d): copy both again from Credentials & Basic Info, and check --lark-domain (Feishu: feishu, Lark: lark).", larkName(a.LarkDomain), resp.Code)
	case resp.Code != 0 || resp.TenantAccessToken == "":
		return "", fault("%s refused a tenant token (%d %s): check the app id, the secret and --lark-domain.", larkName(a.LarkDomain), resp.Code, oneLine(resp.Msg))
	}
	return fmt.Sprintf("%s: app %s gets a tenant token", larkName(a.LarkDomain), id), nil
}

func larkName(domain string) string {
	if strings.Contains(domain, "larksuite") {
		return "Lark"
	}
	return "Feishu"
}

// unreachable is the sentence for a request that got no answer from
// service at base: the transport's cause, never a URL holding a token.
func unreachable(service, base, flagName string, err error, secrets ...string) error {
	cause := err
	if ue, ok := errors.AsType[*url.Error](err); ok {
		cause = ue.Err
	}
	msg := redact.URLs(errText(cause))
	return fault("Could not reach %s at %s (%s): check the network, or %s.", service, redact.URLs(base), oneLine(scrub(msg, secrets...)), flagName)
}

// scrub replaces every secret in s.
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "…")
		}
	}
	return s
}

// oneLine fits s on one line of at most 200 runes, without a final stop.
func oneLine(s string) string {
	s = strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}
