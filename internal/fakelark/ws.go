package fakelark

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"
)

const serviceID = 7

// clientConfig is sent in full (the SDK replaces all four fields; a missing
// PingInterval would become 0 and cause a hot ping loop). Reconnect is fast.
var clientConfig = map[string]int{"ReconnectCount": -1, "ReconnectInterval": 1, "ReconnectNonce": 0, "PingInterval": 120}

// MessageEvent describes an inbound im.message.receive_v1 event.
type MessageEvent struct {
	ChatID, ChatType             string // ChatType: p2p | group
	SenderOpenID                 string
	MessageID                    string // generated (om_in_N) if empty
	MessageType                  string // text | post | image | file | …; default text
	Content                      string // the content JSON string, e.g. Text("hi")
	RootID, ParentID, ThreadID   string
	Mentions                     []Mention
	CreateTime                   time.Time // default now
	SenderUnionID, SenderUserID  string    // optional
	TenantKey, EventID, EventApp string    // optional overrides
}

// Mention is one entry of message.mentions; Key is the placeholder in the text, e.g. "@_user_1".
type Mention struct{ Key, OpenID, Name string }

// Text builds text message content: {"text":s}.
func Text(s string) string {
	b, _ := json.Marshal(map[string]string{"text": s})
	return string(b)
}

type event struct {
	id, messageID string
	payload       []byte
	ackTimeout    time.Duration
	maxAuto, auto int
	acked         bool
	frames        []string // frame message_ids of every push written
}

type wsConn struct {
	ws   *websocket.Conn
	out  chan []byte
	done chan struct{}
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// wsEndpoint answers POST /callback/ws/endpoint.
func (s *Server) wsEndpoint(rep *reply, body []byte) {
	var req larkws.BootstrapRequest
	if json.Unmarshal(body, &req) != nil || req.AppID != s.AppID || req.AppSecret != s.AppSecret {
		rep.json(http.StatusOK, larkws.AuthFailed, map[string]any{"code": larkws.AuthFailed, "msg": "auth failed"})
		return
	}
	s.mu.Lock()
	dev := fmt.Sprintf("dev-%d", s.nextLocked())
	s.devices[dev] = true
	s.mu.Unlock()
	u := "ws" + s.URL[len("http"):] + "/ws?device_id=" + dev + "&service_id=" + strconv.Itoa(serviceID)
	rep.json(http.StatusOK, 0, map[string]any{"code": 0, "msg": "ok", "data": map[string]any{"URL": u, "ClientConfig": clientConfig}})
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	known := s.devices[r.URL.Query().Get("device_id")]
	s.mu.Unlock()
	if !known {
		w.Header().Set(larkws.HeaderHandshakeStatus, strconv.Itoa(larkws.AuthFailed))
		w.Header().Set(larkws.HeaderHandshakeMsg, "unknown device_id")
		http.Error(w, "unknown device_id", http.StatusForbidden)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, out: make(chan []byte, 4096), done: make(chan struct{})}
	go c.writeLoop()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.conns[c] = true
	s.connCount++
	queued := s.queue
	s.queue = nil
	for _, id := range queued {
		s.pushLocked(s.events[id])
	}
	s.notifyLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.notifyLocked()
		s.mu.Unlock()
		close(c.done)
		_ = ws.Close()
	}()
	for {
		typ, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f larkws.Frame
		if typ != websocket.BinaryMessage || f.Unmarshal(data) != nil {
			continue
		}
		hs := larkws.Headers(f.Headers)
		switch larkws.FrameType(f.Method) {
		case larkws.FrameTypeControl:
			if hs.GetString(larkws.HeaderType) == string(larkws.MessageTypePing) {
				cfg, _ := json.Marshal(clientConfig)
				pong := larkws.Frame{Service: f.Service, Method: int32(larkws.FrameTypeControl),
					Headers: []larkws.Header{{Key: larkws.HeaderType, Value: string(larkws.MessageTypePong)}}, Payload: cfg}
				b, _ := pong.Marshal()
				c.send(b)
			}
		case larkws.FrameTypeData:
			s.recordAck(hs.GetString(larkws.HeaderMessageID), f.Payload)
		}
	}
}

func (c *wsConn) send(b []byte) {
	select {
	case c.out <- b:
	case <-c.done:
	default: // a client that stopped reading loses the frame; re-push covers events
	}
}

func (c *wsConn) writeLoop() {
	for {
		select {
		case b := <-c.out:
			_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if c.ws.WriteMessage(websocket.BinaryMessage, b) != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (s *Server) recordAck(frameID string, payload []byte) {
	var resp struct {
		Code int    `json:"code"`
		Data []byte `json:"data"` // base64 in the JSON, as the SDK writes it
	}
	_ = json.Unmarshal(payload, &resp)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acks[frameID] = resp.Code
	if s.ackData == nil {
		s.ackData = map[string][]byte{}
	}
	s.ackData[frameID] = resp.Data
	if ev := s.events[s.frames[frameID]]; ev != nil && resp.Code == http.StatusOK {
		ev.acked = true
	}
	s.notifyLocked()
}

// pushLocked writes one event frame (new frame message_id, same event_id) to
// one live connection, or queues the event until one connects. A timer
// re-pushes it if no 200 ack arrives within the event's ack timeout.
func (s *Server) pushLocked(ev *event) {
	if s.closed || ev == nil {
		return
	}
	var conn *wsConn
	for c := range s.conns {
		conn = c // one connection receives each event (Lark's cluster mode)
		break
	}
	if conn == nil {
		for _, id := range s.queue {
			if id == ev.id {
				return
			}
		}
		s.queue = append(s.queue, ev.id)
		return
	}
	n := s.nextLocked()
	frameID := fmt.Sprintf("fmsg_%d", n)
	s.frames[frameID] = ev.id
	ev.frames = append(ev.frames, frameID)
	f := larkws.Frame{LogID: uint64(n), Service: serviceID, Method: int32(larkws.FrameTypeData), Payload: ev.payload,
		Headers: []larkws.Header{
			{Key: larkws.HeaderType, Value: string(larkws.MessageTypeEvent)},
			{Key: larkws.HeaderMessageID, Value: frameID},
			{Key: larkws.HeaderSum, Value: "1"},
			{Key: larkws.HeaderSeq, Value: "0"},
			{Key: larkws.HeaderTraceID, Value: fmt.Sprintf("trace_%d", n)},
			{Key: larkws.HeaderTimestamp, Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
		}}
	b, _ := f.Marshal()
	conn.send(b)
	var tm *time.Timer
	tm = time.AfterFunc(ev.ackTimeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.timers, tm)
		if !ev.acked && ev.auto < ev.maxAuto && !s.closed {
			ev.auto++
			s.pushLocked(ev)
			s.notifyLocked()
		}
	})
	s.timers[tm] = true
}

// Send pushes an im.message.receive_v1 event on the live connection (queued
// until a client connects) and returns its header.event_id. The chat, the
// sender and the message become known to the REST API.
func (s *Server) Send(m MessageEvent) (eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nextLocked()
	if m.MessageID == "" {
		m.MessageID = fmt.Sprintf("om_in_%d", n)
	}
	if m.EventID == "" {
		m.EventID = fmt.Sprintf("ev_%s_%d", s.AppID, n)
	}
	if m.ChatType == "" {
		m.ChatType = "group"
	}
	if m.MessageType == "" {
		m.MessageType = "text"
	}
	if m.TenantKey == "" {
		m.TenantKey = "tk_test"
	}
	if m.EventApp == "" {
		m.EventApp = s.AppID
	}
	if m.CreateTime.IsZero() {
		m.CreateTime = time.Now()
	}
	if m.SenderUnionID == "" && m.SenderOpenID != "" {
		m.SenderUnionID = "on_" + m.SenderOpenID
	}
	ms := strconv.FormatInt(m.CreateTime.UnixMilli(), 10)
	mentions := []map[string]any{}
	for _, x := range m.Mentions {
		mentions = append(mentions, map[string]any{"key": x.Key, "name": x.Name, "tenant_key": m.TenantKey,
			"id": map[string]string{"union_id": "on_" + x.OpenID, "user_id": "", "open_id": x.OpenID}})
	}
	payload, _ := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]string{"event_id": m.EventID, "event_type": "im.message.receive_v1", "create_time": ms,
			"token": "", "app_id": m.EventApp, "tenant_key": m.TenantKey},
		"event": map[string]any{
			"sender": map[string]any{"sender_type": "user", "tenant_key": m.TenantKey, "sender_id": map[string]string{
				"union_id": m.SenderUnionID, "user_id": m.SenderUserID, "open_id": m.SenderOpenID}},
			"message": map[string]any{"message_id": m.MessageID, "root_id": m.RootID, "parent_id": m.ParentID,
				"create_time": ms, "update_time": ms, "chat_id": m.ChatID, "thread_id": m.ThreadID,
				"chat_type": m.ChatType, "message_type": m.MessageType, "content": m.Content, "mentions": mentions},
		},
	})
	s.chats[m.ChatID] = true
	if m.SenderOpenID != "" && (m.ChatType == "p2p" || s.users[m.SenderOpenID] == "") {
		chat := m.ChatID
		if m.ChatType != "p2p" {
			chat = "oc_p2p_" + m.SenderOpenID
			s.chats[chat] = true
		}
		s.users[m.SenderOpenID] = chat
	}
	s.addMsgLocked(&msg{Sent: Sent{MessageID: m.MessageID, ChatID: m.ChatID, MsgType: m.MessageType, Content: m.Content,
		RootID: m.RootID, ReplyTo: m.ParentID, ThreadID: m.ThreadID, CreateTime: m.CreateTime}})
	ev := &event{id: m.EventID, messageID: m.MessageID, payload: payload, ackTimeout: s.AckTimeout, maxAuto: s.MaxRedeliveries}
	if ev.ackTimeout <= 0 {
		ev.ackTimeout = 3 * time.Second
	}
	s.events[ev.id] = ev
	s.pushLocked(ev)
	s.notifyLocked()
	return ev.id
}

// Redeliver pushes the event again: same header.event_id, new frame message_id.
func (s *Server) Redeliver(eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushLocked(s.events[eventID])
	s.notifyLocked()
}

// DropConnection closes every live socket abruptly; the SDK reconnects
// (ReconnectNonce 0, so at once). Events sent meanwhile are queued.
func (s *Server) DropConnection() {
	s.mu.Lock()
	var drop []*wsConn
	for c := range s.conns {
		drop = append(drop, c)
		delete(s.conns, c)
	}
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range drop {
		_ = c.ws.UnderlyingConn().Close()
	}
}

// Connections returns how many WebSocket connections were accepted in total.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connCount
}

// Connected reports whether a client is connected now.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns) > 0
}

// Acks returns the ack code (200 or 500) per event frame message_id.
func (s *Server) Acks() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.acks))
	for k, v := range s.acks {
		out[k] = v
	}
	return out
}

// EventAcks returns, per push of the event so far, its ack code (0 = none yet).
func (s *Server) EventAcks(eventID string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events[eventID]
	if ev == nil {
		return nil
	}
	out := make([]int, len(ev.frames))
	for i, f := range ev.frames {
		out[i] = s.acks[f]
	}
	return out
}

// EventMessageID returns the message_id carried by an event from Send.
func (s *Server) EventMessageID(eventID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev := s.events[eventID]; ev != nil {
		return ev.messageID
	}
	return ""
}
