package fakelark

import (
	"encoding/json"
	"fmt"
	"time"
)

// Audio builds audio message content as Feishu/Lark sends it for a voice
// note: {"file_key":…,"duration":milliseconds}, with no file name.
func Audio(fileKey string, duration time.Duration) string {
	b, _ := json.Marshal(map[string]any{"file_key": fileKey, "duration": duration.Milliseconds()})
	return string(b)
}

// SendVoice sends m as a voice note (message_type "audio") whose
// recording is data (Opus, as Feishu/Lark records them), downloadable as
// the message's resource with type=file. It returns the event id and the
// file_key it made up.
func (s *Server) SendVoice(m MessageEvent, data []byte, duration time.Duration) (eventID, fileKey string) {
	s.mu.Lock()
	fileKey = fmt.Sprintf("file_v3_voice_%d", s.nextLocked())
	if m.MessageID == "" {
		m.MessageID = fmt.Sprintf("om_in_%d", s.nextLocked())
	}
	s.mu.Unlock()
	s.AddResource(m.MessageID, fileKey, data)
	m.MessageType, m.Content = "audio", Audio(fileKey, duration)
	return s.Send(m), fileKey
}
