package telegram

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
)

// handle turns one update into a bus message, or ignores it. It returns an
// error only when the message could not be stored (the update must then be
// delivered again).
func (c *Channel) handle(ctx context.Context, b bus.Publisher, u *models.Update) error {
	if u != nil && u.CallbackQuery != nil {
		return c.press(ctx, b, u)
	}
	in := c.inbound(u)
	if in == nil {
		return nil
	}
	if err := b.Publish(ctx, in); err != nil {
		return err
	}
	c.met.Inbound()
	return nil
}

// inbound turns one update into a bus message, or nil when it is not for
// the bot (not a person's message, not addressed to it, not allowed, empty).
func (c *Channel) inbound(u *models.Update) *bus.Inbound {
	if u == nil || u.Message == nil {
		return nil
	}
	m := u.Message
	if m.From == nil || m.From.IsBot {
		return nil
	}
	if !c.allowed(m.From) {
		// Nothing is stored or run for people outside the allow-list.
		c.log.Info("ignored a message from a user not in allowed_users", "user_id", m.From.ID)
		return nil
	}
	c.heardFrom(m.Chat.ID)
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	in := &bus.Inbound{
		Channel:   c.o.Name,
		ChatID:    strconv.FormatInt(m.Chat.ID, 10),
		UserID:    strconv.FormatInt(m.From.ID, 10),
		UserName:  m.From.Username,
		MessageID: strconv.Itoa(m.ID),
		EventKey:  c.o.Name + ":update:" + strconv.FormatInt(u.ID, 10),
	}
	if m.Chat.Type != models.ChatTypePrivate {
		in.Group = true
		addressed, cleaned := c.addressed(m, text, entities)
		if !addressed {
			return nil
		}
		text = cleaned
		// A forum topic is one conversation; elsewhere each fresh mention
		// starts one, and replies continue the one they answer.
		if m.IsTopicMessage && m.MessageThreadID != 0 {
			in.Topic = "t" + strconv.Itoa(m.MessageThreadID)
		} else {
			in.Topic = "m" + strconv.Itoa(m.ID)
		}
		if r := m.ReplyToMessage; r != nil && !(m.IsTopicMessage && r.ID == m.MessageThreadID) {
			in.ReplyTo = strconv.Itoa(r.ID)
		}
	} else {
		text = stripCommandTarget(text, entities, c.me.Username)
	}
	in.Text = text
	in.Files = c.attachments(m)
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
		return nil
	}
	return in
}

// addressed reports whether a group message is for the bot: it mentions
// the bot, replies to one of the bot's messages, or is a command (for the
// bot, or for no bot in particular). It returns the text without the
// mention or the @botname of a command.
func (c *Channel) addressed(m *models.Message, text string, entities []models.MessageEntity) (bool, string) {
	me := strings.ToLower(c.me.Username)
	yes := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == c.me.ID
	units := utf16.Encode([]rune(text))
	var cut [][2]int // UTF-16 ranges to remove
	for _, e := range entities {
		if e.Offset < 0 || e.Offset+e.Length > len(units) {
			continue
		}
		word := string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
		switch e.Type {
		case models.MessageEntityTypeMention:
			if strings.EqualFold(strings.TrimPrefix(word, "@"), me) {
				yes = true
				cut = append(cut, [2]int{e.Offset, e.Offset + e.Length})
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == c.me.ID {
				yes = true
			}
		case models.MessageEntityTypeBotCommand:
			if e.Offset != 0 {
				continue
			}
			_, target, hasTarget := strings.Cut(word, "@")
			if hasTarget && !strings.EqualFold(target, me) {
				return false, "" // a command for another bot
			}
			yes = true
			if hasTarget {
				at := strings.IndexByte(word, '@')
				cut = append(cut, [2]int{e.Offset + len(utf16.Encode([]rune(word[:at]))), e.Offset + e.Length})
			}
		}
	}
	if !yes {
		return false, ""
	}
	for i := len(cut) - 1; i >= 0; i-- {
		units = append(units[:cut[i][0]:cut[i][0]], units[cut[i][1]:]...)
	}
	return true, strings.Join(strings.Fields(string(utf16.Decode(units))), " ")
}

// stripCommandTarget turns "/help@thisbot" into "/help" in private chats.
func stripCommandTarget(text string, entities []models.MessageEntity, me string) string {
	for _, e := range entities {
		if e.Type == models.MessageEntityTypeBotCommand && e.Offset == 0 {
			word, rest, _ := strings.Cut(text, " ")
			if name, target, ok := strings.Cut(word, "@"); ok && strings.EqualFold(target, me) {
				return strings.TrimSpace(name + " " + rest)
			}
		}
	}
	return text
}

// attachments describes the message's photo, document, voice note or
// audio; each is downloaded only when the router saves it (after the size
// check). A voice note is marked Voice: the router transcribes it and
// uses the words as the message's text.
func (c *Channel) attachments(m *models.Message) []bus.Attachment {
	switch {
	case m.Voice != nil:
		v := m.Voice
		mt := v.MimeType
		if mt == "" {
			mt = "audio/ogg" // what Telegram records voice notes as (OGG Opus)
		}
		return []bus.Attachment{{Name: fmt.Sprintf("voice_%d%s", m.ID, audioExt(mt, ".ogg")), Size: v.FileSize,
			Ref: v.FileID, MIME: mt, Voice: true, Open: c.download(v.FileID)}}
	case m.Audio != nil:
		a := m.Audio
		name := a.FileName
		if name == "" {
			name = fmt.Sprintf("audio_%d%s", m.ID, audioExt(a.MimeType, ".mp3"))
		}
		return []bus.Attachment{{Name: name, Size: a.FileSize, Ref: a.FileID, MIME: a.MimeType, Open: c.download(a.FileID)}}
	case m.Document != nil:
		d := m.Document
		name := d.FileName
		if name == "" {
			name = fmt.Sprintf("document_%d", m.ID)
		}
		return []bus.Attachment{{Name: name, Size: d.FileSize, Ref: d.FileID, MIME: d.MimeType, Open: c.download(d.FileID)}}
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1] // the largest size
		return []bus.Attachment{{Name: fmt.Sprintf("photo_%d.jpg", m.ID), Size: int64(p.FileSize), Ref: p.FileID, Open: c.download(p.FileID)}}
	}
	return nil
}

// audioExt is the file extension for an audio MIME type, or def when the
// type is unknown: transcription services tell formats by the name.
func audioExt(mimeType, def string) string {
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	switch strings.TrimSpace(mt) {
	case "audio/ogg", "audio/opus", "audio/x-opus+ogg":
		return ".ogg"
	case "audio/mpeg", "audio/mp3":
		return ".mp3"
	case "audio/mp4", "audio/m4a", "audio/x-m4a":
		return ".m4a"
	case "audio/aac":
		return ".aac"
	case "audio/wav", "audio/x-wav", "audio/wave":
		return ".wav"
	case "audio/flac", "audio/x-flac":
		return ".flac"
	case "audio/webm":
		return ".webm"
	}
	return def
}

// Reattach (bus.Reattacher) fetches a file by its file_id.
func (c *Channel) Reattach(fileID string) func() (io.ReadCloser, error) { return c.download(fileID) }

// download returns a func fetching a file via getFile and the file URL;
// the download stops when the channel does.
func (c *Channel) download(fileID string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		ctx := c.tasks.Context()
		if ctx.Err() != nil {
			return nil, channels.ErrStopped
		}
		f, err := c.bot.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
		if err != nil {
			return nil, fmt.Errorf("getFile: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.bot.FileDownloadLink(f), nil)
		if err != nil {
			return nil, scrub(err, c.o.Token)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, scrub(err, c.o.Token)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("download: HTTP %d", resp.StatusCode)
		}
		return resp.Body, nil
	}
}
