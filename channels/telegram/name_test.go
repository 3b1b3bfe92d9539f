package telegram

import (
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
)

// Two bots in one process: each names its own messages, so their chats
// and their update ids (which both count from 1) never meet.
func TestInstancesNameTheirInbound(t *testing.T) {
	u := &models.Update{ID: 7, Message: &models.Message{ID: 3, Text: "hi",
		Chat: models.Chat{ID: 1001, Type: models.ChatTypePrivate}, From: &models.User{ID: 1001, Username: "ann"}}}
	type seen struct{ Sender, Channel, EventKey string }
	var got []seen
	for _, name := range []string{"", "telegram-support"} {
		c := pollingChannelNamed(t, name)
		in := c.inbound(u)
		if in == nil {
			t.Fatal("the message was dropped")
		}
		got = append(got, seen{c.Name(), in.Channel, in.EventKey})
	}
	want := []seen{{"telegram", "telegram", "telegram:update:7"}, {"telegram-support", "telegram-support", "telegram-support:update:7"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func pollingChannelNamed(t *testing.T, name string) *Channel {
	t.Helper()
	c, err := New(Options{Name: name, Token: "456:t", APIURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	c.me = &models.User{ID: 43, IsBot: true, Username: "SupportBot"}
	return c
}
