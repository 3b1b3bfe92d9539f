// Package bus holds the messages every side shares: a channel publishes
// an Inbound (through a Publisher, the router) and gets Outbound messages
// back through its Sender. It has no behaviour of its own.
//
// It imports only event; every other package of ours may import it.
package bus

import (
	"context"
	"io"
	"path"
	"strings"
	"time"

	"github.com/deerflow/deerflow/event"
)

// Inbound is one message from a person.
type Inbound struct {
	Channel   string // "telegram", "slack", "lark", "console"
	ChatID    string
	Topic     string // a thread or topic inside the chat; "" for the chat itself
	UserID    string // the platform's user id
	UserName  string
	MessageID string // the platform's id of this message
	// ReplyTo is the platform id of the message this one answers. A reply
	// to any message of a conversation (the bot's or a person's)
	// continues that conversation.
	ReplyTo string
	// EventKey identifies the platform event that carried the message
	// ("telegram:update:5001"); a second Publish with the same key is
	// dropped, so redeliveries after a crash are handled once.
	EventKey string
	Text     string
	// Skill is set when the message activates a skill ("/<skill> task");
	// Text is then the task.
	Skill string `json:",omitempty"`
	// Research is set for a message of /research: "start" or "auto" (Text
	// is the topic), or "retry" (/retry, which resumes an unfinished
	// research when the conversation has one).
	Research string `json:",omitempty"`
	// Group is set when others than the sender and the bot see the
	// conversation (a group or channel), so private things (a person's
	// memory) are not shown there.
	Group bool `json:",omitempty"`
	// Files came with the message. They are stored with it (by Ref) and
	// fetched into the thread's uploads when its turn comes.
	Files []Attachment `json:",omitempty"`
	// Press is set when the person pressed a button rather than wrote
	// (see Presser); Text is then empty.
	Press *Press `json:",omitempty"`
	Time  time.Time
}

// Attachment is a file a person sent. Open is called once, by the router,
// to save it into the conversation's uploads. Ref is what the channel
// needs to fetch it again after a restart (see Reattacher).
type Attachment struct {
	Name string
	Size int64  // -1 when unknown
	Ref  string `json:",omitempty"`
	// MIME is the platform's media type for the file ("audio/ogg"), when
	// it sent one.
	MIME string `json:",omitempty"`
	// Voice marks a recorded voice note or audio clip (what a person says
	// instead of typing), as opposed to an audio file sent as a document;
	// both are Audio. A voice note's transcript stands for the message's
	// text.
	Voice bool                          `json:",omitempty"`
	Open  func() (io.ReadCloser, error) `json:"-"`
}

// audioExts are the file extensions of audio formats speech-to-text
// services take (or that platforms use for voice notes). ".webm" and
// ".mp4" are not among them: they are video as often as audio, so only a
// MIME type of audio/* makes such a file audio.
var audioExts = map[string]bool{
	".ogg": true, ".oga": true, ".opus": true, ".mp3": true, ".m4a": true,
	".wav": true, ".flac": true, ".aac": true, ".amr": true, ".mpga": true,
	".mpeg": true,
}

// Audio reports whether the attachment is sound: a voice note, a file of
// an audio MIME type, or one whose name has an audio extension. The
// router transcribes audio it is asked to (voice notes always).
func (a Attachment) Audio() bool {
	if a.Voice || strings.HasPrefix(strings.ToLower(a.MIME), "audio/") {
		return true
	}
	return audioExts[strings.ToLower(path.Ext(a.Name))]
}

// Reattacher is implemented by senders whose attachments can be fetched
// by Ref: a message stored with files before a restart gets them then.
type Reattacher interface {
	Reattach(ref string) func() (io.ReadCloser, error)
}

// ChatKey is the conversation's key: channel:chat[:topic].
func (in *Inbound) ChatKey() string {
	return ChatKey(in.Channel, in.ChatID, in.Topic)
}

// ChatKey builds a conversation key.
func ChatKey(channel, chat, topic string) string {
	k := channel + ":" + chat
	if topic != "" {
		k += ":" + topic
	}
	return k
}

// SplitChatKey splits a conversation key into channel, chat and topic.
func SplitChatKey(key string) (channel, chat, topic string) {
	channel, rest, _ := strings.Cut(key, ":")
	chat, topic, _ = strings.Cut(rest, ":")
	return channel, chat, topic
}

// OutKind says what an Outbound asks the channel to do.
type OutKind int

const (
	// OutMessage sends a new message with Text (Markdown).
	OutMessage OutKind = iota
	// OutEdit replaces the text of the message EditID with Text.
	OutEdit
	// OutDelta appends Text to the answer being streamed (channels that
	// implement DeltaStreamer only).
	OutDelta
	// OutActivity is one line of tool activity (channels that implement
	// DeltaStreamer only; others see activity through edits).
	OutActivity
	// OutFile delivers File, a file the agent presented from its outputs.
	OutFile
)

// Outbound is one thing to show in a conversation.
type Outbound struct {
	Kind    OutKind
	Channel string
	ChatID  string
	Topic   string
	ReplyTo string // platform id of the message this answers, when known
	EditID  string // OutEdit: the message to edit
	Text    string
	// Final marks the last version of an answer (OutMessage or OutEdit):
	// channels render it fully (Markdown, splitting) where earlier
	// versions may be shown plainly.
	Final bool
	// Failed marks text that reports a failure (an error sentence, a
	// stopped run), for channels that style it.
	Failed bool
	// Retry marks the OutActivity saying that the text streamed since the
	// last activity is being written again (the model call was retried):
	// channels that can erase it do.
	Retry bool
	File  *event.File // OutFile
	// Task is set on a subagent's progress reply: the task's id. Such a
	// reply always answers ReplyTo, in private chats too.
	Task string
	// Buttons go under the message (OutMessage, or OutEdit, where an edit
	// without them removes the ones shown), in rows; channels that cannot
	// show buttons ignore them, the text then says what to type.
	Buttons [][]Button
}

// Sender delivers Outbound messages for one channel. Send returns the
// platform ids of the messages it created or edited, the first being the
// one a later OutEdit should target (a long answer may become several
// messages); none when the platform has no ids.
type Sender interface {
	Name() string
	Send(ctx context.Context, out *Outbound) (ids []string, err error)
}

// Typer is implemented by senders that can show "typing…" while a reply is
// being worked on. The progress renderer calls it about every four seconds.
type Typer interface {
	Typing(ctx context.Context, out *Outbound) error
}

// DeltaStreamer is implemented by senders that show an answer as it arrives
// (the terminal): they get OutDelta and OutActivity instead of edits.
type DeltaStreamer interface {
	StreamsDeltas() bool
}

// EditThrottler is implemented by senders that want edits of a streamed
// answer no more often than the returned interval for that chat.
type EditThrottler interface {
	EditInterval(chatID string) time.Duration
}

// Publisher takes a person's messages from the channels: the router.
type Publisher interface {
	// Publish hands a message over. Commands are answered at once; other
	// text is queued and Publish returns without waiting for the answer.
	// An error means the message was not accepted (the channel should not
	// acknowledge it).
	Publish(ctx context.Context, in *Inbound) error
	// StartsRun reports whether text is a command that starts work
	// running like a message (a research with its topic, a skill with its
	// task) rather than one answered at once.
	StartsRun(text string) bool
}
