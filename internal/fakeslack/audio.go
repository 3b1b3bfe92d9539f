package fakeslack

import "slices"

// AddAudioClip registers an audio clip a user recorded in Slack (a voice
// note; share it with ShareFile). Like Slack's own it is a file named
// "audio_message.<ext>" with subtype "slack_audio", media_display_type
// "audio", its duration and a waveform; mimetype is what the recording
// is, e.g. "audio/webm" (filetype "webm") from a browser or "audio/mp4"
// (filetype "m4a" when ext is "m4a") from a phone. The bytes download from
// url_private(_download) with the bot token, like any shared file.
func (s *Server) AddAudioClip(id, mimetype, ext string, data []byte, durationMs int) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := "audio_message." + ext
	f := &fileRec{id: id, name: name, title: "Audio clip", length: len(data), data: data,
		mimetype: mimetype, uploaded: true, completed: true, user: "U0USER"}
	f.clip = &File{Subtype: "slack_audio", MediaDisplayType: "audio", DurationMs: durationMs,
		AudioWaveSamples: slices.Repeat([]int{40, 80, 100, 70}, 25)}
	s.files[id] = f
	return s.file(f)
}
