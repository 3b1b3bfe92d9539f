package slack

import (
	"context"
	"strings"

	"github.com/slack-go/slack"

	"github.com/deerflow/deerflow/bus"
)

// Slash commands. Slack takes any message that starts with "/" for a
// slash command, so a typed "/new" never reaches the bot; the app
// registers /deerflow and takes the command as its text. Slack sends a
// slash command's channel but not the thread it was typed in (the payload
// has channel_id and no thread_ts), so `/deerflow <command>` addresses the
// person's latest conversation in that channel or DM: the thread of their
// last message the bot took there, or of the last work a command of
// theirs started. With none yet (or none since a restart) it addresses
// the channel itself, where /stop and /status find nothing running.
// /schedules and /unschedule always address the channel, whose list
// holds its threads' tasks too. `@bot /<command>` written in a thread
// addresses that thread exactly.
//
// The answer goes to the person alone (chat.postEphemeral), into the
// thread it addressed. Work a command starts (a research, a skill's task)
// gets a message of its own, visible to all, whose thread is its
// conversation.

// ephemeralPrefix marks, in Outbound.ReplyTo, an answer to a slash
// command: it goes only to that user.
const ephemeralPrefix = "ephemeral:"

// maxLatest bounds the latest-conversation map (people × channels); past
// it the map starts over, and a slash command addresses the channel until
// the person writes again.
const maxLatest = 50000

// channelWide are the commands a slash command sends to the whole
// channel rather than to the person's latest conversation.
var channelWide = map[string]bool{"/schedules": true, "/unschedule": true}

// slash handles `/deerflow <command> …`.
func (c *Channel) slash(ctx context.Context, b bus.Publisher, cmd slack.SlashCommand) {
	if !c.allowed(cmd.UserID) {
		c.log.Info("ignored a slash command from a user not in allowed_users", "user", cmd.UserID)
		return
	}
	text := slashText(cmd.Text)
	topic := c.latest(cmd.ChannelID, cmd.UserID)
	if word, _, _ := strings.Cut(text, " "); channelWide[strings.ToLower(word)] {
		topic = ""
	}
	in := &bus.Inbound{
		Channel: c.o.Name, ChatID: cmd.ChannelID, Topic: topic,
		UserID: cmd.UserID, UserName: cmd.UserName, Group: !strings.HasPrefix(cmd.ChannelID, "D"),
		MessageID: ephemeralPrefix + cmd.UserID, EventKey: c.o.Name + ":slash:" + cmd.TriggerID,
		Text: text,
	}
	if b.StartsRun(text) {
		if ts, err := c.announce(ctx, cmd.ChannelID, "<@"+cmd.UserID+"> "+text); err == nil {
			in.Topic, in.MessageID = ts, ts
			c.noteLatest(cmd.ChannelID, cmd.UserID, ts)
		} else {
			c.log.Warn("could not post the message a slash command's work answers; answering privately", "err", err)
		}
	}
	if err := b.Publish(ctx, in); err != nil {
		c.log.Error("slash command", "err", err)
		return
	}
	c.met.Inbound()
}

// slashText is the command a /deerflow text names: "new" → "/new", ""
// → "/help"; a leading "/" is kept.
func slashText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "/help"
	}
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s
}

// announce posts text as a new message in channel and returns its ts.
func (c *Channel) announce(ctx context.Context, channel, text string) (string, error) {
	if err := c.wait(ctx, channel); err != nil {
		return "", err
	}
	_, ts, err := c.api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false))
	return ts, err
}

// noteLatest remembers topic as user's latest conversation in channel.
func (c *Channel) noteLatest(channel, user, topic string) {
	if topic == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latestTopic == nil || len(c.latestTopic) >= maxLatest {
		c.latestTopic = map[string]string{}
	}
	c.latestTopic[channel+"/"+user] = topic
}

// latest returns user's latest conversation in channel ("" for none).
func (c *Channel) latest(channel, user string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latestTopic[channel+"/"+user]
}
