package faketelegram_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

func TestInlineKeyboardPressAndAnswer(t *testing.T) {
	s := faketelegram.New(t, token)
	b, got := newBot(t, s, bot.WithAllowedUpdates(bot.AllowedUpdates{"message", "callback_query"}))
	ctx := context.Background()
	s.AddChat(faketelegram.Chat{ID: ann.ID, Type: "private", FirstName: "Ann"})
	kb := func(data string) models.ReplyMarkup {
		return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "Oslo", CallbackData: data}}}}
	}
	// Telegram refuses callback_data over 64 bytes.
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "q", ReplyMarkup: kb(strings.Repeat("x", 65))}); err == nil || !strings.Contains(err.Error(), "BUTTON_DATA_INVALID") {
		t.Fatalf("65-byte callback_data: err = %v", err)
	}
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: ann.ID, Text: "Which city?", ReplyMarkup: kb("c.1")})
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Keyboard(ann.ID, m.ID); len(k) != 1 || k[0][0].CallbackData != "c.1" {
		t.Fatalf("keyboard = %v", k)
	}
	start(t, b)
	s.Press(ann, ann.ID, m.ID, "c.1")
	u := receive(t, got)
	q := u.CallbackQuery
	if q == nil || q.Data != "c.1" || q.From.ID != ann.ID || q.Message.Message == nil || q.Message.Message.ID != m.ID {
		t.Fatalf("update = %+v", u)
	}
	if ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID, Text: "noted"}); err != nil || !ok {
		t.Fatalf("answerCallbackQuery: %v %v", ok, err)
	}
	if _, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: q.ID}); err == nil {
		t.Error("a query was answered twice")
	}
	if a := s.Answered(q.ID); len(a) != 1 || a[0] != "noted" {
		t.Errorf("answers = %q", a)
	}
	// editMessageText without reply_markup removes the keyboard.
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: ann.ID, MessageID: m.ID, Text: "Oslo, chosen by ann"}); err != nil {
		t.Fatal(err)
	}
	if k := s.Keyboard(ann.ID, m.ID); k != nil {
		t.Errorf("keyboard after the edit = %v", k)
	}
}
