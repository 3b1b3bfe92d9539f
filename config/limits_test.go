package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChannelLimits: channels.*.limits take the platforms' documented
// numbers when absent, keep what is written (0 included: no limit of
// ours), and refuse negative numbers, naming the key.
func TestChannelLimits(t *testing.T) {
	type all struct {
		Telegram    TelegramLimits
		Slack, Lark SendLimits
	}
	defaults := all{
		Telegram: TelegramLimits{PerChatPerSecond: 1, PerChatBurst: 4, PerGroupPerMinute: 20, GlobalPerSecond: 30},
		Slack:    SendLimits{PerChatPerSecond: 1, PerChatBurst: 3},
		Lark:     SendLimits{PerChatPerSecond: 5, PerChatBurst: 1, GlobalPerSecond: 16},
	}
	tests := []struct {
		name, yml string
		want      func(*all) // changes from the defaults
		errs      []string   // exact lines of Validate's error; nil: valid
	}{
		{"defaults", "", func(*all) {}, nil},
		{"empty mappings are defaults", "channels:\n  telegram: {limits: {}}\n  slack: {limits: {}}\n  lark: {limits: {}}", func(*all) {}, nil},
		{"explicit", `
channels:
  telegram: {limits: {per_chat_per_second: 0.5, per_chat_burst: 2, per_group_per_minute: 10, global_per_second: 25}}
  slack: {limits: {per_chat_per_second: 2, per_chat_burst: 1, global_per_second: 10}}
  lark: {limits: {per_chat_per_second: 3}}
`, func(a *all) {
			a.Telegram = TelegramLimits{PerChatPerSecond: 0.5, PerChatBurst: 2, PerGroupPerMinute: 10, GlobalPerSecond: 25}
			a.Slack = SendLimits{PerChatPerSecond: 2, PerChatBurst: 1, GlobalPerSecond: 10}
			a.Lark.PerChatPerSecond = 3
		}, nil},
		{"zero turns a limit off", `
channels:
  telegram: {limits: {per_chat_per_second: 0, per_chat_burst: 0, per_group_per_minute: 0, global_per_second: 0}}
  slack: {limits: {per_chat_per_second: 0}}
  lark: {limits: {global_per_second: 0}}
`, func(a *all) {
			a.Telegram = TelegramLimits{}
			a.Slack.PerChatPerSecond = 0
			a.Lark.GlobalPerSecond = 0
		}, nil},
		{"an unset variable is absent", "channels:\n  slack: {limits: {per_chat_per_second: $NOPE}}", func(*all) {}, nil},
		{"negative", `channels:
  telegram:
    limits:
      per_chat_per_second: -1
      per_chat_burst: -2
      per_group_per_minute: -20
      global_per_second: -0.5
  slack: {limits: {per_chat_burst: -1}}
  lark: {limits: {per_chat_per_second: -5, global_per_second: -1}}
`, nil, []string{
			`config.yaml:4: channels.telegram.limits.per_chat_per_second: must not be negative, got -1 (0 turns the limit off)`,
			`config.yaml:5: channels.telegram.limits.per_chat_burst: must not be negative, got -2`,
			`config.yaml:7: channels.telegram.limits.global_per_second: must not be negative, got -0.5 (0 turns the limit off)`,
			`config.yaml:6: channels.telegram.limits.per_group_per_minute: must not be negative, got -20 (0 turns the limit off)`,
			`config.yaml:8: channels.slack.limits.per_chat_burst: must not be negative, got -1`,
			`config.yaml:9: channels.lark.limits.per_chat_per_second: must not be negative, got -5 (0 turns the limit off)`,
			`config.yaml:9: channels.lark.limits.global_per_second: must not be negative, got -1 (0 turns the limit off)`,
		}},
		{"not a number", "channels:\n  lark:\n    limits: {per_chat_per_second: nan, global_per_second: inf}", nil, []string{
			`config.yaml:3: channels.lark.limits.per_chat_per_second: must be a number, 0 or more (0 turns the limit off)`,
			`config.yaml:3: channels.lark.limits.global_per_second: must be a number, 0 or more (0 turns the limit off)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parse([]byte(tt.yml), "config.yaml", mapLookup(nil))
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			if tt.errs != nil {
				var lines []string
				for _, e := range unjoin(err) {
					lines = append(lines, e.Error())
				}
				if diff := cmp.Diff(tt.errs, lines); diff != "" {
					t.Errorf("Validate errors (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			want := defaults
			tt.want(&want)
			got := all{c.Channels.Telegram.Limits, c.Channels.Slack.Limits, c.Channels.Lark.Limits}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

// unjoin splits an errors.Join into its errors.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.Clone(j.Unwrap())
	}
	return []error{errors.New(strings.TrimSpace(err.Error()))}
}
