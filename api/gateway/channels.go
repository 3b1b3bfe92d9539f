package gateway

import (
	"net/http"

	"github.com/deerflow/deerflow/config"
)

// providerJSON is DeerFlow's ChannelProvider (frontend
// core/channels/types.ts).
type providerJSON struct {
	Provider          string  `json:"provider"`
	DisplayName       string  `json:"display_name"`
	Enabled           bool    `json:"enabled"`
	Configured        bool    `json:"configured"`
	Connectable       bool    `json:"connectable"`
	UnavailableReason *string `json:"unavailable_reason"`
	AuthMode          string  `json:"auth_mode"`
	ConnectionStatus  string  `json:"connection_status"`
	CredentialFields  []any   `json:"credential_fields"`
	Bots              int     `json:"bots"` // enabled bots of the platform (deerflow's)
}

// platforms are deerflow's chat platforms with DeerFlow's provider ids
// (Lark is DeerFlow's "feishu").
var platforms = []struct{ platform, provider, display, key string }{
	{"telegram", "telegram", "Telegram", "channels.telegram"},
	{"slack", "slack", "Slack", "channels.slack"},
	{"lark", "feishu", "Lark / Feishu", "channels.lark"},
}

// channelProviders answers GET /api/channels/providers: the three
// platforms and whether a bot of each is on. deerflow's bots are the
// operator's, set up in the config file with their allow-lists; people do
// not bind their accounts from the UI, so none is connectable.
func (g *Gateway) channelProviders(w http.ResponseWriter, r *http.Request) {
	all := g.o.Config.AllChannelInstances()
	list := make([]providerJSON, 0, len(platforms))
	someOn := false
	for _, p := range platforms {
		j := providerJSON{Provider: p.provider, DisplayName: p.display, AuthMode: "config",
			ConnectionStatus: "not_connected", CredentialFields: []any{}}
		for _, in := range all {
			if in.Platform != p.platform || !in.Enabled {
				continue
			}
			j.Enabled, j.Bots = true, j.Bots+1
			j.Configured = j.Configured || hasCredentials(in)
		}
		reason := "Set up in deerflow's config file (" + p.key + "); accounts are not connected from the web UI."
		if j.Enabled && j.Configured {
			j.ConnectionStatus = "connected"
		}
		j.UnavailableReason = &reason
		someOn = someOn || j.Enabled
		list = append(list, j)
	}
	reply(w, http.StatusOK, map[string]any{"enabled": someOn, "providers": list})
}

func hasCredentials(in config.ChannelInstance) bool {
	switch {
	case in.Telegram != nil:
		return in.Telegram.BotToken != ""
	case in.Slack != nil:
		return in.Slack.BotToken != "" && in.Slack.AppToken != ""
	case in.Lark != nil:
		return in.Lark.AppID != "" && in.Lark.AppSecret != ""
	}
	return false
}

// channelConnections answers GET /api/channels/connections: none (see
// channelProviders).
func (g *Gateway) channelConnections(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, map[string]any{"connections": []any{}})
}
