package setup

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
)

// Literal values come back from the config loader exactly as typed, even
// with the characters YAML and $VAR expansion treat specially.
func TestRenderRoundTrips(t *testing.T) {
	for _, key := range []string{"sk-plain", `sk-$HOME-${X}-$$`, `a"b\c#d: e`, "ключ-🔑", "  spaces  "} {
		a := &answers{Platforms: []string{"lark"}, BaseURL: "http://127.0.0.1:11434/v1/", Model: "qwen3:8b",
			APIKey: secret{Value: key}, LarkID: secret{Value: "cli_$1"}, LarkSecret: secret{Value: key},
			LarkDomain: larkDomain, LarkAllow: []string{"ou_1", "on_$2"}}
		cfg, err := config.Parse(render(a), "config.yaml")
		if err != nil {
			t.Fatalf("%q: %v\n%s", key, err, render(a))
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		m, lk := cfg.DefaultModel(), cfg.Channels.Lark
		if m.APIKey != key || lk.AppSecret != key || lk.AppID != "cli_$1" || m.Model != "qwen3:8b" ||
			m.BaseURL != "http://127.0.0.1:11434/v1" || lk.Domain != larkDomain || strings.Join(lk.AllowedUsers, " ") != "ou_1 on_$2" {
			t.Errorf("%q: model %+v, lark %+v", key, m, lk)
		}
	}
}

func TestRenderTerminalOnly(t *testing.T) {
	a := &answers{BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3"}
	out := string(render(a))
	if strings.Contains(out, "channels:") || !strings.Contains(out, `api_key: ""  # none: the server asks for no key`) {
		t.Errorf("render:\n%s", out)
	}
	cfg, err := config.Parse([]byte(out), "config.yaml")
	if err != nil || cfg.Validate() != nil || len(cfg.ChannelInstances()) != 0 || cfg.DefaultModel().APIKey != "" {
		t.Errorf("parse: %v", err)
	}
}

func TestParseAllow(t *testing.T) {
	for _, tc := range []struct {
		platform, in string
		want, err    string
	}{
		{"telegram", "@Ann, bob_smith 12345;12345", "@Ann @bob_smith 12345", ""},
		{"telegram", "ann smith!", "", `"smith!" is neither a Telegram @username nor a numeric user id.`},
		{"slack", "U0123ABCD W0999", "U0123ABCD W0999", ""},
		{"slack", "@ann", "", `"@ann" is not a Slack member id`},
		{"lark", "ou_1a2b, on_3c", "ou_1a2b on_3c", ""},
		{"lark", "@ann", "", `"@ann" is a name, not a Feishu/Lark open id`},
		{"telegram", " , ", "", ""},
	} {
		got, err := parseAllow(tc.platform, tc.in)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(sentence(err), tc.err) {
				t.Errorf("%s %q: err %v, want %q", tc.platform, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q = %q, %v; want %q", tc.platform, tc.in, got, err, tc.want)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	for in, want := range map[string]string{
		"lark,telegram": "telegram lark", "Slack feishu": "slack lark", "none": "", "": "", "telegram,telegram": "telegram",
	} {
		got, err := parsePlatforms(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parsePlatforms("discord"); err == nil {
		t.Error("discord accepted")
	}
}
