package lark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
)

// maxCardMarkdown keeps one card well under Lark's 30 KB card limit even
// when JSON escaping doubles the text.
const maxCardMarkdown = 14000

// apiError is a Lark reply with a non-zero code.
type apiError struct {
	Code   int
	Msg    string
	Status int           // the HTTP status
	Reset  time.Duration // rate limited (see limited): when to try again
}

func (e *apiError) Error() string { return fmt.Sprintf("lark: %d %s", e.Code, e.Msg) }

const codeRateLimited = 99991400

// check turns a Lark reply's code into an error.
func check(resp *larkcore.ApiResp, code int, msg string) error {
	if code == 0 {
		return nil
	}
	e := &apiError{Code: code, Msg: msg}
	if resp != nil {
		e.Status = resp.StatusCode
	}
	if e.limited() {
		e.Reset = time.Second
		if resp != nil {
			if n, _ := strconv.Atoi(resp.Header.Get("x-ogw-ratelimit-reset")); n > 0 {
				e.Reset = time.Duration(min(n, 60)) * time.Second
			}
		}
	}
	return e
}

// Send implements bus.Sender.
func (c *Channel) Send(ctx context.Context, out *bus.Outbound) (ids []string, err error) {
	if kind := channels.SendKind(out); kind != "" {
		defer func() { c.met.Sent(kind, err) }()
	}
	// A rate limit holds every send to the chat, whichever send met it.
	d, werr := c.pause.Wait(ctx, out.ChatID)
	c.met.RateLimitWait(d)
	if werr != nil {
		return nil, werr
	}
	defer func() {
		if ae, ok := rateLimited(err); ok {
			c.pause.Hold(out.ChatID, ae.Reset)
		}
	}()
	switch out.Kind {
	case bus.OutMessage, bus.OutEdit:
		if out.Final {
			return c.final(ctx, out)
		}
		if out.Kind == bus.OutEdit {
			err := c.patch(ctx, out.EditID, out.Text)
			if ae, ok := rateLimited(err); ok {
				c.pause.Hold(out.ChatID, ae.Reset)
				return nil, nil // the next patch, or the final, replaces it
			}
			return nil, err
		}
		id, err := c.send(ctx, out, "interactive", card(out.Text))
		if err != nil {
			return nil, err
		}
		return []string{id}, nil
	case bus.OutFile:
		return c.sendFile(ctx, out)
	}
	return nil, nil
}

// final delivers the whole answer: the first card replaces the streamed
// one, the rest (past the card size limit) follow as replies.
func (c *Channel) final(ctx context.Context, out *bus.Outbound) ([]string, error) {
	parts := channels.SplitMarkdown(out.Text, maxCardMarkdown)
	if len(parts) == 0 {
		return nil, nil
	}
	var ids []string
	for i, part := range parts {
		var buttons [][]bus.Button
		if i == len(parts)-1 {
			buttons = out.Buttons // under the message's end
		}
		var id string
		err := c.retry(ctx, out.ChatID, func() error {
			if i == 0 && out.Kind == bus.OutEdit {
				id = out.EditID
				return c.patchCard(ctx, out.EditID, cardWith(part, buttons))
			}
			var err error
			id, err = c.send(ctx, out, "interactive", cardWith(part, buttons))
			return err
		})
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// retry runs f, waiting out Lark's rate limits and retrying its server
// errors (up to three times in all).
func (c *Channel) retry(ctx context.Context, chat string, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || attempt >= 3 {
			return err
		}
		var wait time.Duration
		if ae, ok := rateLimited(err); ok {
			wait = ae.Reset
			c.log.WarnContext(ctx, "rate limited by Lark", "chat", chat, "code", ae.Code, "reset", wait)
			c.pause.Hold(chat, wait) // other sends to the chat wait too
			c.met.RateLimitWait(wait)
		} else if transient(err) {
			wait = channels.Backoff(attempt)
			c.log.WarnContext(ctx, "Lark failed; retrying", "chat", chat, "err", err, "in", wait)
		} else {
			return err
		}
		if err := channels.Sleep(ctx, wait, nil); err != nil {
			return err
		}
	}
}

// send posts a message into the conversation: as a reply to the message
// it answers when there is one (which keeps topics together), else into
// the chat.
func (c *Channel) send(ctx context.Context, out *bus.Outbound, msgType, content string) (string, error) {
	if err := c.wait(ctx, out.ChatID); err != nil {
		return "", err
	}
	if out.ReplyTo != "" {
		body := larkim.NewReplyMessageReqBodyBuilder().MsgType(msgType).Content(content)
		if strings.HasPrefix(out.Topic, "t") {
			body.ReplyInThread(true)
		}
		resp, err := c.cli.Im.V1.Message.Reply(ctx, larkim.NewReplyMessageReqBuilder().MessageId(out.ReplyTo).Body(body.Build()).Build())
		if err != nil {
			return "", err
		}
		if err := check(resp.ApiResp, resp.Code, resp.Msg); err != nil {
			return "", err
		}
		return str(resp.Data.MessageId), nil
	}
	resp, err := c.cli.Im.V1.Message.Create(ctx, larkim.NewCreateMessageReqBuilder().
		ReceiveIdType(larkim.CreateMessageV1ReceiveIDTypeChatId).
		Body(larkim.NewCreateMessageReqBodyBuilder().ReceiveId(out.ChatID).MsgType(msgType).Content(content).Build()).Build())
	if err != nil {
		return "", err
	}
	if err := check(resp.ApiResp, resp.Code, resp.Msg); err != nil {
		return "", err
	}
	return str(resp.Data.MessageId), nil
}

// patch replaces a card's markdown.
func (c *Channel) patch(ctx context.Context, messageID, md string) error {
	return c.patchCard(ctx, messageID, card(md))
}

// patchCard replaces a card.
func (c *Channel) patchCard(ctx context.Context, messageID, content string) error {
	if err := c.wait(ctx, ""); err != nil {
		return err
	}
	d, err := channels.Wait(ctx, c.limiter(messageID))
	c.met.RateLimitWait(d)
	if err != nil {
		return err
	}
	resp, err := c.cli.Im.V1.Message.Patch(ctx, larkim.NewPatchMessageReqBuilder().MessageId(messageID).
		Body(larkim.NewPatchMessageReqBodyBuilder().Content(content).Build()).Build())
	if err != nil {
		return err
	}
	return check(resp.ApiResp, resp.Code, resp.Msg)
}

// sendFile uploads a presented file (pictures as images) and sends it.
func (c *Channel) sendFile(ctx context.Context, out *bus.Outbound) ([]string, error) {
	f := out.File
	if f == nil || f.Open == nil {
		return nil, errors.New("lark: no file to send")
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var msgType, content string
	switch strings.ToLower(path.Ext(f.Name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		resp, err := c.cli.Im.V1.Image.Create(ctx, larkim.NewCreateImageReqBuilder().
			Body(larkim.NewCreateImageReqBodyBuilder().ImageType("message").Image(r).Build()).Build())
		if err == nil {
			err = check(resp.ApiResp, resp.Code, resp.Msg)
		}
		if err != nil {
			return nil, err
		}
		msgType, content = "image", jsonString(map[string]string{"image_key": str(resp.Data.ImageKey)})
	default:
		resp, err := c.cli.Im.V1.File.Create(ctx, larkim.NewCreateFileReqBuilder().
			Body(larkim.NewCreateFileReqBodyBuilder().FileType("stream").FileName(f.Name).File(r).Build()).Build())
		if err == nil {
			err = check(resp.ApiResp, resp.Code, resp.Msg)
		}
		if err != nil {
			return nil, err
		}
		msgType, content = "file", jsonString(map[string]string{"file_key": str(resp.Data.FileKey)})
	}
	id, err := c.send(ctx, out, msgType, content)
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

// react adds an emoji reaction to a message.
func (c *Channel) react(ctx context.Context, messageID, emoji string) {
	ctx, cancel := context.WithTimeout(ctx, reactTimeout)
	defer cancel()
	resp, err := c.cli.Im.V1.MessageReaction.Create(ctx, larkim.NewCreateMessageReactionReqBuilder().
		MessageId(messageID).
		Body(larkim.NewCreateMessageReactionReqBodyBuilder().
			ReactionType(larkim.NewEmojiBuilder().EmojiType(emoji).Build()).Build()).Build())
	if err == nil {
		err = check(resp.ApiResp, resp.Code, resp.Msg)
	}
	if err != nil {
		c.log.Debug("reaction", "err", err)
	}
}

// card is an interactive card (JSON 2.0) holding md, updatable in place.
// Control characters (but tab and line breaks) and invalid UTF-8 are left
// out: JSON spells each byte of them in six, which could take a card of
// maxCardMarkdown bytes past Lark's 30 KB limit.
func card(md string) string { return cardWith(md, nil) }

// cardWith is card with buttons under the markdown.
func cardWith(md string, buttons [][]bus.Button) string {
	md = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return -1
		}
		return r
	}, md)
	if strings.TrimSpace(md) == "" {
		md = " "
	}
	return jsonString(map[string]any{
		"schema": "2.0",
		"config": map[string]any{"update_multi": true},
		"body":   map[string]any{"elements": append([]any{map[string]any{"tag": "markdown", "content": md}}, cardButtons(buttons)...)},
	})
}

// jsonString encodes v without escaping <, > and & (which would triple
// their size in cards).
func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}
