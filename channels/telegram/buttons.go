package telegram

import (
	"context"
	"strconv"
	"strings"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
)

// ShowsButtons implements bus.ButtonSender.
func (c *Channel) ShowsButtons() bool { return true }

// maxCallbackData is Telegram's limit for a button's callback_data, in
// bytes. Our ids are far shorter; a longer one is not sent as a button.
const maxCallbackData = 64

// keyboard is buttons as an inline keyboard, or nil (no markup) when
// there are none.
func keyboard(rows [][]bus.Button) models.ReplyMarkup {
	var kb [][]models.InlineKeyboardButton
	for _, row := range rows {
		var r []models.InlineKeyboardButton
		for _, b := range row {
			if b.Text == "" || len(b.ID) > maxCallbackData {
				continue
			}
			r = append(r, models.InlineKeyboardButton{Text: b.Text, CallbackData: b.ID})
		}
		if len(r) > 0 {
			kb = append(kb, r)
		}
	}
	if len(kb) == 0 {
		return nil
	}
	return &models.InlineKeyboardMarkup{InlineKeyboard: kb}
}

// finalChunkMarkup sends one chunk of a final message with its keyboard;
// when Telegram refuses the keyboard, the chunk goes without it (its text
// lists the choices to type).
func (c *Channel) finalChunkMarkup(ctx context.Context, chat int64, out *bus.Outbound, i int, text string, isHTML bool, kb models.ReplyMarkup) (string, error) {
	id, err := c.finalChunk(ctx, chat, out, i, text, isHTML, kb)
	if kb != nil && isMarkupError(err) {
		c.log.WarnContext(ctx, "Telegram refused the buttons; sending without them", "err", err)
		return c.finalChunk(ctx, chat, out, i, text, isHTML, nil)
	}
	return id, err
}

func isMarkupError(err error) bool {
	t := strings.ToLower(errText(err))
	return err != nil && (strings.Contains(t, "button") || strings.Contains(t, "reply markup") || strings.Contains(t, "inline keyboard"))
}

// press handles a callback_query: a button pressed by someone the
// allow-list admits is handed to the router; every press is answered
// (answerCallbackQuery), with the router's notice if it has one. An error
// means the router could not take it (the update comes again).
func (c *Channel) press(ctx context.Context, b bus.Publisher, u *models.Update) error {
	q := u.CallbackQuery
	notice := ""
	if p, ok := b.(bus.Presser); ok && q.From.ID != 0 && !q.From.IsBot && c.allowed(&q.From) {
		if in := c.pressInbound(u); in != nil {
			var err error
			if notice, err = p.Press(ctx, in); err != nil {
				return err
			}
		}
	} else {
		// Nothing is done for people outside the allow-list; the press is
		// still answered, or their client spins.
		c.log.Info("ignored a button press from a user not in allowed_users", "user_id", q.From.ID)
	}
	_, err := c.bot.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: q.ID, Text: notice})
	if err != nil {
		// An old query (the press came again after a restart) cannot be
		// answered any more; what it did was done.
		c.log.WarnContext(ctx, "answering a button press", "err", err)
	}
	return nil
}

// pressInbound is the press as a bus message, or nil when it is not under
// a message we can see.
func (c *Channel) pressInbound(u *models.Update) *bus.Inbound {
	q := u.CallbackQuery
	var chat int64
	var msgID int
	switch m := q.Message; {
	case m.Message != nil:
		chat, msgID = m.Message.Chat.ID, m.Message.ID
	case m.InaccessibleMessage != nil:
		chat, msgID = m.InaccessibleMessage.Chat.ID, m.InaccessibleMessage.MessageID
	default:
		return nil
	}
	return &bus.Inbound{
		Channel:  c.o.Name,
		ChatID:   strconv.FormatInt(chat, 10),
		UserID:   strconv.FormatInt(q.From.ID, 10),
		UserName: q.From.Username,
		EventKey: c.o.Name + ":update:" + strconv.FormatInt(u.ID, 10),
		Group:    chat < 0,
		Press:    &bus.Press{ID: q.Data, MessageID: strconv.Itoa(msgID)},
	}
}
