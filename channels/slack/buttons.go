package slack

import (
	"context"
	"errors"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/metrics"
)

// ShowsButtons implements bus.ButtonSender.
func (c *Channel) ShowsButtons() bool { return true }

// Block Kit limits for a button (Slack refuses longer).
const (
	maxButtonText = 75
	maxActionID   = 255
	maxButtons    = 25 // elements of one actions block
)

// actionsBlock is buttons as one Block Kit actions block (nil for none).
// A button's action_id and value are its id, which the router looks up.
func actionsBlock(rows [][]bus.Button) slack.Block {
	var els []slack.BlockElement
	for _, row := range rows {
		for _, b := range row {
			if b.Text == "" || len(b.ID) > maxActionID || len(els) == maxButtons {
				continue
			}
			text := slack.NewTextBlockObject(slack.PlainTextType, cutRunes(b.Text, maxButtonText), false, false)
			els = append(els, slack.NewButtonBlockElement(b.ID, b.ID, text))
		}
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock("choices", els...)
}

func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// interactive handles an interactive envelope: a button pressed by
// someone the allow-list admits is handed to the router, then the
// envelope is acknowledged (the router answers at once; the work a press
// starts runs later). A notice goes to the presser alone.
func (c *Channel) interactive(ctx context.Context, b bus.Publisher, evt socketmode.Event) {
	cb, ok := evt.Data.(slack.InteractionCallback)
	p, isPresser := b.(bus.Presser)
	if !ok || !isPresser || cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) == 0 {
		c.ack(ctx, evt.Request.EnvelopeID)
		return
	}
	if !c.allowed(cb.User.ID) {
		c.log.Info("ignored a button press from a user not in allowed_users", "user", cb.User.ID)
		c.ack(ctx, evt.Request.EnvelopeID)
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	channel := cmpOr(cb.Container.ChannelID, cb.Channel.ID)
	in := &bus.Inbound{
		Channel: c.o.Name, ChatID: channel, UserID: cb.User.ID, UserName: cmpOr(cb.User.Name, cb.User.ID),
		EventKey: c.o.Name + ":press:" + cb.TriggerID, Group: !strings.HasPrefix(channel, "D"),
		Press: &bus.Press{ID: act.ActionID, MessageID: cmpOr(cb.Container.MessageTs, cb.Message.Timestamp)},
	}
	if cb.Container.IsEphemeral {
		in.Press.MessageID = "" // an ephemeral message cannot be edited with chat.update
	}
	thread := cmpOr(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	env := evt.Request.EnvelopeID
	c.lanes.Go(&c.tasks, channel, func(ctx context.Context) {
		notice, err := p.Press(ctx, in)
		if err != nil {
			c.log.Error("could not take a button press; Slack will redeliver it", "err", err)
			c.met.Error(metrics.ErrStore)
			return // not acked: Slack retries
		}
		c.ack(ctx, env)
		if notice != "" {
			c.tasks.Go(func(ctx context.Context) { c.notice(ctx, channel, thread, in.UserID, notice) })
		}
	})
}

// notice shows text to user alone, in the thread of the pressed message.
func (c *Channel) notice(ctx context.Context, channel, thread, user, text string) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if _, err := c.api.PostEphemeralContext(ctx, channel, user, opts...); err != nil {
		c.log.Warn("could not show a button's notice", "err", err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// isBlocksError reports Slack refusing a message's blocks.
func isBlocksError(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && strings.Contains(se.Err, "blocks")
}
