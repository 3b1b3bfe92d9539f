package main

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
)

// installApp makes the fake Slack grant what the shipped manifest asks
// for, and no more: a missing scope, event or command fails these tests
// the way it fails a real install.
func installApp(t *testing.T, sl *fakeslack.Server) {
	t.Helper()
	m, err := fakeslack.LoadManifest("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sl.SetApp(m.App())
}

// waitEphemeral waits for a message shown to user alone in channel that
// contains want, and returns it.
func waitEphemeral(t *testing.T, sl *fakeslack.Server, channel, user, want string) *fakeslack.Posted {
	t.Helper()
	var found *fakeslack.Posted
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages(channel) {
			if p.Ephemeral && p.User == user && strings.Contains(p.Text+markdownOf(p), want) {
				found = p
				return true
			}
		}
		return false
	})
	if found == nil {
		t.Fatalf("%s never showed %s %q", channel, user, want)
	}
	return found
}

// TestSlackSlashNewAddressesLatestConversation: a slash command carries
// no thread, so `/deerflow new` acts on the person's latest conversation
// in that DM or channel, answers them alone in its thread, and the next
// message there starts afresh.
func TestSlackSlashNewAddressesLatestConversation(t *testing.T) {
	for _, tc := range []struct{ name, channel, chType string }{
		{"dm", "D1", "im"},
		{"channel thread", "C1", "channel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl, model := newSlack(t), fakeopenai.New(t)
			installApp(t, sl)
			model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "re: " + r.Last().Content} })
			run := startSlack(t, sl, model, t.TempDir())
			sl.AddChannel(tc.channel, tc.chType)
			var ts string
			if tc.chType == "im" {
				ts = sl.Message(tc.channel, "im", "U1", "my number is 42", "")
			} else {
				ts = sl.Mention(tc.channel, "U1", "<@U0BOT> my number is 42", "")
			}
			waitPosted(t, sl, tc.channel, "re: my number is 42", true)
			sl.Message(tc.channel, tc.chType, "U1", "and 43", ts)
			waitPosted(t, sl, tc.channel, "re: and 43", true)
			run.app.router.WaitIdle(t.Context())

			if sl.SlashCommand(tc.channel, "U1", "/deerflow", "new") == "" {
				t.Fatal("the manifest registers no /deerflow")
			}
			p := waitEphemeral(t, sl, tc.channel, "U1", "Started a new conversation")
			if p.ThreadTS != ts {
				t.Errorf("the answer to /deerflow new went to thread %q, want the conversation's %q", p.ThreadTS, ts)
			}
			sl.Message(tc.channel, tc.chType, "U1", "what is my number?", ts)
			waitPosted(t, sl, tc.channel, "re: what is my number?", true)
			reqs := model.Requests()
			if got := reqs[len(reqs)-1].Roles(); got != "system,user" {
				t.Errorf("after /deerflow new the thread's next message saw %s, want a fresh conversation", got)
			}
		})
	}
}

// TestSlackMentionStopStopsThatThread: "@bot /stop" in a thread is the
// command for that thread; a run in another thread goes on.
func TestSlackMentionStopStopsThatThread(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	installApp(t, sl)
	holdA, holdB := make(chan struct{}), make(chan struct{})
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		hold := holdB
		if strings.Contains(r.Last().Content, "alpha") {
			hold = holdA
		}
		return fakeopenai.Turn{Text: "done: " + r.Last().Content, Hold: hold}
	})
	run := startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("C1", "channel")
	a := sl.Mention("C1", "U1", "<@U0BOT> alpha task", "")
	model.WaitRequests(1)
	sl.Mention("C1", "U2", "<@U0BOT> beta task", "")
	model.WaitRequests(2)

	sl.Mention("C1", "U1", "<@U0BOT> /stop", a)
	model.WaitCancelled(1)
	close(holdB)
	waitPosted(t, sl, "C1", "done: beta task", true)
	close(holdA)
	run.app.router.WaitIdle(t.Context())
	for _, p := range sl.Messages("C1") {
		if strings.Contains(p.Text+markdownOf(p), "done: alpha") {
			t.Errorf("the stopped run still answered: %q", p.Text)
		}
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model ran %d times; /stop must not reach it", n)
	}
}

// TestSlackSlashHelpNamesSlackForms: on Slack, help lists the commands as
// /deerflow <command> and says how to address one thread.
func TestSlackSlashHelpNamesSlackForms(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	installApp(t, sl)
	startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("D1", "im")
	sl.SlashCommand("D1", "U1", "/deerflow", "help")
	p := waitEphemeral(t, sl, "D1", "U1", "/deerflow new —")
	text := markdownOf(p)
	for _, want := range []string{"/deerflow stop —", "/deerflow help —", "`/deerflow <command>`", "`@deerflow /stop`"} {
		if !strings.Contains(text, want) {
			t.Errorf("help lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\n/new —") {
		t.Errorf("help still lists a bare /new, which Slack would take:\n%s", text)
	}
}

// TestSlackGroupDM: in a group DM (mpim) the bot answers when mentioned,
// like in a channel, and then follows that thread; the allow-list holds
// for each person in it.
func TestSlackGroupDM(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	installApp(t, sl)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "re: " + r.Last().Content} })
	run := startSlack(t, sl, model, t.TempDir(), func(c *config.Config) { c.Channels.Slack.AllowedUsers = []string{"U1", "U2"} })
	sl.AddChannel("G0MPIM", "mpim")
	sl.Message("G0MPIM", "mpim", "U1", "lunch at noon?", "")
	ts := sl.Mention("G0MPIM", "U1", "<@U0BOT> plan our offsite", "")
	waitPosted(t, sl, "G0MPIM", "re: plan our offsite", true)
	run.app.router.WaitIdle(t.Context())
	sl.Message("G0MPIM", "mpim", "U2", "add a hike", ts) // the thread, no mention
	waitPosted(t, sl, "G0MPIM", "re: add a hike", true)
	sl.Mention("G0MPIM", "U9", "<@U0BOT> and me?", "")
	sl.Message("G0MPIM", "mpim", "U9", "hello?", ts)
	sl.SlashCommand("G0MPIM", "U9", "/deerflow", "status")
	sl.Mention("G0MPIM", "U2", "<@U0BOT> done", "") // after U9's, in order
	waitPosted(t, sl, "G0MPIM", "re: done", true)
	run.app.router.WaitIdle(t.Context())

	var got []string
	for _, r := range model.Requests() {
		got = append(got, r.Last().Content)
	}
	if strings.Join(got, "|") != "plan our offsite|add a hike|done" {
		t.Errorf("the model ran for %q; want mentions and thread replies of allowed people only", got)
	}
	for _, p := range sl.Messages("G0MPIM") {
		if p.User == "U9" || strings.Contains(p.ThreadTS+p.Text, "and me") {
			t.Errorf("someone outside allowed_users got an answer: %+v", p)
		}
	}
}

// TestSlackSlashNewMidRunAsksWithButtons: `/deerflow new` while the
// latest conversation is still answering asks first, privately, with
// buttons that work on the ephemeral message.
func TestSlackSlashNewMidRunAsksWithButtons(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	installApp(t, sl)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "slow answer", Hold: hold})
	run := startSlack(t, sl, model, t.TempDir())
	ts := sl.Message("D1", "im", "U1", "take your time", "")
	model.WaitRequests(1)

	sl.SlashCommand("D1", "U1", "/deerflow", "new")
	ask := waitEphemeral(t, sl, "D1", "U1", "Start a new conversation anyway?")
	if ask.ThreadTS != ts {
		t.Errorf("the question went to thread %q, want %q", ask.ThreadTS, ts)
	}
	var confirm string
	for _, b := range sl.Buttons("D1", ask.TS) {
		if b.Text == "Start a new conversation" {
			confirm = b.ActionID
		}
	}
	if confirm == "" {
		t.Fatalf("the ephemeral question has buttons %+v", sl.Buttons("D1", ask.TS))
	}
	sl.Press("D1", ask.TS, "U1", confirm)
	started := waitPosted(t, sl, "D1", "Started a new conversation", true)
	if started.ThreadTS != ts {
		t.Errorf("the new conversation was announced in %q, want the thread %q", started.ThreadTS, ts)
	}
	close(hold)
	run.app.router.WaitIdle(t.Context())
	for _, c := range sl.CallsTo("chat.update") {
		if c.Form["ts"] == ask.TS {
			t.Errorf("chat.update of the ephemeral question (%s): Slack refuses it", c.Error)
		}
	}
}
