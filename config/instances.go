package config

import "slices"

// ChannelInstance is one bot of one chat platform: the channels.<platform>
// block or an entry of its bots/apps list, as one channel of the process.
type ChannelInstance struct {
	Platform string // "telegram", "slack" or "lark"
	// Name is the channel's name in chat keys and on bus messages: the
	// platform for the block (its chats keep the keys they always had),
	// "<platform>-<entry name>" for an entry. Chat keys are
	// "<channel>:<chat>[:topic]": entry names are [a-z0-9-], never ':'.
	Name    string
	Key     string // the config key path: "channels.telegram", "channels.telegram.bots[0]"
	Enabled bool
	// Agent is the bot's default agent ("" = the built-in one), ChatAgents
	// the agent of particular chats (chat or channel id → agent), Admins
	// the users who may create agents from the chat; not checked here.
	Agent        string
	ChatAgents   map[string]string
	Admins       []string
	AllowedUsers []string // empty lets everyone in
	// Exactly one is set: the block or entry itself, in the Config.
	Telegram *Telegram
	Slack    *Slack
	Lark     *Lark

	raw    string // the name key as written
	list   string // the key of the platform's entries: bots or apps
	block  bool   // the platform's block, not an entry
	nested int    // entries listed inside this one (only a block may have them)
}

// ChannelInstances returns every enabled bot in config order: each
// platform's block, then its entries (Telegram, Slack, Lark).
func (c *Config) ChannelInstances() []ChannelInstance {
	return slices.DeleteFunc(c.AllChannelInstances(), func(in ChannelInstance) bool { return !in.Enabled })
}

// AllChannelInstances is ChannelInstances with the disabled ones too (the
// three blocks are always there), as deerflow check lists them.
func (c *Config) AllChannelInstances() []ChannelInstance {
	var out []ChannelInstance
	add := func(in ChannelInstance, list string, i int) { // i < 0: the block
		in.Key, in.Name, in.list, in.block = "channels."+in.Platform, in.Platform, list, i < 0
		if !in.block {
			in.Key, in.Name = index(in.Key+"."+list, i), in.Name+"-"+in.raw
		}
		out = append(out, in)
	}
	ch := &c.Channels
	for i, t := -1, &ch.Telegram; i < len(ch.Telegram.Bots); i, t = i+1, at(ch.Telegram.Bots, i+1) {
		add(ChannelInstance{Platform: "telegram", Enabled: t.Enabled, Agent: t.Agent, ChatAgents: t.ChatAgents,
			Admins: t.Admins, AllowedUsers: t.AllowedUsers, Telegram: t, raw: t.Name, nested: len(t.Bots)}, "bots", i)
	}
	for i, s := -1, &ch.Slack; i < len(ch.Slack.Apps); i, s = i+1, at(ch.Slack.Apps, i+1) {
		add(ChannelInstance{Platform: "slack", Enabled: s.Enabled, Agent: s.Agent, ChatAgents: s.ChatAgents,
			Admins: s.Admins, AllowedUsers: s.AllowedUsers, Slack: s, raw: s.Name, nested: len(s.Apps)}, "apps", i)
	}
	for i, l := -1, &ch.Lark; i < len(ch.Lark.Apps); i, l = i+1, at(ch.Lark.Apps, i+1) {
		add(ChannelInstance{Platform: "lark", Enabled: l.Enabled, Agent: l.Agent, ChatAgents: l.ChatAgents,
			Admins: l.Admins, AllowedUsers: l.AllowedUsers, Lark: l, raw: l.Name, nested: len(l.Apps)}, "apps", i)
	}
	return out
}

// at is &s[i], or nil past the end.
func at[T any](s []T, i int) *T {
	if i < len(s) {
		return &s[i]
	}
	return nil
}

type credential struct{ key, value, prefix string }

// credentials are the secrets and ids a bot needs when enabled.
func (in ChannelInstance) credentials() []credential {
	switch {
	case in.Telegram != nil:
		return []credential{{"bot_token", in.Telegram.BotToken, ""}}
	case in.Slack != nil:
		return []credential{{"bot_token", in.Slack.BotToken, "xoxb-"}, {"app_token", in.Slack.AppToken, "xapp-"}}
	}
	return []credential{{"app_id", in.Lark.AppID, ""}, {"app_secret", in.Lark.AppSecret, ""}}
}
