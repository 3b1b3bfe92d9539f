package faketelegram_test

// These tests drive the fake with the real go-telegram/bot client.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

const token = "123456:TEST-token"

var (
	ann   = faketelegram.User{ID: 999, FirstName: "Ann", Username: "ann"}
	forum = faketelegram.Chat{ID: -1001234567890, Type: "supergroup", Title: "G", IsForum: true}
	group = faketelegram.Chat{ID: -1009876543210, Type: "supergroup", Title: "Plain"}
)

// newBot returns a client of s; received updates go to the channel.
func newBot(t *testing.T, s *faketelegram.Server, opts ...bot.Option) (*bot.Bot, chan *models.Update) {
	t.Helper()
	got := make(chan *models.Update, 100)
	opts = append([]bot.Option{
		bot.WithServerURL(s.URL),
		bot.WithHTTPClient(3*time.Second, &http.Client{Timeout: 10 * time.Second}),
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) { got <- u }),
		bot.WithNotAsyncHandlers(),
		bot.WithErrorsHandler(func(error) {}),
	}, opts...)
	b, err := bot.New(s.Token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b, got
}

// start polls until the test ends.
func start(t *testing.T, b *bot.Bot) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func receive(t *testing.T, got chan *models.Update) *models.Update {
	t.Helper()
	select {
	case u := <-got:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update received")
		return nil
	}
}

func wantErr(t *testing.T, err error, target error, desc string) {
	t.Helper()
	if !errors.Is(err, target) || !strings.Contains(err.Error(), desc) {
		t.Fatalf("error = %v, want %v containing %q", err, target, desc)
	}
}

func TestGetMe(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	me, err := b.GetMe(context.Background())
	if err != nil || me.ID != 777000111 || !me.IsBot || me.Username != "deerflow_test_bot" || me.FirstName != "DeerFlow" || !me.CanJoinGroups {
		t.Fatalf("getMe = %+v, %v", me, err)
	}
	if c := s.Calls(); len(c) != 2 || c[0].Method != "getMe" || c[0].Status != 200 {
		t.Fatalf("calls = %+v", c)
	}
	_, err = bot.New("1:wrong", bot.WithServerURL(s.URL))
	wantErr(t, err, bot.ErrorUnauthorized, "Unauthorized")
}

func TestPollingDeliversAndConfirms(t *testing.T) {
	s := faketelegram.New(t, token)
	u1 := s.PushMessage(faketelegram.Private(ann, "/start"))
	b, got := newBot(t, s)
	start(t, b)

	u := receive(t, got)
	if u.ID != int64(u1.UpdateID) || u1.UpdateID != 1000 || u.Message.Text != "/start" || u.Message.Chat.Type != "private" ||
		u.Message.From.Username != "ann" || len(u.Message.Entities) != 1 || u.Message.Entities[0].Type != "bot_command" || u.Message.Entities[0].Length != 6 {
		t.Fatalf("update = %+v", u.Message)
	}
	// The next poll confirms u1; push u2 while it is held.
	s.WaitFor(func() bool { return slices.Contains(s.Offsets(), u1.UpdateID+1) })
	if p := s.Pending(); len(p) != 0 {
		t.Fatalf("pending after confirmation: %+v", p)
	}
	u2 := s.PushMessage(faketelegram.Private(ann, "second"))
	if u := receive(t, got); u.ID != int64(u2.UpdateID) || u.Message.ID != u1.Message.MessageID+1 {
		t.Fatalf("second update = %d/%d, want %d", u.ID, u.Message.ID, u2.UpdateID)
	}
	s.WaitFor(func() bool { return slices.Contains(s.Offsets(), u2.UpdateID+1) })
	if o := s.Offsets(); o[0] != 1 {
		t.Fatalf("offsets = %v, want the first to be 1", o)
	}
}

func TestRestartSkipsProcessedUpdates(t *testing.T) {
	s := faketelegram.New(t, token)
	_ = s.PushMessage(faketelegram.Private(ann, "one"))
	u2 := s.PushMessage(faketelegram.Private(ann, "two"))
	u3 := s.PushMessage(faketelegram.Private(ann, "three"))
	b, got := newBot(t, s, bot.WithInitialOffset(int64(u2.UpdateID)))
	start(t, b)
	if u := receive(t, got); u.ID != int64(u3.UpdateID) || u.Message.Text != "three" {
		t.Fatalf("got %d %q, want update %d", u.ID, u.Message.Text, u3.UpdateID)
	}
	if o := s.Offsets(); o[0] != u3.UpdateID {
		t.Fatalf("offsets = %v", o)
	}
}

func TestConcurrentPollersConflict(t *testing.T) {
	s := faketelegram.New(t, token)
	b1, _ := newBot(t, s)
	b2, _ := newBot(t, s)
	start(t, b1)
	start(t, b2)
	s.WaitFor(func() bool {
		for _, c := range s.CallsOf("getUpdates") {
			if c.Status == 409 && strings.Contains(c.Error, "terminated by other getUpdates request") {
				return true
			}
		}
		return false
	})
}

func TestSendAndEdit(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	in := s.PushMessage(faketelegram.Private(ann, "hi"))

	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 12345, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "Bad Request: chat not found")

	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "<b>Hello</b> &amp; welcome ", ParseMode: models.ParseModeHTML})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != in.Message.MessageID+1 || m.From.ID != s.Bot.ID || m.Chat.ID != ann.ID || m.Text != "Hello & welcome" ||
		len(m.Entities) != 1 || m.Entities[0].Type != "bold" || m.Entities[0].Length != 5 || m.Date == 0 {
		t.Fatalf("sent = %+v", m)
	}
	for _, bad := range []struct{ text, desc string }{
		{"<b>x</i>", `can't parse entities: Unmatched end tag at byte offset 4, expected "</b>", found "</i>"`},
		{"a < b", `can't parse entities: Unsupported start tag "" at byte offset 2`},
		{"<div>x</div>", `Unsupported start tag "div" at byte offset 0`},
		{"<b>x", `Can't find end tag corresponding to start tag "b"`},
		{"<b></b> ", "message text is empty"},
		{strings.Repeat("😀", 2049), "message is too long"}, // 4098 UTF-16 code units
	} {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: bad.text, ParseMode: models.ParseModeHTML})
		wantErr(t, err, bot.ErrorBadRequest, bad.desc)
	}
	long := "<i>" + strings.Repeat("😀", 2048) + "</i>" // 4096 units once parsed
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: long, ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}

	e, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: m.ID, Text: "<b>Hello</b> world", ParseMode: models.ParseModeHTML})
	if err != nil || e.Text != "Hello world" || e.EditDate == 0 || e.ID != m.ID {
		t.Fatalf("edit = %+v, %v", e, err)
	}
	for _, same := range []string{"<b>Hello</b> world", "<strong>Hello</strong> world"} {
		_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: m.ID, Text: same, ParseMode: models.ParseModeHTML})
		wantErr(t, err, bot.ErrorBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same")
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: 9999, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "message to edit not found")
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: in.Message.MessageID, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "message can't be edited")

	got := s.Messages(ann.ID)
	if len(got) != 2 || got[0].Text != "<b>Hello</b> world" || got[0].PlainText != "Hello world" || got[0].Edits != 1 ||
		got[0].ParseMode != "HTML" || got[0].MessageID != m.ID {
		t.Fatalf("messages = %+v", got[0])
	}
	if ok, err := b.DeleteMessage(ctx, &bot.DeleteMessageParams{ChatID: ann.ID, MessageID: m.ID}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got := s.Messages(ann.ID); len(got) != 1 {
		t.Fatalf("after delete: %d messages", len(got))
	}
}

func TestFailures(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	s.PushMessage(faketelegram.Private(ann, "hi"))
	s.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 7})
	s.FailNext("sendMessage", faketelegram.Failure{Code: 403})

	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "x"})
	var tooMany *bot.TooManyRequestsError
	if !errors.As(err, &tooMany) || tooMany.RetryAfter != 7 || !strings.Contains(err.Error(), "Too Many Requests: retry after 7") {
		t.Fatalf("err = %v", err)
	}
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "x"})
	wantErr(t, err, bot.ErrorForbidden, "Forbidden: bot was blocked by the user")
	if _, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	calls := s.WaitCalls("sendMessage", 3)
	if calls[0].Status != 429 || calls[1].Status != 403 || calls[2].Status != 200 || len(s.Messages(ann.ID)) != 1 {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[2].Params["chat_id"] != "999" || calls[2].Params["text"] != "x" {
		t.Fatalf("params = %v", calls[2].Params)
	}
	// Each call carries when it was answered, in order, so a test can
	// check that a bot waited out retry_after.
	for i, c := range calls {
		if c.Time.IsZero() || (i > 0 && c.Time.Before(calls[i-1].Time)) {
			t.Errorf("call %d answered at %v, after %v", i, c.Time, calls[max(i-1, 0)].Time)
		}
	}
}

func TestFailAlwaysAndClear(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	s.PushMessage(faketelegram.Private(ann, "hi"))
	s.FailNext("sendMessage", faketelegram.Failure{Code: 403})
	s.FailAlways("sendMessage", faketelegram.Failure{Code: 502, Body: "<html>502 Bad Gateway</html>"})
	send := func() error {
		_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "x"})
		return err
	}
	wantErr(t, send(), bot.ErrorForbidden, "Forbidden") // queued failures come first
	for range 3 {
		if err := send(); err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
			t.Fatalf("err = %v, want the 502 page", err)
		}
	}
	s.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	if n := s.ClearFailures("sendMessage"); n != 1 {
		t.Errorf("ClearFailures left %d unused, want 1", n)
	}
	if err := send(); err != nil {
		t.Fatalf("after ClearFailures: %v", err)
	}
	if got := len(s.Messages(ann.ID)); got != 1 {
		t.Errorf("%d messages sent, want only the last", got)
	}
}

func TestTopicsAndReplies(t *testing.T) {
	s := faketelegram.New(t, token)
	b, _ := newBot(t, s)
	ctx := context.Background()
	in := s.PushMessage(faketelegram.InTopic(faketelegram.Group(forum, ann, "@deerflow_test_bot hello"), 42)).Message
	if e := in.Entities; len(e) != 1 || e[0].Type != "mention" || e[0].Offset != 0 || e[0].Length != 18 ||
		!in.IsTopicMessage || in.MessageThreadID != 42 || !in.Chat.IsForum || in.ReplyToMessage.ForumTopicCreated == nil {
		t.Fatalf("inbound = %+v", in)
	}

	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, MessageThreadID: 42, Text: "in topic"})
	if err != nil || m.MessageThreadID != 42 || !m.IsTopicMessage {
		t.Fatalf("topic send = %+v, %v", m, err)
	}
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, MessageThreadID: 43, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "Bad Request: message thread not found")
	s.AddTopic(forum.ID, 43)
	if _, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, MessageThreadID: 43, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err = b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: forum.ID, MessageThreadID: 44, Action: models.ChatActionTyping})
	wantErr(t, err, bot.ErrorBadRequest, "message thread not found")

	// A reply without message_thread_id lands in the topic of the message replied to.
	r, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, Text: "reply",
		ReplyParameters: &models.ReplyParameters{MessageID: in.MessageID}})
	if err != nil || r.ReplyToMessage == nil || r.ReplyToMessage.ID != in.MessageID || r.MessageThreadID != 42 {
		t.Fatalf("reply = %+v, %v", r, err)
	}
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, Text: "x", ReplyParameters: &models.ReplyParameters{MessageID: 9999}})
	wantErr(t, err, bot.ErrorBadRequest, "Bad Request: message to be replied not found")
	r, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: forum.ID, Text: "x",
		ReplyParameters: &models.ReplyParameters{MessageID: 9999, AllowSendingWithoutReply: true}})
	if err != nil || r.ReplyToMessage != nil {
		t.Fatalf("reply without message = %+v, %v", r, err)
	}
	sent := s.Messages(forum.ID)
	if len(sent) != 4 || sent[0].ThreadID != 42 || sent[2].ReplyTo != in.MessageID || sent[3].ReplyTo != 0 {
		t.Fatalf("messages = %+v", sent)
	}

	// A plain supergroup has reply threads but no topics.
	g := s.PushMessage(faketelegram.Group(group, ann, "/ask@deerflow_test_bot why?")).Message
	if e := g.Entities; len(e) != 1 || e[0].Type != "bot_command" || e[0].Length != 22 {
		t.Fatalf("entities = %+v", e)
	}
	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: group.ID, MessageThreadID: g.MessageID, Text: "x"})
	wantErr(t, err, bot.ErrorBadRequest, "message thread not found")
	reply := faketelegram.ReplyTo(faketelegram.Group(forum, ann, "more"), s.Messages(forum.ID)[0].Message)
	if reply.ReplyToMessage.From.ID != s.Bot.ID || reply.MessageThreadID != 42 || !reply.IsTopicMessage {
		t.Fatalf("ReplyTo = %+v", reply)
	}
	if in := faketelegram.ReplyTo(faketelegram.Group(group, ann, "x"), *g); in.MessageThreadID != g.MessageID || in.IsTopicMessage {
		t.Fatalf("reply chain = %+v", in)
	}
}
