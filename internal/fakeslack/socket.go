package fakeslack

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxAckSize: Slack silently drops acks/response payloads of 20 KB or more.
const maxAckSize = 20 * 1024

var upgrader = websocket.Upgrader{
	// slack-go dials with "Origin: https://api.slack.com".
	CheckOrigin: func(*http.Request) bool { return true },
}

type wsConn struct {
	ws       *websocket.Conn
	wmu      sync.Mutex // serialises data frames
	done     chan struct{}
	once     sync.Once
	draining bool // sent a disconnect; closed once the client reconnects (guarded by Server.mu)
}

func (c *wsConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// close closes the network connection abruptly (no close frame).
func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

// outFrame is a frame waiting for a socket; sent is called once it was written.
type outFrame struct {
	data []byte
	sent func()
}

type eventRec struct {
	payload map[string]any
	attempt int
}

type delivery struct {
	eventID string
	attempt int
	acked   bool
}

// handleLink is the WebSocket endpoint handed out by apps.connections.open.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	if !s.takeTicket(r.URL.Query().Get("ticket")) {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	c.wmu.Lock() // nothing may be written before hello
	s.mu.Lock()
	var old []*wsConn
	for oc := range s.conns {
		if oc.draining {
			old = append(old, oc)
		}
	}
	s.connections++
	s.conns[c] = true
	s.cur = c
	pending := s.pending
	s.pending = nil
	n, ping, app := len(s.conns), s.PingInterval, s.AppID
	s.bump()
	s.mu.Unlock()

	hello, _ := json.Marshal(map[string]any{
		"type": "hello", "num_connections": n,
		"debug_info":      map[string]any{"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": app},
	})
	_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	err = ws.WriteMessage(websocket.TextMessage, hello)
	for i, f := range pending {
		if err == nil {
			err = ws.WriteMessage(websocket.TextMessage, f.data)
		}
		if err != nil {
			s.requeue(pending[i:])
			break
		}
		if f.sent != nil {
			f.sent()
		}
	}
	c.wmu.Unlock()
	for _, oc := range old {
		oc.close()
	}
	go s.pinger(c, ping)
	s.readLoop(c)
}

// takeTicket uses up a ticket apps.connections.open handed out; false
// for an unknown or used one, or once the fake is closed.
func (s *Server) takeTicket(ticket string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	used, known := s.tickets[ticket]
	if known {
		s.tickets[ticket] = true
	}
	return known && !used && !s.closed
}

func (s *Server) requeue(frames []outFrame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(frames, s.pending...)
}

// pinger sends WebSocket PING control frames: slack-go drops a connection
// that gets none within its ping interval.
func (s *Server) pinger(c *wsConn, every time.Duration) {
	if every <= 0 {
		every = 2 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(5*time.Second)); err != nil {
			return
		}
		select {
		case <-c.done:
			return
		case <-t.C:
		}
	}
}

// readLoop reads the client's acks until the socket dies.
func (s *Server) readLoop(c *wsConn) {
	defer func() {
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		if s.cur == c {
			s.cur = nil
		}
		s.bump()
		s.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var a struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &a); err != nil || a.EnvelopeID == "" {
			s.logf("unparsable frame from client: %.200s", data)
			continue
		}
		if len(data) >= maxAckSize {
			s.logf("ack of %s is %d bytes (>= 20 KB): Slack drops it", a.EnvelopeID, len(data))
			continue
		}
		s.mu.Lock()
		s.acks = append(s.acks, ack{a.EnvelopeID, a.Payload})
		if d := s.deliveries[a.EnvelopeID]; d != nil {
			d.acked = true
		}
		s.bump()
		s.mu.Unlock()
	}
}

// send writes a frame to the current socket, or queues it until the client
// (re)connects. sent, if not nil, runs once the frame was written.
func (s *Server) send(data []byte, sent func()) {
	for range 3 {
		s.mu.Lock()
		c := s.cur
		if c == nil || s.closed {
			if !s.closed {
				s.pending = append(s.pending, outFrame{data, sent})
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if err := c.write(data); err == nil {
			if sent != nil {
				sent()
			}
			return
		}
		c.close()
		s.mu.Lock()
		if s.cur == c {
			s.cur = nil
		}
		s.mu.Unlock()
	}
}

// SendRaw sends a raw text frame (e.g. an envelope the client cannot parse).
func (s *Server) SendRaw(frame string) {
	s.send([]byte(frame), nil)
}

// deliver sends event eventID as an events_api envelope and returns its envelope_id.
// Unless acked within AckTimeout it is redelivered (up to retry_attempt 3).
func (s *Server) deliver(eventID string, attempt int, reason string) string {
	s.mu.Lock()
	rec := s.events[eventID]
	if rec == nil {
		s.mu.Unlock()
		s.t.Errorf("fakeslack: unknown event_id %q", eventID)
		return ""
	}
	envID := s.newEnvelopeID()
	rec.attempt = attempt
	s.deliveries[envID] = &delivery{eventID: eventID, attempt: attempt}
	s.mu.Unlock()
	data, err := json.Marshal(map[string]any{
		"envelope_id": envID, "type": "events_api", "accepts_response_payload": false,
		"retry_attempt": attempt, "retry_reason": reason, "payload": rec.payload,
	})
	if err != nil {
		s.t.Errorf("fakeslack: marshal event: %v", err)
		return envID
	}
	s.send(data, func() { s.armRedelivery(envID) })
	return envID
}

func (s *Server) armRedelivery(envID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deliveries[envID]
	if s.closed || s.AckTimeout <= 0 || d == nil || d.attempt >= 3 {
		return
	}
	s.timers = append(s.timers, time.AfterFunc(s.AckTimeout, func() {
		s.mu.Lock()
		skip := s.closed || d.acked
		s.mu.Unlock()
		if !skip {
			s.deliver(d.eventID, d.attempt+1, "timeout")
		}
	}))
}

// Retry resends event eventID in a new envelope (new envelope_id, same
// event_id, retry_attempt one more than the last delivery, retry_reason
// "timeout") and returns the new envelope_id, e.g. for Acked. With no
// socket up it is sent once the client reconnects.
func (s *Server) Retry(eventID string) (envelopeID string) {
	s.mu.Lock()
	rec := s.events[eventID]
	attempt := 0
	if rec != nil {
		attempt = rec.attempt + 1
	}
	s.mu.Unlock()
	return s.deliver(eventID, attempt, "timeout")
}

// Disconnect sends {"type":"disconnect","reason":reason} on the current
// socket. Frames sent afterwards are queued for the next connection; the old
// socket is closed once the client has reconnected.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	c := s.cur
	if c != nil {
		c.draining = true
		s.cur = nil
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	data, _ := json.Marshal(map[string]any{
		"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "applink-fake"},
	})
	_ = c.write(data)
}

// DropSocket closes the current socket abruptly (no close frame); with no
// current socket it closes all open ones.
func (s *Server) DropSocket() {
	s.mu.Lock()
	var victims []*wsConn
	if s.cur != nil {
		victims = append(victims, s.cur)
	} else {
		for c := range s.conns {
			victims = append(victims, c)
		}
	}
	s.cur = nil
	s.mu.Unlock()
	for _, c := range victims {
		c.close()
	}
}
