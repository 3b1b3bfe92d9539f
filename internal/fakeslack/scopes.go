package fakeslack

import (
	"slices"
	"strings"
)

// App is what the installed app was granted, as its manifest says
// (oauth_config.scopes.bot, settings.event_subscriptions.bot_events,
// features.slash_commands). The zero App grants everything, as before
// fakes knew of manifests. Set it with SetApp before the client connects.
type App struct {
	Scopes    []string // bot token scopes; nil: every method is allowed
	BotEvents []string // subscribed bot events; nil: every event is delivered
	Commands  []string // registered slash commands ("/deerflow"); nil: any
}

// SetApp makes the fake behave like an app installed with a: a Web API
// method needing a scope the bot lacks answers missing_scope, and events
// or slash commands the app did not subscribe to or register (or lacks
// the scope for) never arrive.
func (s *Server) SetApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app = a
}

// methodScopes is the bot scope each Web API method needs (docs.slack.dev
// method pages, "Required scopes"); methods absent need none (auth.test)
// or depend on the channel (conversations.info, see scopeFor).
var methodScopes = map[string]string{
	"chat.postMessage":                      "chat:write",
	"chat.update":                           "chat:write",
	"chat.delete":                           "chat:write",
	"chat.postEphemeral":                    "chat:write",
	"reactions.add":                         "reactions:write",
	"reactions.remove":                      "reactions:write",
	"assistant.threads.setStatus":           "assistant:write",
	"assistant.threads.setTitle":            "assistant:write",
	"assistant.threads.setSuggestedPrompts": "assistant:write",
	"files.getUploadURLExternal":            "files:write",
	"files.completeUploadExternal":          "files:write",
	"files.info":                            "files:read",
	"files-pri":                             "files:read", // downloading url_private
}

// historyScope is the scope that lets an app read (and so receive) the
// messages of a conversation of this type.
var historyScope = map[string]string{
	"channel": "channels:history", "group": "groups:history", "im": "im:history", "mpim": "mpim:history",
}

// readScope is the scope conversations.info needs for a conversation type.
var readScope = map[string]string{
	"channel": "channels:read", "group": "groups:read", "im": "im:read", "mpim": "mpim:read",
}

// scopeFor returns the scope method needs with this form ("" for none);
// s.mu must be held.
func (s *Server) scopeFor(method string, q *req) string {
	if method == "conversations.info" {
		return readScope[s.channels[q.get("channel")]]
	}
	return methodScopes[method]
}

// granted reports whether the bot has scope; s.mu must be held.
func (s *Server) granted(scope string) bool {
	return scope == "" || s.app.Scopes == nil || slices.Contains(s.app.Scopes, scope)
}

// subscribed reports whether an inner event reaches the app: its bot
// event is subscribed and its scope granted; s.mu must be held.
func (s *Server) subscribed(event map[string]any) bool {
	typ, _ := event["type"].(string)
	name, scope := typ, ""
	switch typ {
	case "app_mention":
		scope = "app_mentions:read"
	case "message":
		chType, _ := event["channel_type"].(string)
		name = "message." + map[string]string{"channel": "channels", "group": "groups", "im": "im", "mpim": "mpim"}[chType]
		scope = historyScope[chType]
	}
	if s.app.BotEvents != nil && !slices.Contains(s.app.BotEvents, name) {
		return false
	}
	return s.granted(scope)
}

// registered reports whether a slash command reaches the app; s.mu must
// be held.
func (s *Server) registered(command string) bool {
	if s.app.Commands != nil && !slices.Contains(s.app.Commands, command) {
		return false
	}
	return s.granted("commands")
}

// missingScope is the error body of a call lacking scope.
func (s *Server) missingScope(scope string) map[string]any {
	return map[string]any{"ok": false, "error": "missing_scope", "needed": scope,
		"provided": strings.Join(s.app.Scopes, ",")}
}
