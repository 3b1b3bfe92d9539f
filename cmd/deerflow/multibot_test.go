package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// Two Telegram bots in one process: the same person writes to each, each
// answer comes back through its own bot, and the two conversations are
// separate threads.
func TestTwoTelegramBots(t *testing.T) {
	home, support := newTelegram(t), faketelegram.New(t, "654321:SUPPORT-token")
	model := fakeopenai.New(t)
	answerEach(model)
	run := startServe(t, model, t.TempDir(), func(c *config.Config) {
		c.Channels.Telegram = config.Telegram{Enabled: true, BotToken: home.Token, APIURL: home.URL,
			Bots: []config.Telegram{{Name: "support", Enabled: true, BotToken: support.Token, APIURL: support.URL}}}
	})

	home.PushMessage(faketelegram.Private(ann, "my name is Ann"))
	run.waitFinal(home, ann.ID, "answer to: my name is Ann")
	support.PushMessage(faketelegram.Private(ann, "my order is late"))
	run.waitFinal(support, ann.ID, "answer to: my order is late")
	home.PushMessage(faketelegram.Private(ann, "what did I say?"))
	run.waitFinal(home, ann.ID, "answer to: what did I say?")
	support.PushMessage(faketelegram.Private(ann, "any news?"))
	run.waitFinal(support, ann.ID, "answer to: any news?")

	// Each bot's server got only its own answers.
	if d := cmp.Diff([]string{"answer to: my name is Ann", "answer to: what did I say?"}, texts(home.Messages(ann.ID))); d != "" {
		t.Errorf("the first bot sent (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"answer to: my order is late", "answer to: any news?"}, texts(support.Messages(ann.ID))); d != "" {
		t.Errorf("the support bot sent (-want +got):\n%s", d)
	}
	// The model saw two threads: each later turn holds its own bot's
	// history and none of the other's.
	var users [][]string
	for _, r := range model.Requests() {
		var said []string
		for _, m := range r.Messages {
			if m.Role == "user" {
				said = append(said, m.Content)
			}
		}
		users = append(users, said)
	}
	want := [][]string{
		{"my name is Ann"},
		{"my order is late"},
		{"my name is Ann", "what did I say?"},
		{"my order is late", "any news?"},
	}
	if d := cmp.Diff(want, users); d != "" {
		t.Errorf("what the model was shown (-want +got):\n%s", d)
	}
}

// texts are the plain texts of sent messages, in order.
func texts(ms []*faketelegram.SentMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, strings.TrimSpace(m.PlainText))
	}
	return slices.Clip(out)
}
