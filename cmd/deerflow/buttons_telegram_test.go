package main

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/store"
)

// buttonTexts lists a keyboard's labels, row by row.
func buttonTexts(kb [][]faketelegram.InlineButton) []string {
	var texts []string
	for _, row := range kb {
		for _, b := range row {
			texts = append(texts, b.Text)
		}
	}
	return texts
}

// pressAndWait presses a button as from and waits until the press is
// answered; it returns the notice shown.
func pressAndWait(t *testing.T, tg *faketelegram.Server, from faketelegram.User, chat int64, msg int, data string) string {
	t.Helper()
	u := tg.Press(from, chat, msg, data)
	var got []string
	tg.WaitFor(func() bool {
		got = tg.Answered(u.CallbackQuery.ID)
		return len(got) > 0
	})
	return got[0]
}

// message returns the bot's message id in chat as it is now.
func message(tg *faketelegram.Server, chat int64, id int) *faketelegram.SentMessage {
	for _, m := range tg.Messages(chat) {
		if m.MessageID == id {
			return m
		}
	}
	return nil
}

func TestTelegramClarificationButtons(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "what's the weather?"))
	q := run.waitFinal(tg, ann.ID, "Which city do you mean?")
	kb := tg.Keyboard(ann.ID, q.MessageID)
	if got := strings.Join(buttonTexts(kb), ","); got != "Oslo,Bergen" {
		t.Fatalf("buttons = %q, want Oslo,Bergen", got)
	}
	if !strings.Contains(q.PlainText, "2. Bergen") {
		t.Errorf("the numbered list is gone: %q", q.PlainText)
	}

	if notice := pressAndWait(t, tg, ann, ann.ID, q.MessageID, kb[1][0].CallbackData); notice != "" {
		t.Errorf("the press was answered with %q", notice)
	}
	run.waitFinal(tg, ann.ID, "You chose Bergen; it is sunny there.")
	last := model.Requests()[len(model.Requests())-1]
	if got := last.Roles(); got != "system,user,assistant,tool,assistant,user" || last.Last().Content != "Bergen" {
		t.Errorf("the answer continued with %s, %q", got, last.Last().Content)
	}
	tg.WaitFor(func() bool {
		m := message(tg, ann.ID, q.MessageID)
		return strings.Contains(m.PlainText, "✅ Bergen — chosen by ann") && tg.Keyboard(ann.ID, q.MessageID) == nil
	})

	// A second press changes nothing and says why.
	requests, edits := len(model.Requests()), message(tg, ann.ID, q.MessageID).Edits
	if notice := pressAndWait(t, tg, ann, ann.ID, q.MessageID, kb[0][0].CallbackData); !strings.Contains(notice, "Already answered: Bergen") {
		t.Errorf("second press answered with %q", notice)
	}
	// A press of an id we never made: a notice, nothing else.
	if notice := pressAndWait(t, tg, ann, ann.ID, q.MessageID, "0123456789abcdef.1"); notice != "This button is no longer active." {
		t.Errorf("unknown press answered with %q", notice)
	}
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != requests {
		t.Errorf("the model ran %d more times", n-requests)
	}
	if m := message(tg, ann.ID, q.MessageID); !strings.Contains(m.PlainText, "chosen by ann") || m.Edits != edits {
		t.Errorf("the question was edited again: %d edits, %q", m.Edits, m.PlainText)
	}
}

func TestTelegramClarificationButtonsInAGroup(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	carl := faketelegram.User{ID: 1003, FirstName: "Carl", Username: "carl"}
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) {
		c.Channels.Telegram.AllowedUsers = []string{"@ann", "@bob"}
	})
	group := faketelegram.Chat{ID: -100334, Type: "supergroup", Title: "Trips"}
	tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot what's the weather?"))
	q := run.waitFinal(tg, group.ID, "Which city do you mean?")
	kb := tg.Keyboard(group.ID, q.MessageID)
	if len(kb) != 2 {
		t.Fatalf("keyboard = %v", kb)
	}
	// Someone outside the allow-list: answered (the client stops
	// spinning), nothing else.
	if notice := pressAndWait(t, tg, carl, group.ID, q.MessageID, kb[0][0].CallbackData); notice != "" {
		t.Errorf("carl's press answered with %q", notice)
	}
	// Bob may use the bot, but the question is Ann's.
	if notice := pressAndWait(t, tg, bob, group.ID, q.MessageID, kb[0][0].CallbackData); notice != "Only the person who asked can answer this." {
		t.Errorf("bob's press answered with %q", notice)
	}
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model ran %d times, want 1", n)
	}
	if len(tg.Keyboard(group.ID, q.MessageID)) != 2 {
		t.Error("the buttons went away")
	}
	pressAndWait(t, tg, ann, group.ID, q.MessageID, kb[0][0].CallbackData)
	run.waitFinal(tg, group.ID, "You chose Oslo")
	tg.WaitFor(func() bool {
		return strings.Contains(message(tg, group.ID, q.MessageID).PlainText, "✅ Oslo — chosen by ann")
	})
}

func TestTelegramClarificationButtonAcrossARestart(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir)
	tg.PushMessage(faketelegram.Private(ann, "what's the weather?"))
	q := run.waitFinal(tg, ann.ID, "Which city do you mean?")
	kb := tg.Keyboard(ann.ID, q.MessageID)
	run.stop()

	// Pressed while deerflow is down: handled once it is back.
	u := tg.Press(ann, ann.ID, q.MessageID, kb[0][0].CallbackData)
	run = startTelegram(t, tg, model, dir)
	run.waitFinal(tg, ann.ID, "You chose Oslo")
	tg.WaitFor(func() bool {
		return len(tg.Answered(u.CallbackQuery.ID)) == 1 &&
			strings.Contains(message(tg, ann.ID, q.MessageID).PlainText, "chosen by ann")
	})
}

func TestTelegramModelsButtons(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "hi from " + r.Model} })
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "/models"))
	list := waitMessage(t, tg, ann.ID, "Models:")
	kb := tg.Keyboard(ann.ID, list.MessageID)
	if got := strings.Join(buttonTexts(kb), ","); got != "✓ default,big" {
		t.Fatalf("buttons = %q", got)
	}
	pressAndWait(t, tg, ann, ann.ID, list.MessageID, kb[1][0].CallbackData)
	waitMessage(t, tg, ann.ID, "This conversation now uses big")
	tg.WaitFor(func() bool { return tg.Keyboard(ann.ID, list.MessageID) == nil })
	tg.PushMessage(faketelegram.Private(ann, "hello"))
	run.waitFinal(tg, ann.ID, "hi from fake-big")
}

func TestTelegramNewDuringARunAsksFirst(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "long answer", Hold: hold})
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "think hard"))
	model.WaitRequests(1)
	tg.PushMessage(faketelegram.Private(ann, "/new"))
	ask := waitMessage(t, tg, ann.ID, "Start a new conversation anyway?")
	kb := tg.Keyboard(ann.ID, ask.MessageID)
	if got := strings.Join(buttonTexts(kb), ","); got != "Start a new conversation,Keep this one" {
		t.Fatalf("buttons = %q", got)
	}
	before, _ := run.app.store.ChatThread("telegram:1001")
	pressAndWait(t, tg, ann, ann.ID, ask.MessageID, kb[0][0].CallbackData)
	waitMessage(t, tg, ann.ID, "Started a new conversation.")
	after, _ := run.app.store.ChatThread("telegram:1001")
	if before == after {
		t.Errorf("the thread stayed %q", before)
	}
	close(hold)
	run.waitFinal(tg, ann.ID, "long answer")
}

// researchModel plans one step, runs it and reports.
func researchModel(model *fakeopenai.Server) {
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch {
		case systemHas(r, plannerMark):
			return fakeopenai.Turn{Text: planJSON("Ferries", planStep{title: "Fleet size", kind: "processing"})}
		case systemHas(r, reporterMark):
			return fakeopenai.Turn{Text: "# Ferries\n\n## Key points\n\n- Many ferries."}
		}
		return fakeopenai.Turn{Text: "FINDING: many ferries."}
	})
}

func TestTelegramResearchPlanButtons(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	researchModel(model)
	run := startTelegram(t, tg, model, t.TempDir(), researchConfig)

	tg.PushMessage(faketelegram.Private(ann, "/research ferries"))
	plan := waitMessage(t, tg, ann.ID, "Reply ok to start")
	run.app.router.WaitIdle(t.Context())
	kb := tg.Keyboard(ann.ID, plan.MessageID)
	if got := strings.Join(buttonTexts(kb), ","); got != "▶ Start the research,✖ Cancel" {
		t.Fatalf("plan buttons = %q", got)
	}
	pressAndWait(t, tg, ann, ann.ID, plan.MessageID, kb[0][0].CallbackData)
	run.waitFinal(tg, ann.ID, "Key points")
	tg.WaitFor(func() bool {
		m := message(tg, ann.ID, plan.MessageID)
		return strings.Contains(m.PlainText, "1. Fleet size") && strings.Contains(m.PlainText, "✅ ▶ Start the research — chosen by ann") &&
			tg.Keyboard(ann.ID, plan.MessageID) == nil
	})

	// A second plan, cancelled with its button.
	tg.PushMessage(faketelegram.Private(ann, "/research ferries again"))
	tg.WaitFor(func() bool { return showing(tg, ann.ID, "Reply ok to start") == 2 })
	run.app.router.WaitIdle(t.Context())
	var second *faketelegram.SentMessage
	for _, m := range tg.Messages(ann.ID) {
		if strings.Contains(m.PlainText, "Reply ok to start") && m.MessageID != plan.MessageID {
			second = m
		}
	}
	kb = tg.Keyboard(ann.ID, second.MessageID)
	pressAndWait(t, tg, ann, ann.ID, second.MessageID, kb[1][0].CallbackData)
	tg.WaitFor(func() bool {
		return strings.Contains(message(tg, ann.ID, second.MessageID).PlainText, "✅ ✖ Cancel — chosen by ann")
	})
	tg.WaitFor(func() bool { return researchOf(t, run, "telegram:1001").Phase == store.ResearchCancelled })
}

func TestTelegramClarificationTypedAnswerRetiresTheButtons(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "what's the weather?"))
	q := run.waitFinal(tg, ann.ID, "Which city do you mean?")
	kb := tg.Keyboard(ann.ID, q.MessageID)
	tg.PushMessage(faketelegram.Private(ann, "Tromsø"))
	run.waitFinal(tg, ann.ID, "You chose Tromsø")
	requests := len(model.Requests())
	if notice := pressAndWait(t, tg, ann, ann.ID, q.MessageID, kb[0][0].CallbackData); notice != "This question was already answered in the conversation." {
		t.Errorf("a press after the typed answer was answered with %q", notice)
	}
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != requests {
		t.Errorf("the model ran %d more times", n-requests)
	}
}
