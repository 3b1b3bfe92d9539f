package faketelegram

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Helpers to build realistic inbound messages for PushMessage. They can be
// combined: InTopic(ReplyTo(Group(chat, ann, "@deerflow_test_bot hi"), sent.Message), 42).

// Private returns a message from user in the user's private chat with the
// bot, with entities for the commands, mentions and URLs in text.
func Private(user User, text string) Message {
	return Message{
		From: &user,
		Chat: Chat{ID: user.ID, Type: "private", FirstName: user.FirstName, LastName: user.LastName, Username: user.Username},
		Text: text, Entities: DetectEntities(text),
	}
}

// Group returns a message from user in chat (a "supergroup" if chat.Type
// is empty), with entities for the commands (also /cmd@bot), mentions
// (e.g. of the bot) and URLs in text.
func Group(chat Chat, user User, text string) Message {
	if chat.Type == "" {
		chat.Type = "supergroup"
	}
	if chat.Title == "" {
		chat.Title = "Group " + strconv.FormatInt(chat.ID, 10)
	}
	return Message{From: &user, Chat: chat, Text: text, Entities: DetectEntities(text)}
}

// ReplyTo makes m a reply to another message, for instance a message the
// bot sent (SentMessage.Message). Like the real API, a reply to a topic
// message is in that topic, and a reply in a supergroup that is not a forum
// carries the reply chain's message_thread_id (but no is_topic_message).
func ReplyTo(m Message, to Message) Message {
	to.ReplyToMessage = nil
	m.ReplyToMessage = &to
	switch {
	case to.IsTopicMessage:
		m.MessageThreadID, m.IsTopicMessage = to.MessageThreadID, true
	case m.Chat.Type == "supergroup" && !m.Chat.IsForum:
		m.MessageThreadID = cmpOr(to.MessageThreadID, to.MessageID)
	}
	return m
}

// InTopic puts m in forum topic threadID (which becomes known when the
// message is pushed): it sets message_thread_id, is_topic_message and
// chat.is_forum and, if m replies to nothing, makes it reply to the
// topic's forum_topic_created service message, as real topic messages do.
func InTopic(m Message, threadID int) Message {
	if m.Chat.Type == "" {
		m.Chat.Type = "supergroup"
	}
	m.Chat.IsForum = true
	m.MessageThreadID, m.IsTopicMessage = threadID, true
	if m.ReplyToMessage == nil {
		m.ReplyToMessage = topicRoot(m.Chat, threadID, "Topic "+strconv.Itoa(threadID))
	}
	return m
}

var (
	commandRE = regexp.MustCompile(`(?:^|[^\w/])(/[a-zA-Z0-9_]{1,64}(?:@[a-zA-Z0-9_]{3,32})?)`)
	mentionRE = regexp.MustCompile(`(?:^|[^\w@])(@[a-zA-Z0-9_]{5,32})`)
	urlRE     = regexp.MustCompile(`(?:^|[\s(])(https?://[^\s<>"]+)`)
)

// DetectEntities returns the entities Telegram marks in a plain text a
// user sent: bot_command, mention and url, with offsets and lengths in
// UTF-16 code units.
func DetectEntities(text string) []MessageEntity {
	var out []MessageEntity
	add := func(typ string, re *regexp.Regexp, ok func(rest string) bool) {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[2], m[3]
			if typ == "url" {
				end = start + len(strings.TrimRight(text[start:end], ".,;:!?)'"))
			}
			if ok(text[end:]) {
				out = append(out, MessageEntity{Type: typ, Offset: utf16Len(text[:start]), Length: utf16Len(text[start:end])})
			}
		}
	}
	wordNext := func(rest string) bool { // the entity must end at a non-word character
		return rest == "" || !(isAlnum(rest[0]) || rest[0] == '_' || rest[0] == '/' || rest[0] == '@')
	}
	add("bot_command", commandRE, wordNext)
	add("mention", mentionRE, wordNext)
	add("url", urlRE, func(string) bool { return true })
	slices.SortFunc(out, func(a, b MessageEntity) int { return cmp.Compare(a.Offset, b.Offset) })
	return out
}
