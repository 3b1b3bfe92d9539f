package config

import (
	"math"
	"strings"
)

// Channels holds each chat platform's block and, under its bots or apps,
// more bots with the same keys plus a name; each enabled one is a channel
// (see ChannelInstances). An entry inherits only api_url (Lark: domain)
// and absent limits keys from its block: its tokens (never from the
// environment), allow-list, admins and agent are its own, so a bot added
// for another team never opens to the first team's people by accident.
type Channels struct {
	Telegram Telegram `yaml:"telegram"`
	Slack    Slack    `yaml:"slack"`
	Lark     Lark     `yaml:"lark"`
}

// Telegram configures one Telegram bot: the channels.telegram block or an
// entry of its bots.
type Telegram struct {
	Enabled      bool           `yaml:"enabled"`
	Name         string         `yaml:"name"` // entries only: [a-z0-9-], unique; the channel is telegram-<name>
	BotToken     string         `yaml:"bot_token"`
	APIURL       string         `yaml:"api_url"`
	AllowedUsers []string       `yaml:"allowed_users"`
	Limits       TelegramLimits `yaml:"limits"`
	// Agent, ChatAgents and Admins: see ChannelInstance.
	Agent      string            `yaml:"agent"`
	ChatAgents map[string]string `yaml:"chat_agents"`
	Admins     []string          `yaml:"admins"`
	Bots       []Telegram        `yaml:"bots"` // the block only: more bots
}

// TelegramLimits is how fast the bot lets itself send (see SendLimits);
// absent keys take the Bot FAQ's numbers, 0 turns that limit off.
type TelegramLimits struct {
	PerChatPerSecond  float64 `yaml:"per_chat_per_second"`  // default 1
	PerChatBurst      int     `yaml:"per_chat_burst"`       // default 4; 0: no burst
	PerGroupPerMinute float64 `yaml:"per_group_per_minute"` // default 20
	GlobalPerSecond   float64 `yaml:"global_per_second"`    // default 30
}

// SendLimits is how fast a Slack or Lark channel lets itself send into one
// chat (a channel, group or DM) and overall: limits of our own, below the
// platform's, which answers faster callers with a 429 that is honoured
// anyway. An absent key takes the platform's documented limit; 0 turns
// that limit off.
type SendLimits struct {
	PerChatPerSecond float64 `yaml:"per_chat_per_second"`
	PerChatBurst     int     `yaml:"per_chat_burst"` // calls at once before the spacing; 0: no burst
	GlobalPerSecond  float64 `yaml:"global_per_second"`
}

// Slack configures one Slack Socket Mode app: the block or an entry.
type Slack struct {
	Enabled      bool     `yaml:"enabled"`
	Name         string   `yaml:"name"` // entries only; the channel is slack-<name>
	BotToken     string   `yaml:"bot_token"`
	AppToken     string   `yaml:"app_token"`
	APIURL       string   `yaml:"api_url"`
	AllowedUsers []string `yaml:"allowed_users"`
	// Limits default to 1 a second per channel in bursts of 3 (Slack's
	// chat.postMessage limit) and none of ours overall.
	Limits     SendLimits        `yaml:"limits"`
	Agent      string            `yaml:"agent"`
	ChatAgents map[string]string `yaml:"chat_agents"`
	Admins     []string          `yaml:"admins"`
	Apps       []Slack           `yaml:"apps"` // the block only: more apps
}

// Lark configures one Feishu/Lark app: the block or an entry.
type Lark struct {
	Enabled      bool     `yaml:"enabled"`
	Name         string   `yaml:"name"` // entries only; the channel is lark-<name>
	AppID        string   `yaml:"app_id"`
	AppSecret    string   `yaml:"app_secret"`
	Domain       string   `yaml:"domain"`
	AllowedUsers []string `yaml:"allowed_users"`
	// Limits default to 5 a second per chat without bursts (Lark's 5 QPS
	// per user and per group) and 16 a second overall (its 1000 a minute
	// per app).
	Limits     SendLimits        `yaml:"limits"`
	Agent      string            `yaml:"agent"`
	ChatAgents map[string]string `yaml:"chat_agents"`
	Admins     []string          `yaml:"admins"`
	Apps       []Lark            `yaml:"apps"` // the block only: more apps
}

// Each platform's documented limits (see config.yaml.example for the
// sources), the defaults of channels.*.limits.
var (
	defaultTelegramLimits = TelegramLimits{PerChatPerSecond: 1, PerChatBurst: 4, PerGroupPerMinute: 20, GlobalPerSecond: 30}
	defaultSlackLimits    = SendLimits{PerChatPerSecond: 1, PerChatBurst: 3}
	defaultLarkLimits     = SendLimits{PerChatPerSecond: 5, PerChatBurst: 1, GlobalPerSecond: 16}
)

// channelDefaults: entries inherit as Channels says (the blocks' tokens
// come from the environment when empty: envDefaults).
func (c *Config) channelDefaults(env func(string) string) {
	tg, sl, lk := &c.Channels.Telegram, &c.Channels.Slack, &c.Channels.Lark
	defString(&tg.APIURL, defaultTelegramURL)
	defString(&sl.APIURL, defaultSlackURL)
	defString(&lk.Domain, defaultLarkDomain)
	c.telegramLimitDefaults(&tg.Limits, "channels.telegram.limits.", defaultTelegramLimits)
	c.sendLimitDefaults(&sl.Limits, "channels.slack.limits.", defaultSlackLimits)
	c.sendLimitDefaults(&lk.Limits, "channels.lark.limits.", defaultLarkLimits)
	for i := range tg.Bots {
		b := &tg.Bots[i]
		defString(&b.APIURL, tg.APIURL)
		c.telegramLimitDefaults(&b.Limits, index("channels.telegram.bots", i)+".limits.", tg.Limits)
	}
	sl.APIURL = strings.TrimSuffix(sl.APIURL, "/") + "/" // the client joins method names on
	for i := range sl.Apps {
		a := &sl.Apps[i]
		defString(&a.APIURL, sl.APIURL)
		a.APIURL = strings.TrimSuffix(a.APIURL, "/") + "/"
		c.sendLimitDefaults(&a.Limits, index("channels.slack.apps", i)+".limits.", sl.Limits)
	}
	for i := range lk.Apps {
		a := &lk.Apps[i]
		defString(&a.Domain, lk.Domain)
		c.sendLimitDefaults(&a.Limits, index("channels.lark.apps", i)+".limits.", lk.Limits)
	}
	defString(&c.Console.User, env("$USER"))
	defString(&c.Console.User, "local")
}

// telegramLimitDefaults and sendLimitDefaults fill the absent keys of
// limits written at key k; a written 0 is kept (it turns that limit off).
func (c *Config) telegramLimitDefaults(l *TelegramLimits, k string, def TelegramLimits) {
	defUnless(c, &l.PerChatPerSecond, k+"per_chat_per_second", def.PerChatPerSecond)
	defUnless(c, &l.PerChatBurst, k+"per_chat_burst", def.PerChatBurst)
	defUnless(c, &l.PerGroupPerMinute, k+"per_group_per_minute", def.PerGroupPerMinute)
	defUnless(c, &l.GlobalPerSecond, k+"global_per_second", def.GlobalPerSecond)
}

func (c *Config) sendLimitDefaults(l *SendLimits, k string, def SendLimits) {
	defUnless(c, &l.PerChatPerSecond, k+"per_chat_per_second", def.PerChatPerSecond)
	defUnless(c, &l.PerChatBurst, k+"per_chat_burst", def.PerChatBurst)
	defUnless(c, &l.GlobalPerSecond, k+"global_per_second", def.GlobalPerSecond)
}

// defUnless sets *p to def when key was not written (a written 0 stays).
func defUnless[T int | float64](c *Config, p *T, key string, def T) {
	if !c.given(key) {
		*p = def
	}
}

// channels checks every block and entry, enabled or not; credentials
// only when enabled. Two enabled bots with one token would steal each
// other's updates, so that is refused naming both.
func (v *validator) channels() {
	names := map[string]bool{}
	first := map[string]string{} // platform, key and token → the first key holding it
	for _, in := range v.c.AllChannelInstances() {
		k := in.Key
		v.instanceName(in, names)
		switch t, s, l := in.Telegram, in.Slack, in.Lark; {
		case t != nil:
			v.httpURL(k+".api_url", t.APIURL)
			v.sendLimits(k+".limits", SendLimits{t.Limits.PerChatPerSecond, t.Limits.PerChatBurst, t.Limits.GlobalPerSecond})
			v.rate(k+".limits.per_group_per_minute", t.Limits.PerGroupPerMinute)
		case s != nil:
			v.httpURL(k+".api_url", s.APIURL)
			v.sendLimits(k+".limits", s.Limits)
		default:
			v.httpURL(k+".domain", l.Domain)
			v.sendLimits(k+".limits", l.Limits)
		}
		v.nonEmpty(k+".allowed_users", in.AllowedUsers)
		v.nonEmpty(k+".admins", in.Admins)
		for _, cr := range in.credentials() {
			if !in.Enabled || !v.requiredWhen(k, cr.key, cr.value) {
				continue
			}
			if !strings.HasPrefix(cr.value, cr.prefix) {
				v.fail(k+"."+cr.key, "must start with %q", cr.prefix)
			}
			id := in.Platform + " " + cr.key + " " + cr.value
			if f, dup := first[id]; dup && cr.key != "app_secret" {
				v.fail(k+"."+cr.key, "the same as %s.%s: each enabled bot needs its own", f, cr.key)
			} else if !dup {
				first[id] = k
			}
		}
	}
}

// instanceName checks that a block has no name, an entry a unique one,
// and entries no entries.
func (v *validator) instanceName(in ChannelInstance, seen map[string]bool) {
	switch {
	case in.block && in.raw != "":
		v.fail(in.Key+".name", "only entries of %s.%s have a name; this block's channel is %q", in.Key, in.list, in.Platform)
	case in.block:
	case in.raw == "":
		v.fail(in.Key+".name", "required: the channel is named %s-<name>", in.Platform)
	case len(in.raw) > 32 || in.raw[0] == '-' || strings.Trim(in.raw, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		v.fail(in.Key+".name", "must be 1 to 32 of a-z, 0-9 and -, such as support")
	case seen[in.Name]:
		v.fail(in.Key+".name", "duplicate %s name %q", in.Platform, in.raw)
	}
	seen[in.Name] = true
	if !in.block && in.nested > 0 {
		v.fail(in.Key+"."+in.list, "an entry has no %s of its own: list them all under channels.%s.%s", in.list, in.Platform, in.list)
	}
}

// sendLimits checks one channel's limits: no negative numbers (0 turns
// a limit off).
func (v *validator) sendLimits(key string, l SendLimits) {
	v.rate(key+".per_chat_per_second", l.PerChatPerSecond)
	v.nonNegative(key+".per_chat_burst", l.PerChatBurst)
	v.rate(key+".global_per_second", l.GlobalPerSecond)
}

// rate checks a rate: a finite number, 0 or more.
func (v *validator) rate(key string, r float64) {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		v.fail(key, "must be a number, 0 or more (0 turns the limit off)")
	case r < 0:
		v.fail(key, "must not be negative, got %g (0 turns the limit off)", r)
	}
}

// nonEmpty checks that no item of a list of users is empty.
func (v *validator) nonEmpty(key string, users []string) {
	for i, u := range users {
		if strings.TrimSpace(u) == "" {
			v.fail(index(key, i), "must not be empty")
		}
	}
}

func (v *validator) requiredWhen(channel, field, value string) bool {
	if strings.TrimSpace(value) == "" {
		v.fail(channel+"."+field, "%s", v.missing(channel+"."+field, "required when "+channel+".enabled is true"))
		return false
	}
	return true
}
