package fakeslack

import (
	"encoding/json"
	"time"
)

// SendEvent wraps a raw inner event (e.g. {"type":"app_mention",…}) in an
// event_callback payload and an events_api envelope, sends it and returns
// the generated event_id. A string "channel" field makes the channel known.
// An event the app did not subscribe to (see SetApp) is not sent: it
// returns "".
func (s *Server) SendEvent(event map[string]any) (eventID string) {
	s.mu.Lock()
	if ch, ok := event["channel"].(string); ok && ch != "" {
		typ, _ := event["channel_type"].(string)
		s.addChannel(ch, typ)
	}
	if !s.subscribed(event) {
		s.mu.Unlock()
		s.logf("the app is not subscribed to %v; not sent", event["type"])
		return ""
	}
	eventID = s.newID("Ev")
	s.events[eventID] = &eventRec{payload: map[string]any{
		"token": "XXYYZZ", "team_id": s.TeamID, "api_app_id": s.AppID,
		"event": event, "type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"authorizations": []any{map[string]any{
			"enterprise_id": nil, "team_id": s.TeamID, "user_id": s.BotUserID,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false, "event_context": "4-" + eventID,
	}}
	s.mu.Unlock()
	s.deliver(eventID, 0, "")
	return eventID
}

// userMessage stores a message a user wrote and returns it (a copy of its fields).
func (s *Server) userMessage(channel, channelType, user, text, threadTS string) (ts, chType, clientID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chType = s.addChannel(channel, channelType)
	ts = s.nextTS()
	s.ids++
	clientID = newUUID(s.ids)
	s.msgs[channel+"/"+ts] = &message{
		Posted:   Posted{Channel: channel, TS: ts, ThreadTS: threadTS, Text: text},
		author:   user,
		clientID: clientID,
	}
	return ts, chType, clientID
}

func userEvent(typ, channel, user, text, ts, threadTS, clientID, team string) map[string]any {
	ev := map[string]any{
		"type": typ, "user": user, "text": text, "ts": ts, "channel": channel,
		"event_ts": ts, "client_msg_id": clientID, "team": team,
	}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// Mention simulates a user mentioning the bot in a channel (text like
// "<@U0BOT> hi"): an app_mention event and, as real Slack does with
// message.channels subscribed, the same message as a plain message event
// (separate envelope and event_id). It returns the message ts.
func (s *Server) Mention(channel, user, text, threadTS string) (ts string) {
	ts, chType, cid := s.userMessage(channel, "", user, text, threadTS)
	s.SendEvent(userEvent("app_mention", channel, user, text, ts, threadTS, cid, s.TeamID))
	msg := userEvent("message", channel, user, text, ts, threadTS, cid, s.TeamID)
	msg["channel_type"] = chType
	s.SendEvent(msg)
	return ts
}

// Message simulates a user posting a plain message; channelType is "im",
// "channel", "group" or "mpim". It returns the message ts.
func (s *Server) Message(channel, channelType, user, text, threadTS string) (ts string) {
	ts, chType, cid := s.userMessage(channel, channelType, user, text, threadTS)
	msg := userEvent("message", channel, user, text, ts, threadTS, cid, s.TeamID)
	msg["channel_type"] = chType
	s.SendEvent(msg)
	return ts
}

// ShareFile simulates a user sharing files (see AddFile) with a message: a
// message event with subtype "file_share" and a "files" array. It returns the ts.
func (s *Server) ShareFile(channel, channelType, user, text, threadTS string, files ...File) (ts string) {
	ts, chType, cid := s.userMessage(channel, channelType, user, text, threadTS)
	msg := userEvent("message", channel, user, text, ts, threadTS, cid, s.TeamID)
	msg["channel_type"] = chType
	msg["subtype"] = "file_share"
	msg["upload"] = false
	fs := make([]any, len(files))
	for i, f := range files {
		fs[i] = f.JSON()
	}
	msg["files"] = fs
	s.SendEvent(msg)
	return ts
}

// Edit simulates a user editing their message: a message event with subtype
// message_changed. It returns the event_id ("" if the message is unknown).
func (s *Server) Edit(channel, ts, newText string) (eventID string) {
	s.mu.Lock()
	m := s.msgs[channel+"/"+ts]
	if m == nil {
		s.mu.Unlock()
		s.t.Errorf("fakeslack: Edit: no message %s in %s", ts, channel)
		return ""
	}
	old := m.Text
	m.Text = newText
	author, thread, cid, chType := m.author, m.ThreadTS, m.clientID, s.channels[channel]
	now := s.nextTS()
	s.mu.Unlock()
	cur := userEvent("message", channel, author, newText, ts, thread, cid, s.TeamID)
	delete(cur, "event_ts")
	delete(cur, "channel")
	cur["edited"] = map[string]any{"user": author, "ts": now}
	prev := userEvent("message", channel, author, old, ts, thread, cid, s.TeamID)
	delete(prev, "event_ts")
	delete(prev, "channel")
	return s.SendEvent(map[string]any{
		"type": "message", "subtype": "message_changed", "hidden": true, "channel": channel,
		"channel_type": chType, "ts": now, "event_ts": now, "message": cur, "previous_message": prev,
	})
}

// botMessageJSON is the "message" object Slack returns for a bot post; s.mu must be held.
func (s *Server) botMessageJSON(m *message) map[string]any {
	out := map[string]any{
		"type": "message", "user": s.BotUserID, "bot_id": s.BotID, "app_id": s.AppID,
		"text": m.Text, "ts": m.TS, "team": s.TeamID,
		"bot_profile": map[string]any{"id": s.BotID, "app_id": s.AppID, "name": "deerflow", "team_id": s.TeamID},
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = json.RawMessage(m.Blocks)
	}
	if len(m.Files) > 0 {
		fs := make([]any, len(m.Files))
		for i, f := range m.Files {
			fs[i] = s.fileJSON(s.files[f.ID])
		}
		out["files"] = fs
		out["subtype"] = "file_share"
		out["upload"] = true
	}
	return out
}

// echo returns a func sending the bot's own post (or edit, when edited is
// true) back as a message event, like real Slack; s.mu must be held.
func (s *Server) echo(m *message, edited bool) func() {
	if !s.EchoBotMessages || m.Ephemeral {
		return func() {}
	}
	msg := s.botMessageJSON(m)
	ch, chType := m.Channel, s.channels[m.Channel]
	var ev map[string]any
	if edited {
		now := s.nextTS()
		msg["edited"] = map[string]any{"user": s.BotUserID, "ts": now}
		ev = map[string]any{"type": "message", "subtype": "message_changed", "hidden": true,
			"channel": ch, "channel_type": chType, "ts": now, "event_ts": now, "message": msg}
	} else {
		ev = msg
		ev["channel"], ev["channel_type"], ev["event_ts"] = ch, chType, m.TS
	}
	return func() { s.SendEvent(ev) }
}

// SlashCommand sends a slash_commands envelope, as Slack does when user
// types "command text" in channel, and returns its envelope_id ("" when
// the app did not register command, see SetApp). Like Slack's payload
// (docs.slack.dev/interactivity/implementing-slash-commands) it carries
// the channel but never the thread the command was typed in.
func (s *Server) SlashCommand(channel, user, command, text string) (envelopeID string) {
	s.mu.Lock()
	chType := s.addChannel(channel, "")
	if !s.registered(command) {
		s.mu.Unlock()
		s.logf("the app has no slash command %s; not sent", command)
		return ""
	}
	envelopeID = s.newEnvelopeID()
	trigger := s.newID("13345224609.")
	name := map[string]string{"im": "directmessage", "mpim": "mpdm-" + channel + "-1", "group": "privategroup"}[chType]
	payload := map[string]any{
		"token": "XXYYZZ", "team_id": s.TeamID, "team_domain": "test", "channel_id": channel,
		"channel_name": cmpOr(name, "general"), "user_id": user, "user_name": "user-" + user, "command": command,
		"text": text, "api_app_id": s.AppID, "is_enterprise_install": "false",
		"response_url": "https://hooks.slack.com/commands/" + s.TeamID + "/" + trigger, "trigger_id": trigger,
	}
	s.mu.Unlock()
	data, _ := json.Marshal(map[string]any{
		"envelope_id": envelopeID, "type": "slash_commands", "accepts_response_payload": true, "payload": payload,
	})
	s.send(data, nil)
	return envelopeID
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
