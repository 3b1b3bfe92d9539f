package faketelegram

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// The handlers run with s.mu held.

func (s *Server) getMe(*request) (any, *apiError) {
	return struct {
		User
		CanJoinGroups           bool `json:"can_join_groups"`
		CanReadAllGroupMessages bool `json:"can_read_all_group_messages"`
		SupportsInlineQueries   bool `json:"supports_inline_queries"`
	}{User: s.Bot, CanJoinGroups: true}, nil
}

func (s *Server) deleteWebhook(q *request) (any, *apiError) {
	s.webhook = ""
	if q.bool("drop_pending_updates") {
		s.updates = nil
	}
	return true, nil
}

// setWebhook only records the URL: while one is set, getUpdates gets 409.
func (s *Server) setWebhook(q *request) (any, *apiError) {
	url := q.str("url")
	if url != "" && !strings.HasPrefix(url, "https://") {
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	s.webhook = url
	if q.bool("drop_pending_updates") {
		s.updates = nil
	}
	return true, nil
}

func (s *Server) getWebhookInfo(*request) (any, *apiError) {
	return struct {
		URL                  string `json:"url"`
		HasCustomCertificate bool   `json:"has_custom_certificate"`
		PendingUpdateCount   int    `json:"pending_update_count"`
	}{s.webhook, false, len(s.updates)}, nil
}

var chatActions = []string{
	"typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
	"upload_document", "choose_sticker", "find_location", "record_video_note", "upload_video_note",
}

func (s *Server) sendChatAction(q *request) (any, *apiError) {
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, e
	}
	if _, e := s.lookupThread(cs, q); e != nil {
		return nil, e
	}
	if !slices.Contains(chatActions, q.str("action")) {
		return nil, badRequest("wrong parameter action in request")
	}
	return true, nil
}

// reactionEmoji are the emoji a bot may react with (Bot API ReactionTypeEmoji).
var reactionEmoji = strings.Fields("👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 " +
	"❤\u200d🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨\u200d💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ " +
	"💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷\u200d♂ 🤷 🤷\u200d♀ 😡")

func (s *Server) setMessageReaction(q *request) (any, *apiError) {
	cs, e := s.lookupChat(q)
	if e != nil {
		return nil, e
	}
	id, e := messageID(q)
	if e != nil {
		return nil, e
	}
	if cs.msgs[id] == nil {
		return nil, badRequest("message to react not found")
	}
	var rs []struct{ Type, Emoji string }
	if r := q.str("reaction"); r != "" && json.Unmarshal([]byte(r), &rs) != nil {
		return nil, badRequest("can't parse reaction types JSON object")
	}
	if len(rs) > 1 {
		return nil, badRequest("REACTIONS_TOO_MANY")
	}
	var emoji []string
	for _, r := range rs {
		if r.Type != "emoji" || !slices.Contains(reactionEmoji, strings.ReplaceAll(r.Emoji, "\ufe0f", "")) {
			return nil, badRequest("REACTION_INVALID")
		}
		emoji = append(emoji, r.Emoji)
	}
	cs.reactions[id] = emoji
	return true, nil
}

func (s *Server) setMyCommands(q *request) (any, *apiError) {
	var cmds []BotCommand
	if json.Unmarshal([]byte(q.str("commands")), &cmds) != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands specified")
	}
	for _, c := range cmds {
		if n := len(c.Command); n < 1 || n > 32 || strings.Trim(c.Command, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(c.Description)); n < 1 || n > 256 {
			return nil, badRequest("command description must be non-empty and at most 256 characters")
		}
	}
	s.commands = cmds
	return true, nil
}

func (s *Server) getMyCommands(*request) (any, *apiError) {
	return append([]BotCommand{}, s.commands...), nil
}

func (s *Server) deleteMyCommands(*request) (any, *apiError) {
	s.commands = nil
	return true, nil
}

func (s *Server) answerCallbackQuery(q *request) (any, *apiError) {
	id := q.str("callback_query_id")
	if !s.callbacks[id] {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	if utf8.RuneCountInString(q.str("text")) > 200 {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	delete(s.callbacks, id)
	return true, nil
}
