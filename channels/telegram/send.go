package telegram

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/channels/telegram/tgmd"
)

// maxText is Telegram's limit for one message, in UTF-16 units.
const maxText = 4096

// errForbidden: the bot was blocked or removed from the chat.
var errForbidden = errors.New("telegram: the bot can't write to this chat (blocked or removed)")

// Send implements bus.Sender.
func (c *Channel) Send(ctx context.Context, out *bus.Outbound) (ids []string, err error) {
	if kind := channels.SendKind(out); kind != "" {
		defer func() { c.met.Sent(kind, err) }()
	}
	chat, err := strconv.ParseInt(out.ChatID, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("telegram: bad chat id %q", out.ChatID)
	}
	if c.isForbidden(chat) {
		return nil, errForbidden
	}
	started := time.Now()
	switch out.Kind {
	case bus.OutMessage, bus.OutEdit:
		if out.Final {
			ids, err = c.sendFinal(ctx, chat, out)
		} else {
			ids, err = c.sendProgress(ctx, chat, out)
		}
	case bus.OutFile:
		ids, err = c.sendFile(ctx, chat, out)
	default:
		return nil, nil // deltas and activity lines arrive as edits instead
	}
	if errors.Is(err, tgbot.ErrorForbidden) {
		c.markForbidden(chat, started)
		return nil, errForbidden
	}
	var tm *tgbot.TooManyRequestsError
	if errors.As(err, &tm) {
		c.lim.pause(chat, retryAfter(tm)) // whatever gave up on it, the chat waits
	}
	return ids, err
}

// sendProgress shows a reply in progress: plain text, cut to one message.
// A rate-limited edit is dropped (a later one, or the final, replaces it).
func (c *Channel) sendProgress(ctx context.Context, chat int64, out *bus.Outbound) ([]string, error) {
	text := cutText(out.Text, maxText)
	if out.Kind == bus.OutEdit {
		err := c.edit(ctx, chat, out.EditID, text, false, nil)
		var tm *tgbot.TooManyRequestsError
		if errors.As(err, &tm) {
			c.lim.pause(chat, retryAfter(tm))
			return nil, nil
		}
		return nil, err
	}
	id, err := c.sendText(ctx, chat, out, text, false, out.ReplyTo, nil)
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

// sendFinal delivers a finished answer: Markdown rendered to Telegram
// HTML, split into messages of at most 4096 units; the first replaces the
// progress message when there is one. A chunk Telegram cannot parse goes
// as plain text.
func (c *Channel) sendFinal(ctx context.Context, chat int64, out *bus.Outbound) ([]string, error) {
	chunks := tgmd.SplitHTML(tgmd.RenderHTML(out.Text), maxText)
	if len(chunks) == 0 {
		return nil, nil // nothing visible to say; Telegram refuses empty text
	}
	var ids []string
	for i, chunk := range chunks {
		var kb models.ReplyMarkup
		if i == len(chunks)-1 {
			kb = keyboard(out.Buttons) // under the message's end
		}
		var id string
		err := c.retry(ctx, chat, func() error {
			var err error
			id, err = c.finalChunkMarkup(ctx, chat, out, i, chunk, true, kb)
			if isParseError(err) {
				c.log.WarnContext(ctx, "Telegram could not parse the rendered HTML; sending plain text", "err", err)
				id, err = c.finalChunkMarkup(ctx, chat, out, i, tgmd.PlainText(chunk), false, kb)
			}
			return err
		})
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (c *Channel) finalChunk(ctx context.Context, chat int64, out *bus.Outbound, i int, text string, isHTML bool, kb models.ReplyMarkup) (string, error) {
	if i == 0 && out.Kind == bus.OutEdit {
		err := c.edit(ctx, chat, out.EditID, text, isHTML, kb)
		if err == nil || !strings.Contains(errText(err), "message to edit not found") {
			return out.EditID, err
		}
	}
	replyTo := ""
	if i == 0 {
		replyTo = out.ReplyTo
	}
	return c.sendText(ctx, chat, out, text, isHTML, replyTo, kb)
}

// wait spaces calls to chat (see limiter), counting the waits.
func (c *Channel) wait(ctx context.Context, chat int64) error {
	d, err := c.lim.wait(ctx, chat)
	c.met.RateLimitWait(d)
	return err
}

// retry runs f, waiting out 429s and retrying Telegram's server errors
// (up to three times in all).
func (c *Channel) retry(ctx context.Context, chat int64, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		var tm *tgbot.TooManyRequestsError
		switch {
		case err == nil || attempt >= 3:
			return err
		case errors.As(err, &tm):
			wait := retryAfter(tm)
			c.log.WarnContext(ctx, "rate limited by Telegram", "chat", chat, "retry_after", wait)
			c.lim.pause(chat, wait)
		case transient(err):
			wait := channels.Backoff(attempt)
			c.log.WarnContext(ctx, "Telegram failed; retrying", "chat", chat, "err", err, "in", wait)
			if err := channels.Sleep(ctx, wait, nil); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// retryAfter is how long a 429 asks to wait, within reason.
func retryAfter(tm *tgbot.TooManyRequestsError) time.Duration {
	return time.Duration(min(max(tm.RetryAfter, 1), 60)) * time.Second
}

func (c *Channel) sendText(ctx context.Context, chat int64, out *bus.Outbound, text string, isHTML bool, replyTo string, kb models.ReplyMarkup) (string, error) {
	if err := c.wait(ctx, chat); err != nil {
		return "", err
	}
	p := &tgbot.SendMessageParams{
		ChatID:             chat,
		MessageThreadID:    topicThread(out.Topic),
		Text:               text,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tgbot.True()},
		ReplyMarkup:        kb,
	}
	if isHTML {
		p.ParseMode = models.ParseModeHTML
	}
	// In groups the answer replies to the question, so the thread of the
	// conversation is visible and replying to it continues it. A
	// subagent's progress reply always does, to show what it works for.
	if n, err := strconv.Atoi(replyTo); err == nil && (chat < 0 || out.Task != "") {
		p.ReplyParameters = &models.ReplyParameters{MessageID: n, AllowSendingWithoutReply: true}
	}
	m, err := c.bot.SendMessage(ctx, p)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(m.ID), nil
}

func (c *Channel) edit(ctx context.Context, chat int64, id, text string, isHTML bool, kb models.ReplyMarkup) error {
	n, err := strconv.Atoi(id)
	if err != nil {
		return fmt.Errorf("telegram: bad message id %q", id)
	}
	if err := c.wait(ctx, chat); err != nil {
		return err
	}
	p := &tgbot.EditMessageTextParams{ChatID: chat, MessageID: n, Text: text,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: tgbot.True()}, ReplyMarkup: kb}
	if isHTML {
		p.ParseMode = models.ParseModeHTML
	}
	_, err = c.bot.EditMessageText(ctx, p)
	if err != nil && strings.Contains(errText(err), "message is not modified") {
		return nil // the message already says this
	}
	return err
}

// sendFile uploads a presented file: pictures as photos, the rest as
// documents, into the conversation's chat and topic.
func (c *Channel) sendFile(ctx context.Context, chat int64, out *bus.Outbound) ([]string, error) {
	f := out.File
	if f == nil || f.Open == nil {
		return nil, errors.New("telegram: no file to send")
	}
	var id string
	err := c.retry(ctx, chat, func() error {
		r, err := f.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		if err := c.wait(ctx, chat); err != nil {
			return err
		}
		upload := &models.InputFileUpload{Filename: f.Name, Data: r}
		var m *models.Message
		if isPhoto(f.Name) && f.Size <= 10<<20 {
			m, err = c.bot.SendPhoto(ctx, &tgbot.SendPhotoParams{ChatID: chat, MessageThreadID: topicThread(out.Topic), Photo: upload})
		} else {
			m, err = c.bot.SendDocument(ctx, &tgbot.SendDocumentParams{ChatID: chat, MessageThreadID: topicThread(out.Topic), Document: upload})
		}
		if err == nil {
			id = strconv.Itoa(m.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

func isPhoto(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".webp":
		return true
	}
	return false
}

func isParseError(err error) bool {
	return err != nil && strings.Contains(errText(err), "can't parse entities")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (c *Channel) isForbidden(chat int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.forbidden[chat]
}

// markForbidden remembers (and logs once) that a chat refuses the bot.
// A refusal of a request that started before the chat last wrote to the
// bot is stale: they have unblocked it since.
func (c *Channel) markForbidden(chat int64, started time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if started.Before(c.heard[chat]) {
		return
	}
	if !c.forbidden[chat] {
		c.log.Warn("the bot was blocked or removed; not sending to this chat until it writes again", "chat", chat)
	}
	c.forbidden[chat] = true
}

// heardFrom notes that a chat wrote to the bot, which it cannot do while
// the bot is blocked there.
func (c *Channel) heardFrom(chat int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.forbidden, chat)
	c.heard[chat] = time.Now()
}

// cutText shortens s to at most n UTF-16 units, on a rune boundary.
func cutText(s string, n int) string {
	units, cut := 0, -1
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if cut < 0 && units+w > n-1 {
			cut = i // where the text ends if "…" must follow
		}
		if units += w; units > n {
			return s[:cut] + "…"
		}
	}
	return s
}
