package fakelark

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Lark limits (PROTOCOLS.md §7).
const (
	maxTextBytes  = 150 << 10
	maxCardBytes  = 30 << 10 // interactive and post
	maxFileBytes  = 30 << 20
	maxImageBytes = 10 << 20
	maxEdits      = 20
	codeTooLong   = 230025
	codeTooBig    = 234006
	codeNoReact   = 231003
	codeBadReact  = 231001
)

// Sent is a message in a chat; Messages returns the bot's ones.
type Sent struct {
	MessageID, ChatID string
	ReplyTo           string // parent message id (replies)
	RootID, ThreadID  string
	ReplyInThread     bool
	MsgType           string
	Content           string   // latest content JSON
	History           []string // every content version, oldest first
	Patches, Updates  int      // PATCH (card) and PUT (text/post) edits
	UUID              string
	ImageKey, FileKey string
	FileName          string
	Data              []byte // uploaded bytes of the image/file
	CreateTime        time.Time
}

type msg struct {
	Sent
	fromBot bool
}

type upload struct {
	name string
	data []byte
}

type reaction struct{ id, emoji string }

func (s *Server) addMsgLocked(m *msg) {
	if _, dup := s.msgs[m.MessageID]; !dup {
		s.order = append(s.order, m.MessageID)
	}
	s.msgs[m.MessageID] = m
}

func (m *msg) snapshot() *Sent {
	c := m.Sent
	c.History = append([]string(nil), m.History...)
	return &c
}

// Messages returns snapshots of the messages the bot sent to chatID, oldest first.
func (s *Server) Messages(chatID string) []*Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Sent
	for _, id := range s.order {
		if m := s.msgs[id]; m.fromBot && m.ChatID == chatID {
			out = append(out, m.snapshot())
		}
	}
	return out
}

// Message returns a snapshot of any known message (inbound or sent), or nil.
func (s *Server) Message(messageID string) *Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.msgs[messageID]; m != nil {
		return m.snapshot()
	}
	return nil
}

// Reactions returns the emoji types currently on a message.
func (s *Server) Reactions(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.reactions[messageID] {
		out = append(out, r.emoji)
	}
	return out
}

// AddChat makes a chat known (chats also become known through Send).
func (s *Server) AddChat(chatID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chatID] = true
}

// messageData is Lark's Message object.
func (s *Server) messageData(m *msg) map[string]any {
	ms := strconv.FormatInt(m.CreateTime.UnixMilli(), 10)
	return map[string]any{"message_id": m.MessageID, "root_id": m.RootID, "parent_id": m.ReplyTo, "thread_id": m.ThreadID,
		"msg_type": m.MsgType, "create_time": ms, "update_time": ms, "deleted": false, "updated": m.Updates+m.Patches > 0,
		"chat_id": m.ChatID, "body": map[string]string{"content": m.Content},
		"sender": map[string]string{"id": s.AppID, "id_type": "app_id", "sender_type": "app", "tenant_key": "tk_test"}}
}

func updateMulti(card map[string]any) bool {
	cfg, _ := card["config"].(map[string]any)
	v, _ := cfg["update_multi"].(bool)
	return v
}

// checkContentLocked validates msg_type and content like Lark; it returns the
// decoded object, or an error code and message.
func (s *Server) checkContentLocked(msgType, content string) (map[string]any, int, string) {
	limit := maxCardBytes
	switch msgType {
	case "text":
		limit = maxTextBytes
	case "post", "interactive", "image", "file":
	default:
		return nil, CodeInvalidParam, "invalid msg_type: " + msgType
	}
	if len(content) > limit {
		return nil, codeTooLong, fmt.Sprintf("The message content is too long: %d bytes > %d", len(content), limit)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(content), &obj); err != nil || obj == nil {
		return nil, CodeInvalidParam, "invalid message content: content must be a JSON object string"
	}
	key := map[string]string{"image": "image_key", "file": "file_key"}[msgType]
	switch msgType {
	case "text":
		if _, ok := obj["text"].(string); !ok {
			return nil, CodeInvalidParam, "invalid message content: text content needs a \"text\" string"
		}
	case "post", "interactive":
		if len(obj) == 0 {
			return nil, CodeInvalidParam, "invalid message content: empty " + msgType
		}
		if _, bad := cardButtons(content); msgType == "interactive" && bad != "" {
			return nil, CodeInvalidParam, "invalid message content: " + bad
		}
	case "image", "file":
		k, _ := obj[key].(string)
		if s.uploads[k] == nil {
			return nil, CodeInvalidParam, "invalid message content: unknown " + key
		}
	}
	return obj, 0, ""
}

func (s *Server) serveIM(rep *reply, r *http.Request, body []byte) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/open-apis/im/v1/"), "/")
	route := r.Method + " " + parts[0]
	if len(parts) > 1 {
		route += "/:id"
	}
	if len(parts) > 2 {
		route += "/" + parts[2]
	}
	if len(parts) > 3 {
		route += "/:key"
	}
	switch route {
	case "POST messages", "POST messages/:id/reply":
		s.createMessage(rep, r, body, parts)
	case "PATCH messages/:id", "PUT messages/:id":
		s.editMessage(rep, r.Method, parts[1], body)
	case "POST messages/:id/reactions", "DELETE messages/:id/reactions/:key":
		s.react(rep, r.Method, parts, body)
	case "GET messages/:id/resources/:key":
		s.resource(rep, parts[1], parts[3], r.URL.Query().Get("type"))
	case "POST images", "POST files":
		s.uploadFile(rep, r, parts[0])
	default:
		rep.json(http.StatusNotFound, 404, map[string]any{"code": 404, "msg": "404 page not found"})
	}
}

func (s *Server) createMessage(rep *reply, r *http.Request, body []byte, parts []string) {
	var req struct {
		ReceiveID     string `json:"receive_id"`
		MsgType       string `json:"msg_type"`
		Content       string `json:"content"`
		UUID          string `json:"uuid"`
		ReplyInThread bool   `json:"reply_in_thread"`
	}
	if json.Unmarshal(body, &req) != nil {
		rep.fail(CodeInvalidParam, "invalid request body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.uuids[req.UUID]; ok && req.UUID != "" {
		rep.ok(s.messageData(s.msgs[id]))
		return
	}
	m := &msg{fromBot: true, Sent: Sent{MsgType: req.MsgType, Content: req.Content, UUID: req.UUID,
		ReplyInThread: req.ReplyInThread, CreateTime: time.Now()}}
	if len(parts) == 1 {
		switch r.URL.Query().Get("receive_id_type") {
		case "chat_id":
			if !s.chats[req.ReceiveID] {
				rep.fail(CodeChatNotFound, "Bot/User can NOT be out of the chat.")
				return
			}
			m.ChatID = req.ReceiveID
		case "open_id":
			if m.ChatID = s.users[req.ReceiveID]; m.ChatID == "" {
				rep.fail(CodeUserNotFound, "Bot has NO availability to this user.")
				return
			}
		default:
			rep.fail(CodeInvalidParam, "invalid receive_id_type (the fake knows chat_id and open_id)")
			return
		}
	} else {
		parent := s.msgs[parts[1]]
		if parent == nil {
			rep.fail(CodeMsgNotFound, "The message is not found or has been recalled.")
			return
		}
		m.ChatID, m.ReplyTo, m.RootID, m.ThreadID = parent.ChatID, parent.MessageID, parent.RootID, parent.ThreadID
		if m.RootID == "" {
			m.RootID = parent.MessageID
		}
		if m.ThreadID == "" && req.ReplyInThread {
			m.ThreadID = fmt.Sprintf("omt_%d", s.nextLocked())
			if root := s.msgs[m.RootID]; root != nil {
				root.ThreadID = m.ThreadID
			}
		}
	}
	obj, code, text := s.checkContentLocked(req.MsgType, req.Content)
	if code != 0 {
		rep.fail(code, text)
		return
	}
	m.ImageKey, _ = obj["image_key"].(string)
	m.FileKey, _ = obj["file_key"].(string)
	if u := s.uploads[m.ImageKey+m.FileKey]; u != nil && (req.MsgType == "image" || req.MsgType == "file") {
		m.FileName, m.Data = u.name, u.data
	}
	m.MessageID = fmt.Sprintf("om_bot_%d", s.nextLocked())
	m.History = []string{req.Content}
	if req.UUID != "" {
		s.uuids[req.UUID] = m.MessageID
	}
	s.addMsgLocked(m)
	rep.ok(s.messageData(m))
}

// editMessage handles PATCH (cards with update_multi) and PUT (text/post, ≤20 edits).
func (s *Server) editMessage(rep *reply, method, id string, body []byte) {
	var req struct {
		MsgType string `json:"msg_type"`
		Content string `json:"content"`
	}
	if json.Unmarshal(body, &req) != nil {
		rep.fail(CodeInvalidParam, "invalid request body")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs[id]
	switch {
	case m == nil:
		rep.fail(CodeMsgNotFound, "The message is not found or has been recalled.")
		return
	case !m.fromBot:
		rep.fail(CodeInvalidParam, "only messages sent by this bot can be updated")
		return
	}
	if method == http.MethodPatch {
		old := map[string]any{}
		_ = json.Unmarshal([]byte(m.Content), &old)
		if m.MsgType != "interactive" {
			rep.fail(CodeInvalidParam, "the message is not a card (msg_type interactive)")
			return
		}
		obj, code, text := s.checkContentLocked("interactive", req.Content)
		if code != 0 {
			rep.fail(code, text)
			return
		}
		if !updateMulti(old) || !updateMulti(obj) {
			rep.fail(CodeInvalidParam, "the card is not updatable: config.update_multi must be true before and after")
			return
		}
		m.Patches++
		m.Content = req.Content
		m.History = append(m.History, req.Content)
		rep.ok(nil)
		return
	}
	if req.MsgType != "text" && req.MsgType != "post" || m.MsgType != "text" && m.MsgType != "post" {
		rep.fail(CodeInvalidParam, "only text and post messages can be edited")
		return
	}
	if m.Updates >= maxEdits {
		rep.fail(CodeEditLimit, "The message has reached the number of times it can be edited.")
		return
	}
	if _, code, text := s.checkContentLocked(req.MsgType, req.Content); code != 0 {
		rep.fail(code, text)
		return
	}
	m.Updates++
	m.MsgType, m.Content = req.MsgType, req.Content
	m.History = append(m.History, req.Content)
	rep.ok(s.messageData(m))
}

func (s *Server) react(rep *reply, method string, parts []string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mid := parts[1]
	if s.msgs[mid] == nil {
		rep.fail(CodeMsgNotFound, "The message is not found or has been recalled.")
		return
	}
	data := func(r reaction) map[string]any {
		return map[string]any{"reaction_id": r.id, "action_time": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"operator":      map[string]string{"operator_id": s.AppID, "operator_type": "app"},
			"reaction_type": map[string]string{"emoji_type": r.emoji}}
	}
	if method == http.MethodDelete {
		for i, r := range s.reactions[mid] {
			if r.id == parts[3] {
				s.reactions[mid] = append(s.reactions[mid][:i:i], s.reactions[mid][i+1:]...)
				rep.ok(data(r))
				return
			}
		}
		rep.fail(codeNoReact, "reaction not found")
		return
	}
	var req struct {
		ReactionType struct {
			EmojiType string `json:"emoji_type"`
		} `json:"reaction_type"`
	}
	if json.Unmarshal(body, &req) != nil || req.ReactionType.EmojiType == "" {
		rep.fail(codeBadReact, "reaction type is invalid")
		return
	}
	r := reaction{fmt.Sprintf("rc_%d", s.nextLocked()), req.ReactionType.EmojiType}
	s.reactions[mid] = append(s.reactions[mid], r)
	rep.ok(data(r))
}
