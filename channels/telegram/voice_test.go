package telegram

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/internal/testutil"
)

var ignoreOpen = cmpopts.IgnoreFields(bus.Attachment{}, "Open")

// voiceUpdate is a caption-less voice note as the Bot API delivers it
// (Message.voice: file_id, file_unique_id, duration, mime_type, file_size).
const voiceUpdate = `{"update_id":9001,"message":{"message_id":314,"date":1700000000,
 "from":{"id":12345,"is_bot":false,"first_name":"Ann","username":"ann","language_code":"en"},
 "chat":{"id":12345,"first_name":"Ann","username":"ann","type":"private"},
 "voice":{"duration":4,"mime_type":"audio/ogg","file_id":"AwACAgIAAxkBAAIBOmVoice","file_unique_id":"AgADxyz","file_size":9120}}}`

// TestInboundVoiceAndAudio: a voice note (with or without caption), an
// audio file and an audio document each become one attachment with its
// MIME type; a voice note is marked Voice, and is no longer dropped for
// having no text.
func TestInboundVoiceAndAudio(t *testing.T) {
	c := pollingChannel(t, "http://127.0.0.1:1") // never contacted
	decode := func(s string) *models.Update {
		var u models.Update
		if err := json.Unmarshal([]byte(s), &u); err != nil {
			t.Fatal(err)
		}
		return &u
	}
	u := decode(voiceUpdate)
	in := c.inbound(u)
	if in == nil {
		t.Fatal("a caption-less voice note was dropped")
	}
	want := []bus.Attachment{{Name: "voice_314.ogg", Size: 9120, Ref: "AwACAgIAAxkBAAIBOmVoice", MIME: "audio/ogg", Voice: true}}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" || in.Text != "" {
		t.Errorf("voice note: text %q, files (-want +got):\n%s", in.Text, diff)
	}

	m := u.Message
	m.Caption, m.Voice.MimeType = "in German please", ""
	in = c.inbound(u)
	want[0].MIME = "audio/ogg" // Telegram's format when it names none
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" || in.Text != "in German please" {
		t.Errorf("voice note with caption: text %q, files (-want +got):\n%s", in.Text, diff)
	}

	m.Caption, m.Voice = "", nil
	m.Audio = &models.Audio{FileID: "CQACAudio", FileUniqueID: "u2", Duration: 200, Performer: "X", Title: "Song",
		MimeType: "audio/mpeg", FileSize: 4 << 20}
	in = c.inbound(u)
	want = []bus.Attachment{{Name: "audio_314.mp3", Size: 4 << 20, Ref: "CQACAudio", MIME: "audio/mpeg"}}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" {
		t.Errorf("audio without a name (-want +got):\n%s", diff)
	}
	m.Audio.FileName, m.Audio.MimeType = "talk.m4a", "audio/mp4"
	if in = c.inbound(u); in.Files[0].Name != "talk.m4a" || in.Files[0].MIME != "audio/mp4" || in.Files[0].Voice || !in.Files[0].Audio() {
		t.Errorf("named audio: %+v", in.Files)
	}

	m.Audio = nil
	m.Document = &models.Document{FileID: "BQADoc", FileName: "memo.wav", MimeType: "audio/x-wav", FileSize: 100}
	want = []bus.Attachment{{Name: "memo.wav", Size: 100, Ref: "BQADoc", MIME: "audio/x-wav"}}
	if in = c.inbound(u); cmp.Diff(want, in.Files, ignoreOpen) != "" || !in.Files[0].Audio() {
		t.Errorf("audio document: %+v", in.Files)
	}
}

// TestVoiceThroughFake: a voice note pushed through the fake Bot API
// reaches the publisher, and its attachment opens to the recorded bytes.
func TestVoiceThroughFake(t *testing.T) {
	fake := faketelegram.New(t, "123:secret")
	c, err := New(Options{Token: fake.Token, APIURL: fake.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
	stop := started(t, c, pub)
	defer stop()

	voice := fakeopenai.VoiceNote()
	ann := faketelegram.User{ID: 501, FirstName: "Ann"}
	u := fake.PushMessage(fake.WithVoice(faketelegram.Private(ann, ""), voice, 1))
	in := testutil.Wait(t, pub.Got, "the voice note")
	want := []bus.Attachment{{Name: "voice_" + itoa(u.Message.MessageID) + ".ogg", Size: int64(len(voice)),
		Ref: u.Message.Voice.FileID, MIME: "audio/ogg", Voice: true}}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" || in.Text != "" {
		t.Fatalf("text %q, files (-want +got):\n%s", in.Text, diff)
	}
	r, err := in.Files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != string(voice) {
		t.Fatalf("downloaded %d bytes (%v), want the %d recorded", len(got), err, len(voice))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
