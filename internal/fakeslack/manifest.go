package fakeslack

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// Manifest is the part of a Slack app manifest (docs.slack.dev/reference/
// app-manifest) that says what the app may do, with Slack's field names.
type Manifest struct {
	Metadata           any `yaml:"_metadata"`
	DisplayInformation struct {
		Name            string `yaml:"name"`
		Description     string `yaml:"description"`
		LongDescription string `yaml:"long_description"`
		BackgroundColor string `yaml:"background_color"`
	} `yaml:"display_information"`
	Features struct {
		AppHome *struct {
			HomeTabEnabled             bool  `yaml:"home_tab_enabled"`
			MessagesTabEnabled         *bool `yaml:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled *bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		BotUser *struct {
			DisplayName  string `yaml:"display_name"`
			AlwaysOnline bool   `yaml:"always_online"`
		} `yaml:"bot_user"`
		SlashCommands []struct {
			Command      string `yaml:"command"`
			Description  string `yaml:"description"`
			UsageHint    string `yaml:"usage_hint"`
			ShouldEscape *bool  `yaml:"should_escape"`
		} `yaml:"slash_commands"`
		Shortcuts     any `yaml:"shortcuts"`
		UnfurlDomains any `yaml:"unfurl_domains"`
		AssistantView any `yaml:"assistant_view"`
	} `yaml:"features"`
	OAuthConfig struct {
		RedirectURLs []string `yaml:"redirect_urls"`
		Scopes       struct {
			Bot  []string `yaml:"bot"`
			User []string `yaml:"user"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			RequestURL string   `yaml:"request_url"`
			BotEvents  []string `yaml:"bot_events"`
			UserEvents []string `yaml:"user_events"`
		} `yaml:"event_subscriptions"`
		Interactivity struct {
			IsEnabled             bool   `yaml:"is_enabled"`
			RequestURL            string `yaml:"request_url"`
			MessageMenuOptionsURL string `yaml:"message_menu_options_url"`
		} `yaml:"interactivity"`
		AllowedIPAddressRanges []string `yaml:"allowed_ip_address_ranges"`
		OrgDeployEnabled       bool     `yaml:"org_deploy_enabled"`
		SocketModeEnabled      bool     `yaml:"socket_mode_enabled"`
		TokenRotationEnabled   bool     `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
}

// LoadManifest reads a YAML app manifest. Unknown fields are errors, so a
// misspelt key (Slack would refuse it) fails here too.
func LoadManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("fakeslack: manifest %s: %w", path, err)
	}
	return &m, nil
}

// App is what installing the app of this manifest grants (see SetApp).
func (m *Manifest) App() App {
	a := App{Scopes: m.OAuthConfig.Scopes.Bot, BotEvents: m.Settings.EventSubscriptions.BotEvents, Commands: []string{}}
	for _, c := range m.Features.SlashCommands {
		a.Commands = append(a.Commands, c.Command)
	}
	return a
}
