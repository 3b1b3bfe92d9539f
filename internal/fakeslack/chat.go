package fakeslack

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Slack limits (PROTOCOLS.md §7).
const (
	maxTextRunes     = 40000 // longer text is truncated with warning message_truncated
	maxBlocks        = 50
	maxSectionRunes  = 3000
	maxHeaderRunes   = 150
	maxMarkdownRunes = 12000 // cumulative over all markdown blocks of a message
)

// validateBlocks checks a blocks JSON array like Slack does. It returns the
// raw blocks (nil when empty) or a Slack error code and a detail message.
func validateBlocks(raw string) (json.RawMessage, string, string) {
	if raw == "" {
		return nil, "", ""
	}
	var arr []map[string]any
	if err := json.Unmarshal([]byte(raw), &arr); err != nil {
		return nil, "invalid_blocks_format", "blocks must be a JSON array of objects: " + err.Error()
	}
	if len(arr) == 0 {
		return nil, "", ""
	}
	if len(arr) > maxBlocks {
		return nil, "invalid_blocks", fmt.Sprintf("no more than %d items allowed [json-pointer:/blocks]", maxBlocks)
	}
	md := 0
	ids := map[string]bool{}
	for i, b := range arr {
		typ, _ := b["type"].(string)
		textObj, _ := b["text"].(map[string]any)
		objText, _ := textObj["text"].(string)
		n := utf8.RuneCountInString(objText)
		ptr := fmt.Sprintf("[json-pointer:/blocks/%d/text/text]", i)
		switch typ {
		case "":
			return nil, "invalid_blocks", fmt.Sprintf("missing required field: type [json-pointer:/blocks/%d]", i)
		case "section":
			if n > maxSectionRunes {
				return nil, "invalid_blocks", fmt.Sprintf("must be less than %d characters %s", maxSectionRunes+1, ptr)
			}
		case "header":
			if n > maxHeaderRunes {
				return nil, "invalid_blocks", fmt.Sprintf("must be less than %d characters %s", maxHeaderRunes+1, ptr)
			}
		case "actions":
			if code, msg := validateActions(b, i, ids); code != "" {
				return nil, code, msg
			}
		case "markdown":
			t, _ := b["text"].(string)
			md += utf8.RuneCountInString(t)
			if md > maxMarkdownRunes {
				return nil, "invalid_blocks", fmt.Sprintf("markdown blocks exceed %d characters in total [json-pointer:/blocks/%d/text]", maxMarkdownRunes, i)
			}
		}
	}
	return json.RawMessage(raw), "", ""
}

// content validates text and blocks of a post/update. It returns the
// (possibly truncated) text, blocks, whether text was truncated, or an error.
func (q *req) content() (text string, blocks json.RawMessage, truncated bool, errCode string) {
	text = q.get("text")
	blocks, code, detail := validateBlocks(q.get("blocks"))
	if code != "" {
		q.detail = detail
		return "", nil, false, code
	}
	if text == "" && blocks == nil && q.get("attachments") == "" {
		return "", nil, false, "no_text"
	}
	if utf8.RuneCountInString(text) > maxTextRunes {
		text = string([]rune(text)[:maxTextRunes])
		truncated = true
	}
	return text, blocks, truncated, ""
}

func warnTruncated(resp map[string]any, truncated bool) map[string]any {
	if truncated {
		resp["warning"] = "message_truncated"
		resp["response_metadata"] = map[string]any{"warnings": []string{"message_truncated"}}
	}
	return resp
}

func (s *Server) knownChannel(ch string) bool {
	_, ok := s.channels[ch]
	return ok
}

// addPosted stores a new bot message; s.mu must be held.
func (s *Server) addPosted(p Posted) *message {
	p.TS = s.nextTS()
	m := &message{Posted: p, author: s.BotUserID, bot: true}
	if !p.Ephemeral {
		s.msgs[p.Channel+"/"+p.TS] = m
	}
	s.posted[p.Channel] = append(s.posted[p.Channel], m)
	return m
}

func (s *Server) postMessage(q *req) (map[string]any, string) {
	ch := q.get("channel")
	if !s.knownChannel(ch) {
		return nil, "channel_not_found"
	}
	text, blocks, truncated, e := q.content()
	if e != "" {
		return nil, e
	}
	m := s.addPosted(Posted{Channel: ch, ThreadTS: q.get("thread_ts"), Text: text, Blocks: blocks})
	q.after = append(q.after, s.echo(m, false))
	return warnTruncated(map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": s.botMessageJSON(m)}, truncated), ""
}

func (s *Server) postEphemeral(q *req) (map[string]any, string) {
	ch, user := q.get("channel"), q.get("user")
	if !s.knownChannel(ch) {
		return nil, "channel_not_found"
	}
	if user == "" {
		return nil, "user_not_in_channel"
	}
	text, blocks, _, e := q.content()
	if e != "" {
		return nil, e
	}
	m := s.addPosted(Posted{Channel: ch, ThreadTS: q.get("thread_ts"), Text: text, Blocks: blocks, Ephemeral: true, User: user})
	return map[string]any{"ok": true, "message_ts": m.TS}, ""
}

// botMessage finds a message of the bot for update/delete.
func (s *Server) botMessage(q *req, notMine string) (*message, string) {
	ch, ts := q.get("channel"), q.get("ts")
	if !s.knownChannel(ch) {
		return nil, "channel_not_found"
	}
	m := s.msgs[ch+"/"+ts]
	if m == nil || m.Deleted {
		return nil, "message_not_found"
	}
	if !m.bot {
		return nil, notMine
	}
	return m, ""
}

func (s *Server) update(q *req) (map[string]any, string) {
	m, e := s.botMessage(q, "cant_update_message")
	if e != "" {
		return nil, e
	}
	text, blocks, truncated, e := q.content()
	if e != "" {
		return nil, e
	}
	m.Text, m.Blocks = text, blocks
	m.Updates++
	q.after = append(q.after, s.echo(m, true))
	return warnTruncated(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": text,
		"message": s.botMessageJSON(m)}, truncated), ""
}

func (s *Server) deleteMessage(q *req) (map[string]any, string) {
	m, e := s.botMessage(q, "cant_delete_message")
	if e != "" {
		return nil, e
	}
	m.Deleted = true
	delete(s.msgs, m.Channel+"/"+m.TS)
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS}, ""
}
