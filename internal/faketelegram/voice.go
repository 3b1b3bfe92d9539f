package faketelegram

import "path"

// WithVoice stores data as a voice note (OGG Opus) the user recorded and
// returns m carrying it in "voice", as the Bot API delivers one: file_id,
// file_unique_id, duration in seconds, mime_type "audio/ogg" and
// file_size, no caption unless m has one. getFile and the file download
// then serve data (file_path "voice/file_N.oga", as Telegram names them).
// Push the result with PushMessage: s.PushMessage(s.WithVoice(Private(ann, ""), ogg, 3)).
func (s *Server) WithVoice(m Message, data []byte, seconds int) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.newFile(data, "", "voice", ".oga")
	m.Voice = &Voice{FileID: f.id, FileUniqueID: f.uniqueID, Duration: seconds, MimeType: "audio/ogg", FileSize: len(data)}
	m.Text, m.Entities = "", nil // a voice note has no text, only a caption
	return m
}

// WithAudio stores data as an audio file (music, a recording sent as a
// file to play) named name, of MIME type mimeType, and returns m carrying
// it in "audio" as the Bot API delivers one. getFile and the download
// serve data (file_path "music/file_N.<ext>").
func (s *Server) WithAudio(m Message, data []byte, name, mimeType string, seconds int) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.newFile(data, "", "music", path.Ext(name))
	f.name = name
	m.Audio = &Audio{FileID: f.id, FileUniqueID: f.uniqueID, Duration: seconds, FileName: name, MimeType: mimeType, FileSize: len(data)}
	m.Text, m.Entities = "", nil
	return m
}
