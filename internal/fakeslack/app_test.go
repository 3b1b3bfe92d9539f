package fakeslack

import (
	"context"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// TestAppFromManifest: installed from a manifest, the fake refuses calls
// the scopes do not cover and drops events and commands the app did not
// subscribe to or register, like Slack.
func TestAppFromManifest(t *testing.T) {
	m, err := LoadManifest("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := m.App()
	a.Scopes = append([]string{}, a.Scopes...)
	for i, sc := range a.Scopes {
		if sc == "reactions:write" {
			a.Scopes = append(a.Scopes[:i], a.Scopes[i+1:]...)
			break
		}
	}
	a.BotEvents = []string{"app_mention", "message.im"} // no message.mpim
	s := New(t)
	s.SetApp(a)
	c := newClient(t, s, true)
	c.waitHello()
	ctx := context.Background()

	ts := s.Message("D1", "im", "U1", "hi", "")
	_, ev := c.nextUser()
	if m, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent); !ok || m.ChannelType != "im" {
		t.Fatalf("DM event = %#v", ev.InnerEvent.Data)
	}
	if _, _, err := c.api.PostMessageContext(ctx, "D1", slack.MsgOptionText("hello", false)); err != nil {
		t.Fatalf("chat:write is granted: %v", err)
	}
	c.next() // the echo
	err = c.api.AddReactionContext(ctx, "eyes", slack.ItemRef{Channel: "D1", Timestamp: ts})
	if slackErr(err) != "missing_scope" {
		t.Fatalf("reactions.add without reactions:write = %v", err)
	}
	if got := s.CallsTo("reactions.add"); len(got) != 1 || got[0].Error != "missing_scope" {
		t.Fatalf("calls = %+v", got)
	}

	if id := s.Message("G1", "mpim", "U1", "not subscribed", ""); id == "" {
		t.Fatal("Message returns the ts even when the event is not sent")
	}
	if s.SlashCommand("D1", "U1", "/other", "x") != "" {
		t.Fatal("an unregistered slash command was sent")
	}
	s.SlashCommand("D1", "U1", "/deerflow", "status")
	e := c.next()
	cmd, ok := e.Data.(slack.SlashCommand)
	if !ok || cmd.Command != "/deerflow" || cmd.ChannelName != "directmessage" || cmd.Text != "status" {
		t.Fatalf("got %s %#v; the mpim message must not have been delivered", e.Type, e.Data)
	}
}
