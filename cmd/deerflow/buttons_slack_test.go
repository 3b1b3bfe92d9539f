package main

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
)

// slackButtonTexts lists a message's button labels.
func slackButtonTexts(bs []fakeslack.Button) string {
	var texts []string
	for _, b := range bs {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, ",")
}

// posted returns the bot's message ts in channel as it is now.
func posted(sl *fakeslack.Server, channel, ts string) *fakeslack.Posted {
	for _, p := range sl.Messages(channel) {
		if p.TS == ts {
			return p
		}
	}
	return nil
}

// ephemeralTo waits for a message shown to user alone that says want.
func ephemeralTo(t *testing.T, sl *fakeslack.Server, channel, user, want string) {
	t.Helper()
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages(channel) {
			if p.Ephemeral && p.User == user && strings.Contains(p.Text, want) {
				return true
			}
		}
		return false
	})
}

func TestSlackClarificationButtons(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	run := startSlack(t, sl, model, t.TempDir(), func(c *config.Config) {
		c.Channels.Slack.AllowedUsers = []string{"U1", "U2"}
	})
	sl.Mention("C1", "U1", "<@U0BOT> what's the weather?", "")
	q := waitPosted(t, sl, "C1", "Which city do you mean?", true)
	run.app.router.WaitIdle(t.Context())
	bs := sl.Buttons("C1", q.TS)
	if got := slackButtonTexts(bs); got != "Oslo,Bergen" {
		t.Fatalf("buttons = %q, want Oslo,Bergen", got)
	}

	// Someone outside the allow-list: acknowledged, nothing else.
	env := sl.Press("C1", q.TS, "U9", bs[0].ActionID)
	sl.WaitFor(func() bool { return sl.Acked(env) })
	// Someone else in the channel: the question is U1's.
	env = sl.Press("C1", q.TS, "U2", bs[0].ActionID)
	sl.WaitFor(func() bool { return sl.Acked(env) })
	ephemeralTo(t, sl, "C1", "U2", "Only the person who asked can answer this.")
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model ran %d times, want 1", n)
	}

	env = sl.Press("C1", q.TS, "U1", bs[1].ActionID)
	sl.WaitFor(func() bool { return sl.Acked(env) })
	waitPosted(t, sl, "C1", "You chose Bergen; it is sunny there.", true)
	run.app.router.WaitIdle(t.Context())
	last := model.Requests()[len(model.Requests())-1]
	if got := last.Roles(); got != "system,user,assistant,tool,assistant,user" || last.Last().Content != "Bergen" {
		t.Errorf("the answer continued with %s, %q", got, last.Last().Content)
	}
	sl.WaitFor(func() bool {
		return strings.Contains(markdownOf(posted(sl, "C1", q.TS)), "✅ Bergen — chosen by user-U1") && sl.Buttons("C1", q.TS) == nil
	})

	// Pressed again (an old client still shows the buttons): refused.
	requests := len(model.Requests())
	env = sl.PressStale("C1", q.TS, "U1", bs[0])
	sl.WaitFor(func() bool { return sl.Acked(env) })
	ephemeralTo(t, sl, "C1", "U1", "Already answered: Bergen.")
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != requests {
		t.Errorf("the model ran %d more times", n-requests)
	}
}

func TestSlackModelsButtons(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "hi from " + r.Model} })
	run := startSlack(t, sl, model, t.TempDir())
	ts := sl.Message("D1", "im", "U1", "/models", "")
	list := waitPosted(t, sl, "D1", "Models:", true)
	bs := sl.Buttons("D1", list.TS)
	if got := slackButtonTexts(bs); got != "✓ default,big" {
		t.Fatalf("buttons = %q", got)
	}
	env := sl.Press("D1", list.TS, "U1", bs[1].ActionID)
	sl.WaitFor(func() bool { return sl.Acked(env) })
	waitPosted(t, sl, "D1", "This conversation now uses big", true)
	sl.Message("D1", "im", "U1", "hello", ts)
	waitPosted(t, sl, "D1", "hi from fake-big", true)
	run.app.router.WaitIdle(t.Context())
}

func TestSlackClarificationButtonAcrossARestart(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	dir := t.TempDir()
	run := startSlack(t, sl, model, dir)
	sl.Message("D1", "im", "U1", "what's the weather?", "")
	q := waitPosted(t, sl, "D1", "Which city do you mean?", true)
	run.app.router.WaitIdle(t.Context())
	bs := sl.Buttons("D1", q.TS)
	run.stop()
	sl.DropSocket() // the fake learns the socket is gone

	// Pressed while deerflow is down: Slack delivers it on the next
	// connection.
	env := sl.Press("D1", q.TS, "U1", bs[0].ActionID)
	run = startSlack(t, sl, model, dir)
	waitPosted(t, sl, "D1", "You chose Oslo", true)
	sl.WaitFor(func() bool {
		return sl.Acked(env) && strings.Contains(markdownOf(posted(sl, "D1", q.TS)), "✅ Oslo — chosen by user-U1")
	})
	run.app.router.WaitIdle(t.Context())
}
