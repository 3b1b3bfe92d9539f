package slack

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeslack"
)

const manifestPath = "../../deploy/slack-app-manifest.yaml"

// apiScopes maps each slack-go call the channel may make to the Web API
// method and the bot scope Slack's method page lists as required. A call
// missing here fails TestManifestScopesCoverCalls: add it with its scope.
var apiScopes = map[string]struct{ method, scope string }{
	"AuthTestContext":       {"auth.test", ""},
	"PostMessageContext":    {"chat.postMessage", "chat:write"},
	"UpdateMessageContext":  {"chat.update", "chat:write"},
	"PostEphemeralContext":  {"chat.postEphemeral", "chat:write"},
	"DeleteMessageContext":  {"chat.delete", "chat:write"},
	"AddReactionContext":    {"reactions.add", "reactions:write"},
	"RemoveReactionContext": {"reactions.remove", "reactions:write"},
	"UploadFileContext":     {"files.getUploadURLExternal + files.completeUploadExternal", "files:write"},
	"GetFileContext":        {"url_private download", "files:read"},
	// assistant.threads.setStatus needs assistant:write, which Slack grants
	// only to apps with the Agents & AI Apps feature; the manifest leaves
	// that off (it changes how DMs look) and Typing falls back to none.
	"SetAssistantThreadsStatusContext": {"assistant.threads.setStatus", ""},
}

// handledEvents are the bot events inbound turns into messages: mentions,
// and messages by channel type (im, mpim, public and private channels).
var handledEvents = map[string]string{
	"app_mention":      "app_mentions:read",
	"message.im":       "im:history",
	"message.mpim":     "mpim:history",
	"message.channels": "channels:history",
	"message.groups":   "groups:history",
}

// apiCalls returns the c.api.<Method> calls of the package's own files.
func apiCalls(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "api" {
				seen[sel.Sel.Name] = true
			}
			return true
		})
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func loadManifest(t *testing.T) *fakeslack.Manifest {
	t.Helper()
	m, err := fakeslack.LoadManifest(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManifestScopesCoverCalls(t *testing.T) {
	m := loadManifest(t)
	calls := apiCalls(t)
	if len(calls) < 5 {
		t.Fatalf("found only %v; is the parse of c.api calls broken?", calls)
	}
	for _, call := range calls {
		s, ok := apiScopes[call]
		switch {
		case !ok:
			t.Errorf("the channel calls %s: add it to apiScopes with the scope Slack requires", call)
		case s.scope != "" && !slices.Contains(m.OAuthConfig.Scopes.Bot, s.scope):
			t.Errorf("%s (%s) needs scope %s; oauth_config.scopes.bot lacks it", call, s.method, s.scope)
		}
	}
	for _, scope := range []string{"commands", "im:read", "im:write", "mpim:read"} {
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, scope) {
			t.Errorf("oauth_config.scopes.bot lacks %s", scope)
		}
	}
}

func TestManifestEventsAndFeatures(t *testing.T) {
	m := loadManifest(t)
	if m.DisplayInformation.Name == "" {
		t.Error("display_information.name is required")
	}
	if m.Features.BotUser == nil || m.Features.BotUser.DisplayName == "" {
		t.Error("features.bot_user.display_name is required for a bot")
	}
	home := m.Features.AppHome
	if home == nil || home.MessagesTabEnabled == nil || !*home.MessagesTabEnabled ||
		home.MessagesTabReadOnlyEnabled == nil || *home.MessagesTabReadOnlyEnabled {
		t.Error(`features.app_home needs messages_tab_enabled: true and messages_tab_read_only_enabled: false, or DMs are "turned off"`)
	}
	var slash bool
	for _, c := range m.Features.SlashCommands {
		if c.Command == "/deerflow" {
			slash = c.ShouldEscape != nil && !*c.ShouldEscape && c.Description != ""
		}
	}
	if !slash {
		t.Error("features.slash_commands needs /deerflow with a description and should_escape: false")
	}
	for event, scope := range handledEvents {
		if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, event) {
			t.Errorf("settings.event_subscriptions.bot_events lacks %s", event)
		}
		if !slices.Contains(m.OAuthConfig.Scopes.Bot, scope) {
			t.Errorf("the event %s needs scope %s", event, scope)
		}
	}
	if !m.Settings.Interactivity.IsEnabled {
		t.Error("settings.interactivity.is_enabled must be true: buttons")
	}
	if !m.Settings.SocketModeEnabled {
		t.Error("settings.socket_mode_enabled must be true")
	}
	if m.Settings.EventSubscriptions.RequestURL != "" || m.Settings.Interactivity.RequestURL != "" {
		t.Error("Socket Mode apps set no request_url")
	}
}
