package faketelegram_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/go-telegram/bot"

	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestVoiceAndAudio: a voice note and an audio file reach the real client
// shaped as the Bot API delivers them, and getFile plus the download link
// serve their bytes.
func TestVoiceAndAudio(t *testing.T) {
	s := faketelegram.New(t, token)
	b, got := newBot(t, s)
	start(t, b)
	ctx := context.Background()
	ogg := []byte("OggS voice bytes")
	in := faketelegram.Private(ann, "ignored")
	in.Caption = "transcribe this"
	s.PushMessage(s.WithVoice(in, ogg, 3))
	m := receive(t, got).Message
	v := m.Voice
	if v == nil || v.FileID == "" || v.FileUniqueID == "" || v.Duration != 3 || v.MimeType != "audio/ogg" ||
		v.FileSize != int64(len(ogg)) || m.Text != "" || m.Caption != "transcribe this" {
		t.Fatalf("voice message = %+v (voice %+v)", m, v)
	}
	f, err := b.GetFile(ctx, &bot.GetFileParams{FileID: v.FileID})
	if err != nil || f.FilePath == "" || f.FileSize != int64(len(ogg)) {
		t.Fatalf("getFile = %+v, %v", f, err)
	}
	if data := download(t, b.FileDownloadLink(f)); !bytes.Equal(data, ogg) {
		t.Fatalf("downloaded %q", data)
	}

	mp3 := []byte("ID3 audio bytes")
	s.PushMessage(s.WithAudio(faketelegram.Private(ann, ""), mp3, "talk.mp3", "audio/mpeg", 61))
	m = receive(t, got).Message
	a := m.Audio
	if a == nil || a.FileName != "talk.mp3" || a.MimeType != "audio/mpeg" || a.Duration != 61 || a.FileSize != int64(len(mp3)) || m.Voice != nil {
		t.Fatalf("audio message = %+v (audio %+v)", m, a)
	}
	f, err = b.GetFile(ctx, &bot.GetFileParams{FileID: a.FileID})
	if err != nil {
		t.Fatal(err)
	}
	if data := download(t, b.FileDownloadLink(f)); !bytes.Equal(data, mp3) {
		t.Fatalf("downloaded %q", data)
	}
}
