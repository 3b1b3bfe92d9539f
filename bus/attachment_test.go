package bus

import "testing"

func TestAttachmentAudio(t *testing.T) {
	for _, tt := range []struct {
		a    Attachment
		want bool
	}{
		{Attachment{Name: "voice_1", Voice: true}, true},
		{Attachment{Name: "x.bin", MIME: "audio/ogg"}, true},
		{Attachment{Name: "x", MIME: "Audio/MP4"}, true},
		{Attachment{Name: "memo.OGG"}, true},
		{Attachment{Name: "voice_k.opus"}, true},
		{Attachment{Name: "a.oga"}, true},
		{Attachment{Name: "a.mp3"}, true},
		{Attachment{Name: "a.m4a"}, true},
		{Attachment{Name: "a.wav"}, true},
		{Attachment{Name: "a.flac"}, true},
		{Attachment{Name: "a.aac"}, true},
		{Attachment{Name: "a.amr"}, true},
		{Attachment{Name: "a.mpga"}, true},
		{Attachment{Name: "a.mpeg"}, true},
		{Attachment{Name: "audio_message.webm", MIME: "audio/webm"}, true},
		{Attachment{Name: "screen.webm", MIME: "video/webm"}, false},
		{Attachment{Name: "screen.webm"}, false},
		{Attachment{Name: "clip.mp4"}, false},
		{Attachment{Name: "report.pdf", MIME: "application/pdf"}, false},
		{Attachment{Name: "ogg"}, false},
	} {
		if got := tt.a.Audio(); got != tt.want {
			t.Errorf("%+v.Audio() = %v, want %v", tt.a, got, tt.want)
		}
	}
}
