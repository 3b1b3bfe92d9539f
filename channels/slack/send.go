package slack

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
)

// maxMarkdown is how much Markdown one message's markdown block may hold.
const maxMarkdown = 12000

// maxFallback bounds the plain-text fallback (notifications, old clients).
const maxFallback = 3000

// Send implements bus.Sender.
func (c *Channel) Send(ctx context.Context, out *bus.Outbound) (ids []string, err error) {
	if kind := channels.SendKind(out); kind != "" {
		defer func() { c.met.Sent(kind, err) }()
	}
	defer func() {
		if d, ok := rateLimited(err); ok {
			c.pause.Hold(out.ChatID, d) // whatever gave up on it, the channel waits
		}
	}()
	if out.Final && out.Text != "" {
		if text := c.slackHelp(out.Text); text != out.Text {
			o := *out
			o.Text = text
			out = &o
		}
	}
	if strings.HasPrefix(out.ReplyTo, ephemeralPrefix) {
		return nil, c.ephemeral(ctx, out)
	}
	switch out.Kind {
	case bus.OutMessage, bus.OutEdit:
		if out.Final {
			ids, err := c.final(ctx, out)
			if out.Task == "" { // a subagent's end is not the answer's
				c.finishReaction(ctx, out)
			}
			return ids, err
		}
		return c.progress(ctx, out)
	case bus.OutFile:
		return nil, c.upload(ctx, out)
	}
	return nil, nil
}

// progress posts or updates the in-progress message as plain text. A
// rate-limited update is dropped: the next one, or the final, replaces it.
func (c *Channel) progress(ctx context.Context, out *bus.Outbound) ([]string, error) {
	text := cut(out.Text, maxMarkdown)
	if out.Kind == bus.OutEdit {
		if err := c.wait(ctx, out.ChatID); err != nil {
			return nil, err
		}
		_, _, _, err := c.api.UpdateMessageContext(ctx, out.ChatID, out.EditID, slack.MsgOptionText(text, false))
		if d, ok := rateLimited(err); ok {
			c.pause.Hold(out.ChatID, d)
			return nil, nil
		}
		return nil, err
	}
	ts, err := c.post(ctx, out, slack.MsgOptionText(text, false))
	if err != nil {
		return nil, err
	}
	return []string{ts}, nil
}

// final delivers a finished answer in the thread as markdown blocks, with
// a plain-text fallback, split past Slack's limit; the first part replaces
// the progress message when there is one.
func (c *Channel) final(ctx context.Context, out *bus.Outbound) ([]string, error) {
	parts := channels.SplitMarkdown(out.Text, maxMarkdown)
	var ids []string
	for i, part := range parts {
		blocks := []slack.Block{slack.NewMarkdownBlock("", part)}
		if a := actionsBlock(out.Buttons); a != nil && i == len(parts)-1 {
			blocks = append(blocks, a) // under the message's end
		}
		ts, err := c.finalPart(ctx, out, i, part, blocks)
		if len(blocks) > 1 && isBlocksError(err) {
			// Refused: the text lists the choices to type.
			c.log.WarnContext(ctx, "Slack refused the buttons; sending without them", "err", err)
			ts, err = c.finalPart(ctx, out, i, part, blocks[:1])
		}
		if err != nil {
			return ids, err
		}
		ids = append(ids, ts)
	}
	return ids, nil
}

// finalPart posts part i of a final message (the first replaces the
// progress message when there is one).
func (c *Channel) finalPart(ctx context.Context, out *bus.Outbound, i int, part string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(cut(part, maxFallback), false), slack.MsgOptionBlocks(blocks...)}
	var ts string
	err := c.retry(ctx, out.ChatID, func() error {
		var err error
		if i == 0 && out.Kind == bus.OutEdit {
			if err = c.wait(ctx, out.ChatID); err == nil {
				_, ts, _, err = c.api.UpdateMessageContext(ctx, out.ChatID, out.EditID, opts...)
			}
			return err
		}
		ts, err = c.post(ctx, out, opts...)
		return err
	})
	return ts, err
}

// post sends a new message into the conversation's thread.
func (c *Channel) post(ctx context.Context, out *bus.Outbound, opts ...slack.MsgOption) (string, error) {
	if err := c.wait(ctx, out.ChatID); err != nil {
		return "", err
	}
	if out.Topic != "" {
		opts = append(opts, slack.MsgOptionTS(out.Topic))
	}
	opts = append(opts, slack.MsgOptionDisableLinkUnfurl())
	_, ts, err := c.api.PostMessageContext(ctx, out.ChatID, opts...)
	return ts, err
}

// retry runs f, waiting out Slack's 429 Retry-After and retrying its
// server errors (up to three times in all). A 429 holds every send into
// the channel (channels.Pauses), so the next try waits in f.
func (c *Channel) retry(ctx context.Context, channel string, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || attempt >= 3 {
			return err
		}
		if d, ok := rateLimited(err); ok {
			c.log.WarnContext(ctx, "rate limited by Slack", "channel", channel, "retry_after", d)
			c.pause.Hold(channel, d)
			continue
		}
		if !transient(err) {
			return err
		}
		wait := channels.Backoff(attempt)
		c.log.WarnContext(ctx, "Slack failed; retrying", "channel", channel, "err", err, "in", wait)
		if err := channels.Sleep(ctx, wait, nil); err != nil {
			return err
		}
	}
}

// ephemeral answers a slash command to its user only, in the thread of
// the conversation it addressed, with its buttons (a press on an
// ephemeral message works like any other; see interactive).
func (c *Channel) ephemeral(ctx context.Context, out *bus.Outbound) error {
	if !out.Final || (out.Kind != bus.OutMessage && out.Kind != bus.OutEdit) {
		return nil
	}
	user := strings.TrimPrefix(out.ReplyTo, ephemeralPrefix)
	blocks := []slack.Block{slack.NewMarkdownBlock("", cut(out.Text, maxMarkdown))}
	if a := actionsBlock(out.Buttons); a != nil {
		blocks = append(blocks, a)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(cut(out.Text, maxFallback), false), slack.MsgOptionBlocks(blocks...)}
	if out.Topic != "" {
		opts = append(opts, slack.MsgOptionTS(out.Topic))
	}
	_, err := c.api.PostEphemeralContext(ctx, out.ChatID, user, opts...)
	return err
}

// upload sends a presented file into the thread (files v2 flow).
func (c *Channel) upload(ctx context.Context, out *bus.Outbound) error {
	f := out.File
	if f == nil || f.Open == nil {
		return errors.New("slack: no file to send")
	}
	return c.retry(ctx, out.ChatID, func() error {
		r, err := f.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = c.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Filename: f.Name, Title: f.Name, FileSize: int(max(f.Size, 1)), Reader: r,
			Channel: out.ChatID, ThreadTimestamp: out.Topic,
		})
		return err
	})
}

// react adds a reaction to a message, remembering our "eyes".
func (c *Channel) react(ctx context.Context, channel, ts, name string) {
	ctx, cancel := context.WithTimeout(ctx, reactTimeout)
	defer cancel()
	err := c.api.AddReactionContext(ctx, name, slack.ItemRef{Channel: channel, Timestamp: ts})
	if err != nil && !strings.Contains(err.Error(), "already_reacted") {
		c.log.Debug("reaction", "name", name, "err", err)
		return
	}
	if name == "eyes" {
		c.mu.Lock()
		c.reactions[channel+"/"+ts] = true
		c.mu.Unlock()
	}
}

// eyesPending notes that "eyes" is being put on a message; the returned
// channel is closed once that is done (or failed).
func (c *Channel) eyesPending(channel, ts string) chan struct{} {
	done := make(chan struct{})
	c.mu.Lock()
	c.eyesDone[channel+"/"+ts] = done
	c.mu.Unlock()
	return done
}

// finishReaction swaps "eyes" on the question for ✅ or ❌, once the
// "eyes" is there.
func (c *Channel) finishReaction(ctx context.Context, out *bus.Outbound) {
	if out.ReplyTo == "" {
		return
	}
	key := out.ChatID + "/" + out.ReplyTo
	c.mu.Lock()
	landed := c.eyesDone[key]
	delete(c.eyesDone, key)
	c.mu.Unlock()
	if landed != nil { // an instant answer can come before its "eyes"
		select {
		case <-landed:
		case <-ctx.Done():
		case <-time.After(reactTimeout):
		}
	}
	c.mu.Lock()
	had := c.reactions[key]
	delete(c.reactions, key)
	c.mu.Unlock()
	if !had {
		return // a command's reply, or the reaction never landed
	}
	item := slack.ItemRef{Channel: out.ChatID, Timestamp: out.ReplyTo}
	rctx, cancel := context.WithTimeout(ctx, reactTimeout)
	c.api.RemoveReactionContext(rctx, "eyes", item)
	cancel()
	name := "white_check_mark"
	if out.Failed {
		name = "x"
	}
	c.react(ctx, out.ChatID, out.ReplyTo, name)
}

// Typing implements bus.Typer with the assistant "is thinking…" status,
// where the workspace offers it.
func (c *Channel) Typing(ctx context.Context, out *bus.Outbound) error {
	c.mu.Lock()
	off := c.noStatus
	c.mu.Unlock()
	if off || out.Topic == "" {
		return nil
	}
	err := c.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: out.ChatID, ThreadTS: out.Topic, Status: "is thinking…",
	})
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		c.mu.Lock()
		c.noStatus = true // not an assistant app here; the reaction says enough
		c.mu.Unlock()
	}
	return err
}

// cut shortens s to at most n bytes (n ≥ 3), "…" included, on a rune
// boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n-len("…"), 0)
	for k := 0; k < 3 && n > 0 && s[n]&0xC0 == 0x80; k++ {
		n-- // back to the start of the character (of valid UTF-8)
	}
	return s[:n] + "…"
}
