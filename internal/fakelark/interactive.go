package fakelark

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// maxButtonText bounds a card button's label here (Lark truncates long
// labels on screen; the fake refuses them to catch runaway text).
const maxButtonText = 100

// Button is a card button as the bot sent it: its label and the value
// its callback behaviour carries.
type Button struct {
	Text  string
	Value map[string]any
}

type cardButton struct {
	Tag  string `json:"tag"`
	Text struct {
		Tag     string `json:"tag"`
		Content string `json:"content"`
	} `json:"text"`
	Behaviors []struct {
		Type  string         `json:"type"`
		Value map[string]any `json:"value"`
	} `json:"behaviors"`
}

// cardButtons returns the buttons of a card (JSON 2.0 body elements), or
// an error message for a malformed one.
func cardButtons(content string) ([]Button, string) {
	var c struct {
		Body struct {
			Elements []json.RawMessage `json:"elements"`
		} `json:"body"`
	}
	_ = json.Unmarshal([]byte(content), &c)
	var out []Button
	for i, raw := range c.Body.Elements {
		var b cardButton
		if json.Unmarshal(raw, &b) != nil || b.Tag != "button" {
			continue
		}
		switch {
		case b.Text.Tag != "plain_text" && b.Text.Tag != "lark_md" || b.Text.Content == "":
			return nil, fmt.Sprintf("body.elements[%d]: a button needs a text", i)
		case len([]rune(b.Text.Content)) > maxButtonText:
			return nil, fmt.Sprintf("body.elements[%d]: button text too long", i)
		}
		btn := Button{Text: b.Text.Content}
		for _, bh := range b.Behaviors {
			if bh.Type == "callback" {
				btn.Value = bh.Value
			}
		}
		out = append(out, btn)
	}
	return out, ""
}

// Buttons returns the buttons on the bot's card messageID as it is now.
func (s *Server) Buttons(messageID string) []Button {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs[messageID]
	if m == nil || m.MsgType != "interactive" {
		return nil
	}
	bs, _ := cardButtons(m.Content)
	return bs
}

// Press pushes the card.action.trigger callback (schema 2.0, over the long
// connection) of openID pressing the button with callback value on the
// bot's card messageID, and returns its header.event_id. Like Send, it is
// queued until a client connects and re-pushed until acked 200.
func (s *Server) Press(messageID, openID string, value map[string]any) (eventID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgs[messageID]
	if m == nil {
		panic("fakelark: Press: no message " + messageID)
	}
	n := s.nextLocked()
	eventID = fmt.Sprintf("ev_card_%s_%d", s.AppID, n)
	ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
	payload, _ := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]string{"event_id": eventID, "event_type": "card.action.trigger", "create_time": ms,
			"token": "v_token", "app_id": s.AppID, "tenant_key": "tk_test"},
		"event": map[string]any{
			"operator": map[string]any{"tenant_key": "tk_test", "user_id": "", "open_id": openID, "union_id": "on_" + openID},
			"token":    fmt.Sprintf("c-%d", n),
			"action":   map[string]any{"value": value, "tag": "button"},
			"host":     "im_message",
			"context":  map[string]any{"open_message_id": messageID, "open_chat_id": m.ChatID},
		},
	})
	ev := &event{id: eventID, messageID: messageID, payload: payload, ackTimeout: s.AckTimeout, maxAuto: s.MaxRedeliveries}
	if ev.ackTimeout <= 0 {
		ev.ackTimeout = 3 * time.Second
	}
	s.events[eventID] = ev
	s.pushLocked(ev)
	s.notifyLocked()
	return eventID
}

// CardResponse returns the response the client gave to a card callback
// (the data of its 200 ack, e.g. {"toast":{…}}), and whether it answered.
func (s *Server) CardResponse(eventID string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.events[eventID]
	if ev == nil {
		return nil, false
	}
	for _, f := range ev.frames {
		if s.acks[f] == http.StatusOK {
			return s.ackData[f], true
		}
	}
	return nil, false
}
