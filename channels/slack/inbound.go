package slack

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/metrics"
	"github.com/deerflow/deerflow/store"
)

// event handles one Socket Mode event. Every envelope is acknowledged
// promptly: messages right after they are stored (milliseconds; files are
// stored by reference and fetched when the message's turn comes), anything
// unreadable or not for us at once.
func (c *Channel) event(ctx context.Context, b bus.Publisher, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || evt.Request == nil {
			return
		}
		in, _ := c.inbound(ev)
		if in == nil {
			c.ack(ctx, evt.Request.EnvelopeID)
			return
		}
		// Accepted in the chat's lane: the next event is read meanwhile.
		env, chat, ts := evt.Request.EnvelopeID, in.ChatID, in.MessageID // in belongs to the router once published
		// Noted here, in the order of events, so a /deerflow command right
		// after a message addresses it (an unaccepted message is retried).
		c.noteLatest(chat, in.UserID, in.Topic)
		c.lanes.Go(&c.tasks, chat, func(ctx context.Context) {
			if err := b.Publish(ctx, in); err != nil {
				c.log.Error("could not accept a message; Slack will redeliver it", "err", err)
				c.met.Error(metrics.ErrStore)
				return // not acked: Slack retries, the retry is handled once
			}
			c.met.Inbound()
			c.ack(ctx, env)
			landed := c.eyesPending(chat, ts)
			c.tasks.Go(func(ctx context.Context) {
				defer close(landed)
				c.react(ctx, chat, ts, "eyes")
			})
		})
	case socketmode.EventTypeSlashCommand:
		if evt.Request != nil {
			c.ack(ctx, evt.Request.EnvelopeID)
		}
		if cmd, ok := evt.Data.(slack.SlashCommand); ok {
			c.slash(ctx, b, cmd)
		}
	case socketmode.EventTypeErrorBadMessage:
		// The library could not parse it, so it was not acknowledged; do
		// it here or Slack keeps resending it.
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			var env struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(bad.Message, &env) == nil && env.EnvelopeID != "" {
				c.ack(ctx, env.EnvelopeID)
			}
			c.log.Warn("acknowledged an envelope the Slack library could not read", "err", bad.Cause)
		}
	case socketmode.EventTypeInteractive:
		if evt.Request != nil {
			c.interactive(ctx, b, evt)
		}
	}
}

// ack acknowledges an envelope; it gives up when the channel stops, or
// after ackTimeout (Slack then redelivers it).
func (c *Channel) ack(ctx context.Context, envelopeID string) {
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := c.sm.AckCtx(ctx, envelopeID, nil); err != nil {
		c.log.Warn("ack failed", "err", err)
	}
}

// inbound turns an events_api event into a bus message, or nil when it is
// not for us. files reports that it carries files.
func (c *Channel) inbound(ev slackevents.EventsAPIEvent) (in *bus.Inbound, files bool) {
	var user, text, channel, ts, threadTS, channelType, subtype, botID string
	var attached []slack.File
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		user, text, channel, ts, threadTS, botID = e.User, e.Text, e.Channel, e.TimeStamp, e.ThreadTimeStamp, e.BotID
		channelType = "channel"
		if e.Files != nil {
			attached = e.Files
		}
	case *slackevents.MessageEvent:
		user, text, channel, ts, threadTS, botID = e.User, e.Text, e.Channel, e.TimeStamp, e.ThreadTimeStamp, e.BotID
		channelType, subtype = e.ChannelType, e.SubType
		if e.Message != nil {
			attached = e.Message.Files
		}
	default:
		return nil, false
	}
	// Bots (ourselves included), edits, deletions and other subtypes are
	// not messages from a person.
	if botID != "" || user == "" || user == c.botUser || (subtype != "" && subtype != "file_share") {
		return nil, false
	}
	if !c.allowed(user) {
		c.log.Info("ignored a message from a user not in allowed_users", "user", user)
		return nil, false
	}
	mention := "<@" + c.botUser + ">"
	addressed := strings.Contains(text, mention)
	topic := threadTS
	if topic == "" {
		topic = ts
	}
	// In channels, and in group DMs (mpim: several people talk there, as
	// in a small private channel), the bot acts on mentions and on any
	// message in a thread that is one of its conversations; in a DM on
	// every message. "@bot /stop" is the command for that thread.
	if channelType != "im" && !addressed && !c.known(channel, threadTS) {
		return nil, false
	}
	in = &bus.Inbound{
		Channel:   c.o.Name,
		ChatID:    channel,
		Topic:     topic,
		UserID:    user,
		MessageID: ts,
		// A mention arrives twice (app_mention and message) and Slack
		// retries: the message's ts identifies it once.
		EventKey: c.o.Name + ":msg:" + channel + ":" + ts,
		Group:    channelType != "im",
		Text:     cleanText(strings.ReplaceAll(text, mention, "")),
	}
	in.Files = c.attachments(ev, attached)
	if in.Text == "" && len(in.Files) == 0 {
		return nil, false
	}
	return in, len(in.Files) > 0
}

// known reports whether a thread is one of our conversations.
func (c *Channel) known(channel, threadTS string) bool {
	if threadTS == "" || c.o.Store == nil {
		return false
	}
	_, err := c.o.Store.ChatThread(bus.ChatKey(c.o.Name, channel, threadTS))
	return err == nil || !errors.Is(err, store.ErrNotFound)
}

var linkRE = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|([^>]+))?>`)

// cleanText turns Slack's message format into plain text: links become
// "label (url)" or the url, and &amp; &lt; &gt; are unescaped.
func cleanText(s string) string {
	s = linkRE.ReplaceAllStringFunc(s, func(m string) string {
		p := linkRE.FindStringSubmatch(m)
		if p[2] != "" && p[2] != p[1] {
			return p[2] + " (" + p[1] + ")"
		}
		return p[1]
	})
	return strings.TrimSpace(html.UnescapeString(s))
}

// attachments describes the files shared with an event.
func (c *Channel) attachments(ev slackevents.EventsAPIEvent, files []slack.File) []bus.Attachment {
	if len(files) == 0 {
		return nil
	}
	clips := audioClips(ev)
	out := make([]bus.Attachment, 0, len(files))
	for _, f := range files {
		out = append(out, c.attachment(f, clips[f.ID]))
	}
	return out
}

// attachment fetches a shared file with the bot token when the router
// saves it. clip marks one of Slack's recorded audio clips (a voice note).
func (c *Channel) attachment(f slack.File, clip bool) bus.Attachment {
	url := f.URLPrivateDownload
	if url == "" {
		url = f.URLPrivate
	}
	a := bus.Attachment{Name: f.Name, Size: int64(f.Size), Ref: url, MIME: f.Mimetype, Open: c.Reattach(url)}
	// Clips recorded in Slack carry a waveform too; some are labelled
	// video/* (webm, mp4) though they hold only sound.
	if clip || (len(f.AudioWaveSamples) > 0 && strings.HasPrefix(f.Mimetype, "audio/")) {
		a.Voice = true
		if rest, ok := strings.CutPrefix(a.MIME, "video/"); ok {
			a.MIME = "audio/" + rest
		}
	}
	return a
}

// audioClips returns the ids of the event's files that are audio clips
// recorded in Slack (file subtype "slack_audio"). slack-go's File has no
// subtype, so it is read from the raw event.
func audioClips(ev slackevents.EventsAPIEvent) map[string]bool {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.InnerEvent == nil {
		return nil
	}
	type file struct {
		ID      string `json:"id"`
		Subtype string `json:"subtype"`
	}
	var raw struct {
		Files   []file `json:"files"`
		Message *struct {
			Files []file `json:"files"`
		} `json:"message"`
	}
	if json.Unmarshal(*cb.InnerEvent, &raw) != nil {
		return nil
	}
	files := raw.Files
	if raw.Message != nil {
		files = append(files, raw.Message.Files...)
	}
	clips := map[string]bool{}
	for _, f := range files {
		if f.Subtype == "slack_audio" && f.ID != "" {
			clips[f.ID] = true
		}
	}
	return clips
}

// Reattach (bus.Reattacher) fetches a shared file by its private URL,
// with the bot token. The download stops when the channel does.
func (c *Channel) Reattach(url string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		started := c.tasks.Go(func(ctx context.Context) {
			// A reader that stops reading would hold the download in
			// pw.Write, where ctx cannot reach it: closing the pipe can.
			stop := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Cause(ctx)) })
			defer stop()
			pw.CloseWithError(c.api.GetFileContext(ctx, url, pw))
		})
		if !started {
			return nil, channels.ErrStopped
		}
		return pr, nil
	}
}
