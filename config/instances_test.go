package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const twoBots = `
channels:
  telegram:
    enabled: true
    bot_token: "1:main"
    api_url: http://tg.local
    agent: coder
    chat_agents: {"-1001234567890": researcher}
    admins: ["@ann"]
    allowed_users: ["1"]
    limits: {per_chat_burst: 2}
    bots:
      - name: support
        enabled: true
        bot_token: "2:support"
        agent: helper
        limits: {global_per_second: 0}
      - name: spare
        bot_token: "3:spare"
  slack:
    apps:
      - {name: team-b, enabled: true, bot_token: xoxb-b, app_token: xapp-b, api_url: "http://sl.local/api", chat_agents: {C1: researcher}}
  lark:
    enabled: true
    app_id: cli_a
    app_secret: s
    apps:
      - {name: intl, enabled: true, app_id: cli_b, app_secret: s, admins: [ou_1]}
`

type instanceView struct {
	Platform, Name, Key, Agent string
	ChatAgents                 map[string]string
	Admins, AllowedUsers       []string
}

func TestChannelInstances(t *testing.T) {
	c := mustParse(t, twoBots)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var got []instanceView
	for _, in := range c.ChannelInstances() {
		got = append(got, instanceView{in.Platform, in.Name, in.Key, in.Agent, in.ChatAgents, in.Admins, in.AllowedUsers})
	}
	want := []instanceView{
		{"telegram", "telegram", "channels.telegram", "coder", map[string]string{"-1001234567890": "researcher"}, []string{"@ann"}, []string{"1"}},
		{"telegram", "telegram-support", "channels.telegram.bots[0]", "helper", nil, nil, nil},
		{"slack", "slack-team-b", "channels.slack.apps[0]", "", map[string]string{"C1": "researcher"}, nil, nil},
		{"lark", "lark", "channels.lark", "", nil, nil, nil},
		{"lark", "lark-intl", "channels.lark.apps[0]", "", nil, []string{"ou_1"}, nil},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ChannelInstances (-want +got):\n%s", d)
	}
	all := c.AllChannelInstances()
	if len(all) != 7 || all[2].Name != "telegram-spare" || all[2].Enabled || all[3].Name != "slack" {
		t.Errorf("AllChannelInstances should list the disabled block and entry in order, got %d", len(all))
	}
	// An entry inherits api_url and the limits keys it leaves out, and
	// nothing else.
	sup := c.Channels.Telegram.Bots[0]
	wantLimits := TelegramLimits{PerChatPerSecond: 1, PerChatBurst: 2, PerGroupPerMinute: 20, GlobalPerSecond: 0}
	if sup.APIURL != "http://tg.local" || sup.Limits != wantLimits || sup.AllowedUsers != nil || sup.Admins != nil {
		t.Errorf("support bot = %+v", sup)
	}
	if got := c.Channels.Slack.Apps[0].APIURL; got != "http://sl.local/api/" {
		t.Errorf("slack entry api_url = %q, want a trailing /", got)
	}
	if got := c.Channels.Lark.Apps[0].Domain; got != defaultLarkDomain {
		t.Errorf("lark entry domain = %q", got)
	}
}

func TestChannelInstancesValidate(t *testing.T) {
	for _, tt := range []struct{ name, yml, want string }{
		{"entry name required", "channels:\n  telegram:\n    bots:\n      - enabled: false\n",
			`config.yaml:4: channels.telegram.bots[0].name: required: the channel is named telegram-<name>`},
		{"entry name shape", "channels:\n  slack:\n    apps:\n      - name: Team_B\n",
			`config.yaml:4: channels.slack.apps[0].name: must be 1 to 32 of a-z, 0-9 and -, such as support`},
		{"entry names unique", "channels:\n  lark:\n    apps:\n      - name: a\n      - name: a\n",
			`config.yaml:5: channels.lark.apps[1].name: duplicate lark name "a"`},
		{"block has no name", "channels:\n  telegram:\n    name: main\n",
			`config.yaml:3: channels.telegram.name: only entries of channels.telegram.bots have a name; this block's channel is "telegram"`},
		{"entries have no entries", "channels:\n  telegram:\n    bots:\n      - name: a\n        bots: [{name: b}]\n",
			`config.yaml:5: channels.telegram.bots[0].bots: an entry has no bots of its own: list them all under channels.telegram.bots`},
		{"token of an enabled entry", "channels:\n  telegram:\n    bots:\n      - name: a\n        enabled: true\n",
			`config.yaml:4: channels.telegram.bots[0].bot_token: required when channels.telegram.bots[0].enabled is true`},
		{"shared token", "channels:\n  telegram:\n    enabled: true\n    bot_token: \"1:x\"\n    bots:\n      - {name: a, enabled: true, bot_token: \"1:x\"}\n",
			`config.yaml:6: channels.telegram.bots[0].bot_token: the same as channels.telegram.bot_token: each enabled bot needs its own`},
		{"shared app token", "channels:\n  slack:\n    apps:\n      - {name: a, enabled: true, bot_token: xoxb-1, app_token: xapp-1}\n      - {name: b, enabled: true, bot_token: xoxb-2, app_token: xapp-1}\n",
			`config.yaml:5: channels.slack.apps[1].app_token: the same as channels.slack.apps[0].app_token: each enabled bot needs its own`},
		{"slack entry prefix", "channels:\n  slack:\n    apps:\n      - {name: a, enabled: true, bot_token: x, app_token: xapp-1}\n",
			`config.yaml:4: channels.slack.apps[0].bot_token: must start with "xoxb-"`},
		{"empty admin", "channels:\n  lark:\n    admins: [\"\"]\n",
			`config.yaml:3: channels.lark.admins[0]: must not be empty`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := mustParse(t, tt.yml).Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
	// A disabled bot may keep the token an enabled one uses.
	ok := "channels:\n  telegram:\n    enabled: true\n    bot_token: \"1:x\"\n    bots: [{name: old, bot_token: \"1:x\"}]\n"
	if err := mustParse(t, ok).Validate(); err != nil {
		t.Errorf("a disabled entry with the same token: %v", err)
	}
}
