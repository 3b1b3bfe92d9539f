package fakeslack

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Block Kit limits for buttons (docs.slack.dev/reference/block-kit).
const (
	maxActionElements = 25
	maxButtonText     = 75
	maxActionID       = 255
	maxButtonValue    = 2000
)

// Button is a button of an actions block, as the bot sent it.
type Button struct {
	Text     string
	ActionID string
	Value    string
	BlockID  string
}

type buttonJSON struct {
	Type string `json:"type"`
	Text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"text"`
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
}

// validateActions checks an actions block's elements like Slack does;
// ids collects the message's action_ids (which must be unique).
func validateActions(b map[string]any, i int, ids map[string]bool) (string, string) {
	raw, _ := json.Marshal(b["elements"])
	var els []buttonJSON
	if json.Unmarshal(raw, &els) != nil || len(els) == 0 || len(els) > maxActionElements {
		return "invalid_blocks", fmt.Sprintf("must provide 1 to %d elements [json-pointer:/blocks/%d/elements]", maxActionElements, i)
	}
	for j, e := range els {
		ptr := fmt.Sprintf("[json-pointer:/blocks/%d/elements/%d", i, j)
		switch {
		case e.Type != "button":
			continue
		case e.Text.Type != "plain_text" || e.Text.Text == "":
			return "invalid_blocks", "must be a plain_text text object " + ptr + "/text]"
		case utf8.RuneCountInString(e.Text.Text) > maxButtonText:
			return "invalid_blocks", fmt.Sprintf("must be less than %d characters %s/text/text]", maxButtonText+1, ptr)
		case len(e.ActionID) > maxActionID:
			return "invalid_blocks", fmt.Sprintf("must be less than %d characters %s/action_id]", maxActionID+1, ptr)
		case len(e.Value) > maxButtonValue:
			return "invalid_blocks", fmt.Sprintf("must be less than %d characters %s/value]", maxButtonValue+1, ptr)
		case e.ActionID != "" && ids[e.ActionID]:
			return "invalid_blocks", "action_id already exists " + ptr + "/action_id]"
		}
		ids[e.ActionID] = true
	}
	return "", ""
}

// Buttons returns the buttons now shown on the bot's message ts in
// channel (nil when it has none).
func (s *Server) Buttons(channel, ts string) []Button {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.pressable(channel, ts)
	if m == nil {
		return nil
	}
	return buttonsOf(m.Blocks)
}

func buttonsOf(blocks json.RawMessage) []Button {
	var arr []struct {
		Type     string       `json:"type"`
		BlockID  string       `json:"block_id"`
		Elements []buttonJSON `json:"elements"`
	}
	json.Unmarshal(blocks, &arr)
	var out []Button
	for _, b := range arr {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{Text: e.Text.Text, ActionID: e.ActionID, Value: e.Value, BlockID: b.BlockID})
			}
		}
	}
	return out
}

// Press sends the interactive envelope (a block_actions payload, as Slack
// sends it over Socket Mode) of user pressing the button actionID on the
// bot's message ts in channel, and returns the envelope_id. It panics
// when the message shows no such button.
func (s *Server) Press(channel, ts, user, actionID string) (envelopeID string) {
	s.mu.Lock()
	m := s.pressable(channel, ts)
	var btn *Button
	if m != nil {
		for _, b := range buttonsOf(m.Blocks) {
			if b.ActionID == actionID {
				btn = &b
			}
		}
	}
	s.mu.Unlock()
	if btn == nil {
		panic(fmt.Sprintf("fakeslack: Press: no button %q on %s/%s", actionID, channel, ts))
	}
	return s.PressStale(channel, ts, user, *btn)
}

// PressStale is Press of a button the message may no longer show (a
// client that had not caught up with an update, or two people pressing
// at once).
func (s *Server) PressStale(channel, ts, user string, btn Button) (envelopeID string) {
	s.mu.Lock()
	m := s.pressable(channel, ts)
	if m == nil {
		s.mu.Unlock()
		panic(fmt.Sprintf("fakeslack: PressStale: no message %s/%s", channel, ts))
	}
	envelopeID = s.newEnvelopeID()
	trigger := s.newID("13345224609.")
	payload := map[string]any{
		"type": "block_actions", "api_app_id": s.AppID, "token": "XXYYZZ", "trigger_id": trigger,
		"team":         map[string]any{"id": s.TeamID, "domain": "test"},
		"user":         map[string]any{"id": user, "username": "user-" + user, "name": "user-" + user, "team_id": s.TeamID},
		"channel":      map[string]any{"id": channel, "name": "general"},
		"container":    map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": m.Ephemeral, "thread_ts": m.ThreadTS},
		"response_url": "https://hooks.slack.com/actions/" + s.TeamID + "/" + trigger,
		"state":        map[string]any{"values": map[string]any{}}, "is_enterprise_install": false,
		"actions": []any{map[string]any{
			"type": "button", "action_id": btn.ActionID, "block_id": btn.BlockID, "value": btn.Value,
			"text":      map[string]any{"type": "plain_text", "text": btn.Text, "emoji": true},
			"action_ts": s.nextTS(),
		}},
	}
	if !m.Ephemeral { // Slack sends no message with a press on an ephemeral one
		payload["message"] = s.botMessageJSON(m)
	}
	s.mu.Unlock()
	data, _ := json.Marshal(map[string]any{
		"envelope_id": envelopeID, "type": "interactive", "accepts_response_payload": false, "payload": payload,
	})
	s.send(data, nil)
	return envelopeID
}

// pressable is the bot's message ts in channel, ephemeral ones included
// (nil if none); s.mu must be held.
func (s *Server) pressable(channel, ts string) *message {
	if m := s.msgs[channel+"/"+ts]; m != nil {
		return m
	}
	for _, m := range s.posted[channel] {
		if m.Ephemeral && m.TS == ts {
			return m
		}
	}
	return nil
}
