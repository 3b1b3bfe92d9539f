package faketelegram

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// The handlers run with s.mu held.

func now() int { return int(time.Now().Unix()) }

// outgoing checks what sendMessage, sendDocument and sendPhoto share (the
// chat, the thread, the message replied to, the reply markup) and returns
// the new message without its ID and content.
func (s *Server) outgoing(q *request) (*chatState, *Message, *apiError) {
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, nil, e
	}
	thread, e := s.lookupThread(cs, q)
	if e != nil {
		return nil, nil, e
	}
	reply, e := s.lookupReply(cs, q)
	if e != nil {
		return nil, nil, e
	}
	markup, e := replyMarkup(q)
	if e != nil {
		return nil, nil, e
	}
	if lp := q.str("link_preview_options"); lp != "" && !json.Valid([]byte(lp)) {
		return nil, nil, badRequest("can't parse link preview options JSON object")
	}
	bot := s.Bot
	m := &Message{From: &bot, Date: now(), Chat: cs.chat, ReplyMarkup: markup}
	if reply != nil {
		r := *reply
		r.ReplyToMessage = nil
		m.ReplyToMessage = &r
		switch {
		case thread == 0 && reply.IsTopicMessage: // a reply goes to the topic of the message replied to
			thread = reply.MessageThreadID
		case cs.chat.Type == "supergroup" && !cs.chat.IsForum: // a reply chain: a thread, but no topic
			m.MessageThreadID = cmpOr(reply.MessageThreadID, reply.MessageID)
		}
	}
	if thread != 0 {
		m.MessageThreadID, m.IsTopicMessage = thread, true
		if reply == nil {
			m.ReplyToMessage = topicRoot(cs.chat, thread, cs.topics[thread])
		}
	}
	return cs, m, nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// lookupReply resolves reply_parameters (or the older reply_to_message_id).
func (s *Server) lookupReply(cs *chatState, q *request) (*Message, *apiError) {
	var rp struct {
		MessageID int             `json:"message_id"`
		ChatID    json.RawMessage `json:"chat_id"`
		Allow     bool            `json:"allow_sending_without_reply"`
	}
	switch {
	case q.has("reply_parameters"):
		if json.Unmarshal([]byte(q.str("reply_parameters")), &rp) != nil {
			return nil, badRequest("can't parse reply parameters JSON object")
		}
	case q.has("reply_to_message_id"):
		id, _ := q.int("reply_to_message_id")
		rp.MessageID, rp.Allow = int(id), q.bool("allow_sending_without_reply")
	default:
		return nil, nil
	}
	target := cs
	if len(rp.ChatID) > 0 {
		var name string
		id := string(rp.ChatID)
		if json.Unmarshal(rp.ChatID, &name) == nil {
			id = name
		}
		var e *apiError
		if target, e = s.lookupChat(&request{params: map[string]string{"chat_id": id}}); e != nil {
			return nil, e
		}
	}
	if m := target.msgs[rp.MessageID]; m != nil && rp.MessageID != 0 {
		if target != cs {
			return nil, nil // replies to other chats are external_reply, not reply_to_message
		}
		return m, nil
	}
	if rp.Allow {
		return nil, nil
	}
	return nil, badRequest("message to be replied not found")
}

// replyMarkup returns the reply_markup parameter as compact JSON.
func replyMarkup(q *request) (json.RawMessage, *apiError) {
	if q.str("reply_markup") == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	var b bytes.Buffer
	if json.Unmarshal([]byte(q.str("reply_markup")), &obj) != nil || json.Compact(&b, []byte(q.str("reply_markup"))) != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	if e := checkKeyboard(b.Bytes()); e != nil {
		return nil, e
	}
	return b.Bytes(), nil
}

// commit gives m the chat's next message_id and stores it as sent.
func (cs *chatState) commit(m *Message, sm *SentMessage) Message {
	m.MessageID = cs.nextID()
	sm.MessageID, sm.ThreadID, sm.Message = m.MessageID, m.MessageThreadID, *m
	if r := m.ReplyToMessage; r != nil && r.ForumTopicCreated == nil {
		sm.ReplyTo = r.MessageID
	}
	cs.sent = append(cs.sent, sm)
	cs.bySent[m.MessageID] = sm
	cs.msgs[m.MessageID] = &sm.Message
	return *m
}

func (s *Server) sendMessage(q *request) (any, *apiError) {
	cs, m, e := s.outgoing(q)
	if e != nil {
		return nil, e
	}
	text, ents, e := formatText(q.str("text"), q.str("parse_mode"), q.str("entities"), "text")
	if e != nil {
		return nil, e
	}
	m.Text, m.Entities = text, ents
	sm := &SentMessage{Text: q.str("text"), ParseMode: q.str("parse_mode"), PlainText: text, Entities: ents}
	return cs.commit(m, sm), nil
}

// messageID reads the message_id parameter.
func messageID(q *request) (int, *apiError) {
	id, _ := q.int("message_id")
	if id == 0 {
		return 0, badRequest("message identifier is not specified")
	}
	return int(id), nil
}

func (s *Server) editMessageText(q *request) (any, *apiError) {
	if q.has("inline_message_id") && !q.has("chat_id") {
		return nil, badRequest("MESSAGE_ID_INVALID")
	}
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, e
	}
	id, e := messageID(q)
	if e != nil {
		return nil, e
	}
	sm := cs.bySent[id]
	switch {
	case sm == nil && cs.msgs[id] != nil:
		return nil, badRequest("message can't be edited")
	case sm == nil:
		return nil, badRequest("message to edit not found")
	case sm.Document != nil || sm.Photo != nil:
		return nil, badRequest("there is no text in the message to edit")
	}
	text, ents, e := formatText(q.str("text"), q.str("parse_mode"), q.str("entities"), "text")
	if e != nil {
		return nil, e
	}
	markup, e := replyMarkup(q) // absent: the keyboard is removed
	if e != nil {
		return nil, e
	}
	if text == sm.PlainText && slices.Equal(ents, sm.Entities) && bytes.Equal(markup, sm.Message.ReplyMarkup) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m := sm.Message
	m.Text, m.Entities, m.ReplyMarkup, m.EditDate = text, ents, markup, max(now(), m.Date)
	sm.Text, sm.ParseMode, sm.PlainText, sm.Entities, sm.Message = q.str("text"), q.str("parse_mode"), text, ents, m
	sm.Edits++
	return m, nil
}

func (s *Server) deleteMessage(q *request) (any, *apiError) {
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, e
	}
	id, e := messageID(q)
	if e != nil {
		return nil, e
	}
	if cs.msgs[id] == nil {
		return nil, badRequest("message to delete not found")
	}
	delete(cs.msgs, id)
	delete(cs.bySent, id)
	delete(cs.reactions, id)
	cs.sent = slices.DeleteFunc(cs.sent, func(m *SentMessage) bool { return m.MessageID == id })
	return true, nil
}

// sendMessageDraft streams a partial message (Bot API 9): private chats
// only; the draft is not stored, see Calls.
func (s *Server) sendMessageDraft(q *request) (any, *apiError) {
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, e
	}
	if cs.chat.Type != "private" {
		return nil, badRequest("TEXTDRAFT_PEER_INVALID")
	}
	if id, err := strconv.ParseInt(q.str("draft_id"), 10, 64); err != nil || id == 0 {
		return nil, badRequest("draft_id must be non-zero")
	}
	if _, _, e := formatText(q.str("text"), q.str("parse_mode"), q.str("entities"), "draft"); e != nil {
		return nil, e
	}
	return true, nil
}
