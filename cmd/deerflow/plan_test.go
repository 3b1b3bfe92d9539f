package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

func todosCall(items string) fakeopenai.Turn {
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_todos", Arguments: `{"todos":[` + items + `]}`}}}
}

// The checklist is offered only with plan mode on (kept across a
// restart), and shown as one message edited as the items change.
func TestTelegramPlanChecklist(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	h1, h2 := make(chan struct{}), make(chan struct{})
	first := todosCall(`{"content":"Read the code","status":"in_progress"},{"content":"Write the fix","status":"pending"},{"content":"Run the tests","status":"pending"}`)
	second := todosCall(`{"content":"Read the code","status":"completed"},{"content":"Write the fix","status":"in_progress"},{"content":"Run the tests","status":"pending"}`)
	second.Hold = h1
	third := todosCall(`{"content":"Read the code","status":"completed"},{"content":"Write the fix","status":"completed"},{"content":"Run the tests","status":"completed"}`)
	third.Hold = h2
	model.Script(fakeopenai.Turn{Text: "Plain answer."}, first, second, third, fakeopenai.Turn{Text: "All done."})
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir)
	tg.PushMessage(faketelegram.Private(ann, "/plan"))
	waitMessage(t, tg, ann.ID, "Plan mode is off here")
	tg.PushMessage(faketelegram.Private(ann, "hello"))
	run.waitFinal(tg, ann.ID, "Plain answer.")
	if names := model.Requests()[0].ToolNames(); slices.Contains(names, "write_todos") {
		t.Errorf("plan mode off, yet write_todos offered: %v", names)
	}
	tg.PushMessage(faketelegram.Private(ann, "/plan on"))
	waitMessage(t, tg, ann.ID, "Plan mode is on:")
	run.stop()

	run = startTelegram(t, tg, model, dir) // plan mode is kept
	tg.PushMessage(faketelegram.Private(ann, "fix the bug"))
	list := waitMessage(t, tg, ann.ID, "Plan · 0/3 done")
	if names := model.Requests()[1].ToolNames(); !slices.Contains(names, "write_todos") {
		t.Errorf("plan mode on, yet write_todos not offered: %v", names)
	}
	if !strings.Contains(model.Requests()[1].Messages[0].Content, "<plan_mode>") {
		t.Error("plan mode on, yet the system prompt has no plan note")
	}
	close(h1)
	waitMessage(t, tg, ann.ID, "Plan · 1/3 done")
	close(h2)
	run.waitFinal(tg, ann.ID, "All done.")
	var got *faketelegram.SentMessage
	for _, m := range tg.Messages(ann.ID) {
		if m.MessageID == list.MessageID {
			got = m
		}
	}
	want := "Plan · 3/3 done\n☑ Read the code\n☑ Write the fix\n☑ Run the tests"
	if got == nil || got.PlainText != want || got.Edits < 2 {
		t.Fatalf("checklist message = %+v, want %q edited twice; messages:%s", got, want, dump(tg.Messages(ann.ID)))
	}
	n := 0
	for _, c := range tg.CallsOf("sendMessage") {
		if strings.Contains(c.Params["text"], "Plan ·") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the checklist was posted %d times, want once then edited", n)
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	st := waitMessage(t, tg, ann.ID, "Plan: 3/3 done")
	if !strings.Contains(st.PlainText, "☑ Run the tests") {
		t.Errorf("/status = %q", st.PlainText)
	}
}

// slackSays waits for a message in channel whose text or markdown shows
// want.
func slackSays(t *testing.T, sl *fakeslack.Server, channel, want string) *fakeslack.Posted {
	t.Helper()
	var found *fakeslack.Posted
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages(channel) {
			if strings.Contains(p.Text, want) || strings.Contains(markdownOf(p), want) {
				found = p
				return true
			}
		}
		return false
	})
	if found == nil {
		t.Fatalf("%s never showed %q", channel, want)
	}
	return found
}

// The goal reaches every later request, in the model's view only, until
// /goal clear.
func TestSlackGoal(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		words := strings.Fields(r.Last().Content) // the message comes after what the model is given with it
		return fakeopenai.Turn{Text: "re: " + words[len(words)-1]}
	})
	run := startSlack(t, sl, model, t.TempDir())
	ts := sl.Message("D1", "im", "U1", "one", "")
	slackSays(t, sl, "D1", "re: one")
	sl.Message("D1", "im", "U1", "/goal", ts)
	slackSays(t, sl, "D1", "No goal is set here")
	sl.Message("D1", "im", "U1", "/goal ship the v2 release", ts)
	slackSays(t, sl, "D1", "Goal set: ship the v2 release")
	for _, m := range []string{"two", "three"} {
		sl.Message("D1", "im", "U1", m, ts)
		slackSays(t, sl, "D1", "re: "+m)
		run.app.router.WaitIdle(t.Context())
	}
	sl.Message("D1", "im", "U1", "/status", ts)
	if st := slackSays(t, sl, "D1", "Goal: ship the v2 release"); !strings.Contains(st.Text+markdownOf(st), "Thread:") {
		t.Errorf("/status = %q", st.Text)
	}
	sl.Message("D1", "im", "U1", "/goal clear", ts)
	slackSays(t, sl, "D1", "Goal cleared.")
	sl.Message("D1", "im", "U1", "four", ts)
	slackSays(t, sl, "D1", "re: four")
	run.app.router.WaitIdle(t.Context())
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		has := strings.Contains(r.Last().Content, "ship the v2 release")
		if want := i == 1 || i == 2; has != want {
			t.Errorf("request %d carries the goal: %v, want %v (%q)", i, has, want, r.Last().Content)
		}
	}
	// The stored history stays as sent: the goal is in the latest message only.
	for _, m := range reqs[2].Messages[:len(reqs[2].Messages)-1] {
		if strings.Contains(m.Content, "ship the v2 release") {
			t.Errorf("an earlier message carries the goal: %q", m.Content)
		}
	}
}
