package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/testutil"
)

// started runs a Channel against fake (installed from the manifest) and
// returns it with what it publishes.
func started(t *testing.T, fake *fakeslack.Server, allowed ...string) (*Channel, *published) {
	t.Helper()
	fake.SetApp(loadManifest(t).App())
	c, err := New(Options{BotToken: fake.BotToken, AppToken: fake.AppToken, APIURL: fake.URL + "/api/", AllowedUsers: allowed})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := &published{testutil.Publisher{Got: make(chan *bus.Inbound, 16)}, map[string]bool{}}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub.Publisher) }()
	t.Cleanup(func() { cancel(); testutil.Wait(t, done, "Start to return") })
	return c, pub
}

// published is what a started Channel publishes.
type published struct {
	testutil.Publisher
	seen map[string]bool
}

// next returns the next message published, skipping a repeat of one
// already seen (a mention arrives as app_mention and as message; the
// router drops the second by its EventKey).
func (p *published) next(t *testing.T, what string) *bus.Inbound {
	t.Helper()
	for {
		in := testutil.Wait(t, p.Got, what)
		if !p.seen[in.EventKey] {
			p.seen[in.EventKey] = true
			return in
		}
	}
}

// TestSlashTargetsLatestConversation: /deerflow addresses the person's
// latest conversation in that channel (Slack sends no thread), each
// person's own; "@bot /stop" in a thread addresses that thread.
func TestSlashTargetsLatestConversation(t *testing.T) {
	fake := fakeslack.New(t)
	fake.EchoBotMessages = false
	_, pub := started(t, fake)
	fake.AddChannel("C1", "channel")

	first := fake.Mention("C1", "U1", "<@U0BOT> first", "")
	pub.next(t, "the first mention")
	second := fake.Mention("C1", "U1", "<@U0BOT> second", "")
	pub.next(t, "the second mention")

	fake.SlashCommand("C1", "U1", "/deerflow", "stop")
	in := pub.next(t, "the slash command")
	if in.Text != "/stop" || in.Topic != second || !in.Group || !strings.HasPrefix(in.MessageID, ephemeralPrefix) {
		t.Errorf("/deerflow stop = %+v, want /stop for thread %s", in, second)
	}
	fake.SlashCommand("C1", "U1", "/deerflow", "schedules")
	if in := pub.next(t, "/deerflow schedules"); in.Text != "/schedules" || in.Topic != "" {
		t.Errorf("/deerflow schedules addressed %q, want the whole channel", in.Topic)
	}
	fake.SlashCommand("C1", "U2", "/deerflow", "")
	if in := pub.next(t, "U2's slash command"); in.Text != "/help" || in.Topic != "" {
		t.Errorf("U2, who has no conversation here, addressed %+v", in)
	}

	fake.Mention("C1", "U1", "<@U0BOT> /stop", first)
	if in := pub.next(t, "the mention command"); in.Text != "/stop" || in.Topic != first {
		t.Errorf("@bot /stop in the first thread = %q for %q", in.Text, in.Topic)
	}
}

// TestGroupDMNeedsMention: in a group DM the bot takes mentions only, and
// only from allowed people.
func TestGroupDMNeedsMention(t *testing.T) {
	fake := fakeslack.New(t)
	fake.EchoBotMessages = false
	_, pub := started(t, fake, "U1")
	fake.AddChannel("G1", "mpim")
	fake.Message("G1", "mpim", "U1", "chatter", "")
	fake.Mention("G1", "U7", "<@U0BOT> me too", "")
	fake.Mention("G1", "U1", "<@U0BOT> hello", "")
	in := pub.next(t, "the mention")
	if in.Text != "hello" || in.UserID != "U1" || !in.Group {
		t.Errorf("got %+v", in)
	}
	fake.Mention("G1", "U1", "<@U0BOT> again", "")
	if in := pub.next(t, "the second mention"); in.Text != "again" {
		t.Errorf("published %+v, want only mentions of allowed people", in)
	}
}

// TestEphemeralAnswerInThreadWithHelp: a slash command's answer goes to
// the person alone, in the thread it addressed, with its buttons; the
// command list is written the Slack way.
func TestEphemeralAnswerInThreadWithHelp(t *testing.T) {
	fake := fakeslack.New(t)
	c, pub := started(t, fake)
	fake.AddChannel("C1", "channel")
	fake.Message("D1", "im", "U1", "hi", "")
	pub.next(t, "a message (the bot knows its name by then)")
	help := "Send me a message and I'll work on it. Commands:\n/new — start a new conversation\n" + helpLine
	_, err := c.Send(t.Context(), &bus.Outbound{Kind: bus.OutMessage, Channel: "slack", ChatID: "C1", Topic: "1700000000.000100",
		ReplyTo: ephemeralPrefix + "U1", Text: help, Final: true, Buttons: [][]bus.Button{{{ID: "c1:0", Text: "Yes"}}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages("C1")
	if len(msgs) != 1 || !msgs[0].Ephemeral || msgs[0].User != "U1" || msgs[0].ThreadTS != "1700000000.000100" {
		t.Fatalf("posted %+v", msgs)
	}
	text := msgs[0].Text
	for _, want := range []string{"/deerflow new — start", "/deerflow help —", "`@deerflow /stop`"} {
		if !strings.Contains(text, want) {
			t.Errorf("help lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(string(msgs[0].Blocks), `"action_id":"c1:0"`) {
		t.Errorf("the buttons were dropped: %s", msgs[0].Blocks)
	}
	if got := c.slackHelp("just an answer mentioning /new — sometimes"); got != "just an answer mentioning /new — sometimes" {
		t.Errorf("an ordinary answer was rewritten: %q", got)
	}
}
