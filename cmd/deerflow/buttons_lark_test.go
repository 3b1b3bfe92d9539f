package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// larkButtonTexts lists a card's button labels.
func larkButtonTexts(bs []fakelark.Button) string {
	var texts []string
	for _, b := range bs {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, ",")
}

// pressCard presses a card button as openID and waits for the callback's
// response; it returns the toast shown ("" for none).
func pressCard(t *testing.T, lk *fakelark.Server, msgID, openID string, b fakelark.Button) string {
	t.Helper()
	ev := lk.Press(msgID, openID, b.Value)
	var data json.RawMessage
	lk.WaitFor(func() bool {
		var ok bool
		data, ok = lk.CardResponse(ev)
		return ok
	})
	var resp struct {
		Toast struct {
			Content string `json:"content"`
		} `json:"toast"`
	}
	json.Unmarshal(data, &resp)
	return resp.Toast.Content
}

// larkMessage returns the bot's message id as it is now.
func larkMessage(lk *fakelark.Server, id string) *fakelark.Sent { return lk.Message(id) }

func TestLarkClarificationButtons(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	run := startLark(t, lk, model, t.TempDir(), func(c *config.Config) {
		c.Channels.Lark.AllowedUsers = []string{"ou_ann", "ou_bob"}
	})
	lk.Send(fakelark.MessageEvent{ChatID: "oc_group", ChatType: "group", SenderOpenID: "ou_ann", MessageType: "text",
		Content: fakelark.Text("@_user_1 what's the weather?"), Mentions: []fakelark.Mention{{Key: "@_user_1", OpenID: lk.BotOpenID, Name: "deerflow"}}})
	q := waitCard(t, lk, "oc_group", "Which city do you mean?")
	run.app.router.WaitIdle(t.Context())
	bs := lk.Buttons(q.MessageID)
	if got := larkButtonTexts(bs); got != "Oslo,Bergen" {
		t.Fatalf("buttons = %q, want Oslo,Bergen", got)
	}

	// Outside the allow-list: answered, nothing else.
	if toast := pressCard(t, lk, q.MessageID, "ou_eve", bs[0]); toast != "" {
		t.Errorf("eve's press answered with %q", toast)
	}
	// Bob may use the bot, but the question is Ann's.
	if toast := pressCard(t, lk, q.MessageID, "ou_bob", bs[0]); toast != "Only the person who asked can answer this." {
		t.Errorf("bob's press answered with %q", toast)
	}
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("the model ran %d times, want 1", n)
	}

	if toast := pressCard(t, lk, q.MessageID, "ou_ann", bs[1]); toast != "" {
		t.Errorf("ann's press answered with %q", toast)
	}
	waitCard(t, lk, "oc_group", "You chose Bergen; it is sunny there.")
	run.app.router.WaitIdle(t.Context())
	last := model.Requests()[len(model.Requests())-1]
	if got := last.Roles(); got != "system,user,assistant,tool,assistant,user" || last.Last().Content != "Bergen" {
		t.Errorf("the answer continued with %s, %q", got, last.Last().Content)
	}
	lk.WaitFor(func() bool {
		m := larkMessage(lk, q.MessageID)
		return strings.Contains(cardText(m.Content), "✅ Bergen — chosen by <at id=ou_ann></at>") && lk.Buttons(q.MessageID) == nil
	})

	// Pressed again (a client that had not caught up): refused.
	requests := len(model.Requests())
	if toast := pressCard(t, lk, q.MessageID, "ou_ann", bs[0]); toast != "Already answered: Bergen." {
		t.Errorf("second press answered with %q", toast)
	}
	run.app.router.WaitIdle(t.Context())
	if n := len(model.Requests()); n != requests {
		t.Errorf("the model ran %d more times", n-requests)
	}
}

func TestLarkButtonsAcrossARestartAndModels(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	clarifyThenAnswer(model)
	dir := t.TempDir()
	run := startLark(t, lk, model, dir)
	lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("what's the weather?")})
	q := waitCard(t, lk, "oc_p2p", "Which city do you mean?")
	run.app.router.WaitIdle(t.Context())
	bs := lk.Buttons(q.MessageID)
	run.stop()
	lk.DropConnection()

	// Pressed while deerflow is down: pushed once it is connected again.
	ev := lk.Press(q.MessageID, "ou_ann", bs[0].Value)
	run = startLark(t, lk, model, dir)
	waitCard(t, lk, "oc_p2p", "You chose Oslo")
	lk.WaitFor(func() bool {
		_, answered := lk.CardResponse(ev)
		return answered && strings.Contains(cardText(larkMessage(lk, q.MessageID).Content), "✅ Oslo")
	})

	lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("/models")})
	list := waitCard(t, lk, "oc_p2p", "Models:")
	mb := lk.Buttons(list.MessageID)
	if got := larkButtonTexts(mb); got != "✓ default,big" {
		t.Fatalf("model buttons = %q", got)
	}
	pressCard(t, lk, list.MessageID, "ou_ann", mb[1])
	waitCard(t, lk, "oc_p2p", "This conversation now uses big")
	run.app.router.WaitIdle(t.Context())
}
