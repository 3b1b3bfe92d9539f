package lark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// receive handles one im.message.receive_v1 event. It must return within
// Lark's 3 s: it returns once the message is stored. An error makes the SDK answer 500 and Lark
// redeliver the event (dropped as a duplicate if it was stored after all).
func (c *Channel) receive(ctx context.Context, b bus.Publisher, e *larkim.P2MessageReceiveV1) error {
	in := c.inbound(e)
	if in == nil {
		return nil
	}
	msgID := in.MessageID // in belongs to the bus once published
	// Files are stored by reference and fetched when the message's turn
	// comes, so storing is quick whatever it carries.
	if err := b.Publish(ctx, in); err != nil {
		c.met.Error(metrics.ErrStore)
		return err
	}
	c.met.Inbound()
	c.tasks.Go(func(ctx context.Context) { c.react(ctx, msgID, "OnIt") })
	return nil
}

// inbound turns an event into a bus message, or nil when it is not for the
// bot (not a person's message, not addressed to it, not allowed, empty).
func (c *Channel) inbound(e *larkim.P2MessageReceiveV1) *bus.Inbound {
	if e == nil || e.Event == nil || e.Event.Message == nil || e.Event.Sender == nil {
		return nil
	}
	m, s := e.Event.Message, e.Event.Sender
	if str(s.SenderType) != "user" {
		return nil // bots, ourselves included
	}
	var openID, userID string
	if s.SenderId != nil {
		openID, userID = str(s.SenderId.OpenId), str(s.SenderId.UserId)
	}
	if !c.allowed(openID, userID) {
		c.log.Info("ignored a message from a user not in allowed_users", "open_id", openID)
		return nil
	}
	chat, msgID := str(m.ChatId), str(m.MessageId)
	text, files, mentioned := c.content(m)
	in := &bus.Inbound{
		Channel: c.o.Name, ChatID: chat, UserID: openID, MessageID: msgID, Text: text, Files: files,
	}
	if e.EventV2Base != nil && e.EventV2Base.Header != nil && e.EventV2Base.Header.EventID != "" {
		in.EventKey = c.o.Name + ":event:" + e.EventV2Base.Header.EventID
	}
	if str(m.ChatType) != "p2p" {
		in.Group = true
		parent := str(m.ParentId)
		if !mentioned && !c.ours(chat, parent) {
			return nil
		}
		// A topic is one conversation; elsewhere each fresh mention starts
		// one and replies continue the one they answer.
		switch {
		case str(m.ThreadId) != "":
			in.Topic = "t" + str(m.ThreadId)
		case parent != "":
			in.Topic, in.ReplyTo = "m"+str(m.RootId), parent
		default:
			in.Topic = "m" + msgID
		}
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
		return nil
	}
	return in
}

// ours reports whether messageID belongs to one of our conversations in
// chat (the bot's answers are all recorded).
func (c *Channel) ours(chat, messageID string) bool {
	if messageID == "" || c.o.Store == nil {
		return false
	}
	_, err := c.o.Store.BotMessageChat(c.o.Name, chat, messageID)
	return err == nil || !errors.Is(err, store.ErrNotFound)
}

// content turns a message's content into text (mentions of the bot
// removed, others as @name) and attachments, and reports whether the bot
// was mentioned.
func (c *Channel) content(m *larkim.EventMessage) (text string, files []bus.Attachment, mentioned bool) {
	names := map[string]string{}
	for _, mn := range m.Mentions {
		if mn == nil {
			continue
		}
		key := str(mn.Key)
		if mn.Id != nil && str(mn.Id.OpenId) == c.bot {
			mentioned = true
			names[key] = ""
			continue
		}
		names[key] = "@" + str(mn.Name)
	}
	raw := []byte(str(m.Content))
	msgID := str(m.MessageId)
	switch str(m.MessageType) {
	case "text":
		var t struct {
			Text string `json:"text"`
		}
		json.Unmarshal(raw, &t)
		text = t.Text
	case "post":
		text = postText(raw)
	case "image":
		var im struct {
			ImageKey string `json:"image_key"`
		}
		json.Unmarshal(raw, &im)
		if im.ImageKey != "" {
			files = append(files, c.resource(msgID, im.ImageKey, "image", "image_"+im.ImageKey+".png", -1))
		}
	case "audio":
		files = append(files, c.voice(msgID, raw)...)
	case "file", "media":
		var f struct {
			FileKey  string `json:"file_key"`
			FileName string `json:"file_name"`
		}
		json.Unmarshal(raw, &f)
		if f.FileKey != "" {
			name := f.FileName
			if name == "" {
				name = f.FileKey
			}
			files = append(files, c.resource(msgID, f.FileKey, "file", name, -1))
		}
	}
	text = mentionReplacer(names).Replace(text)
	return strings.Join(strings.Fields(text), " "), files, mentioned
}

// mentionReplacer replaces mention keys with names in one pass, the
// longest key where keys overlap ("@_user_1" begins "@_user_10"). An
// empty key stands for no mention.
func mentionReplacer(names map[string]string) *strings.Replacer {
	keys := make([]string, 0, len(names))
	for k := range names {
		if k != "" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, names[k])
	}
	return strings.NewReplacer(pairs...)
}

// postText flattens a rich-text post, plain or wrapped in a language key.
func postText(raw []byte) string {
	type elem struct {
		Tag    string `json:"tag"`
		Text   string `json:"text"`
		Href   string `json:"href"`
		UserID string `json:"user_id"`
	}
	type post struct {
		Title   string   `json:"title"`
		Content [][]elem `json:"content"`
	}
	var p post
	if json.Unmarshal(raw, &p) != nil || p.Content == nil {
		var byLang map[string]post
		if json.Unmarshal(raw, &byLang) != nil {
			return ""
		}
		for _, v := range byLang {
			p = v
			break
		}
	}
	var b strings.Builder
	if p.Title != "" {
		b.WriteString(p.Title + "\n")
	}
	for _, line := range p.Content {
		for _, e := range line {
			switch e.Tag {
			case "text", "md", "code_block":
				b.WriteString(e.Text)
			case "a":
				if e.Text != "" && e.Text != e.Href {
					fmt.Fprintf(&b, "%s (%s)", e.Text, e.Href)
				} else {
					b.WriteString(e.Href)
				}
			case "at":
				b.WriteString(e.UserID) // the mention key, replaced by the caller
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// voice describes an audio message, a voice note recorded in Feishu/Lark:
// its content is {"file_key":"…","duration":ms} with no name, and the
// recording is Opus (in an Ogg container), fetched as a "file" resource.
func (c *Channel) voice(msgID string, raw []byte) []bus.Attachment {
	var a struct {
		FileKey string `json:"file_key"`
	}
	json.Unmarshal(raw, &a)
	if a.FileKey == "" {
		return nil
	}
	v := c.resource(msgID, a.FileKey, "file", "voice_"+a.FileKey+".opus", -1)
	v.MIME, v.Voice = "audio/opus", true
	return []bus.Attachment{v}
}

// resource downloads a message's image or file when the router saves it.
func (c *Channel) resource(messageID, key, typ, name string, size int64) bus.Attachment {
	ref := messageID + "|" + key + "|" + typ
	return bus.Attachment{Name: name, Size: size, Ref: ref, Open: c.Reattach(ref)}
}

// Reattach (bus.Reattacher) fetches a message's image or file by its
// reference, "messageID|fileKey|type". The download stops when the
// channel does.
func (c *Channel) Reattach(ref string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		parts := strings.SplitN(ref, "|", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("bad file reference %q", ref)
		}
		req := larkim.NewGetMessageResourceReqBuilder().MessageId(parts[0]).FileKey(parts[1]).Type(parts[2]).Build()
		ctx := c.tasks.Context()
		if ctx.Err() != nil {
			return nil, channels.ErrStopped
		}
		resp, err := c.cli.Im.V1.MessageResource.Get(ctx, req)
		if err != nil {
			return nil, err
		}
		if !resp.Success() {
			return nil, fmt.Errorf("download: %d %s", resp.Code, resp.Msg)
		}
		return io.NopCloser(resp.File), nil
	}
}
