package faketelegram

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// chatState is what the fake knows of one chat.
type chatState struct {
	chat      Chat
	lastID    int                  // the highest message_id used in the chat
	msgs      map[int]*Message     // every message, inbound and the bot's, current state
	sent      []*SentMessage       // the bot's, in send order, deleted ones removed
	topics    map[int]string       // forum topic names by thread ID
	reactions map[int][]string     // the bot's reactions by message_id
	bySent    map[int]*SentMessage // sent by message_id
}

// chat returns the state of c, learning c (or newer details of it); s.mu
// must be held.
func (s *Server) chat(c Chat) *chatState {
	cs := s.chats[c.ID]
	if cs == nil {
		cs = &chatState{
			msgs: map[int]*Message{}, topics: map[int]string{},
			reactions: map[int][]string{}, bySent: map[int]*SentMessage{},
		}
		s.chats[c.ID] = cs
	}
	cs.chat = c
	return cs
}

func (cs *chatState) nextID() int {
	cs.lastID++
	return cs.lastID
}

// AddChat makes a chat known without a message from it (e.g. a group the
// bot was added to). Chats in pushed updates are known anyway.
func (s *Server) AddChat(c Chat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chat(c)
}

// AddTopic makes a forum topic known in a chat, which must be known. A
// pushed topic message (is_topic_message) also makes its topic known.
func (s *Server) AddTopic(chatID int64, threadID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chatID]
	if cs == nil {
		s.t.Errorf("faketelegram: AddTopic: chat %d is not known; AddChat or push a message first", chatID)
		return
	}
	if _, ok := cs.topics[threadID]; !ok {
		cs.topics[threadID] = "Topic " + strconv.Itoa(threadID)
	}
	cs.lastID = max(cs.lastID, threadID)
}

// inbound fills in and stores a message a user sent; s.mu must be held.
func (s *Server) inbound(m *Message) {
	cs := s.chat(m.Chat)
	if m.MessageID == 0 {
		m.MessageID = cs.nextID()
	}
	cs.lastID = max(cs.lastID, m.MessageID)
	if m.Date == 0 {
		m.Date = int(time.Now().Unix())
	}
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		if _, ok := cs.topics[m.MessageThreadID]; !ok {
			cs.topics[m.MessageThreadID] = "Topic " + strconv.Itoa(m.MessageThreadID)
		}
	}
	c := *m
	cs.msgs[m.MessageID] = &c
}

// lookupChat resolves a chat_id parameter: an integer or "@username".
func (s *Server) lookupChat(q *request) (*chatState, *apiError) {
	v := strings.TrimSpace(q.str("chat_id"))
	if v == "" {
		return nil, badRequest("chat_id is empty")
	}
	if name, ok := strings.CutPrefix(v, "@"); ok {
		for _, cs := range s.chats {
			if cs.chat.Username != "" && strings.EqualFold(cs.chat.Username, name) && cs.chat.Type != "private" {
				return cs, nil
			}
		}
		return nil, badRequest("chat not found")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if cs := s.chats[id]; err == nil && cs != nil {
		return cs, nil
	}
	return nil, badRequest("chat not found")
}

// lookupThread checks a message_thread_id parameter against the chat.
func (s *Server) lookupThread(cs *chatState, q *request) (int, *apiError) {
	if !q.has("message_thread_id") {
		return 0, nil
	}
	id, _ := q.int("message_thread_id")
	if id == 0 {
		return 0, nil
	}
	if _, ok := cs.topics[int(id)]; !ok || cs.chat.Type != "supergroup" || !cs.chat.IsForum {
		return 0, badRequest("message thread not found")
	}
	return int(id), nil
}

// Messages returns the messages the bot sent to a chat and has not deleted,
// in send order, each as last edited. They are copies.
func (s *Server) Messages(chatID int64) []*SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chatID]
	if cs == nil {
		return nil
	}
	out := make([]*SentMessage, len(cs.sent))
	for i, m := range cs.sent {
		c := *m
		out[i] = &c
	}
	return out
}

// Reactions returns the emoji the bot has set on a message.
func (s *Server) Reactions(chatID int64, messageID int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.chats[chatID]; cs != nil {
		return slices.Clone(cs.reactions[messageID])
	}
	return nil
}

// Commands returns the command list most recently set with setMyCommands
// (whatever its scope and language), or nil after deleteMyCommands.
func (s *Server) Commands() []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// topicRoot is the forum_topic_created service message of a topic, which
// real topic messages that reply to nothing carry as reply_to_message.
func topicRoot(chat Chat, threadID int, name string) *Message {
	return &Message{
		MessageID: threadID, MessageThreadID: threadID, IsTopicMessage: true,
		Date: 1700000000, Chat: chat,
		ForumTopicCreated: &ForumTopicCreated{Name: name, IconColor: 7322096},
	}
}
