package slack

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/slack-go/slack/slackevents"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/testutil"
)

var ignoreOpen = cmpopts.IgnoreFields(bus.Attachment{}, "Open")

// clipPayload is a file_share message event carrying an audio clip
// recorded in Slack (subtype slack_audio), an uploaded MP3, a clip that
// Slack labels video/mp4, and a PDF.
const clipPayload = `{"token":"t","team_id":"T1","type":"event_callback","event_id":"Ev1","event":{
 "type":"message","subtype":"file_share","channel":"D1","channel_type":"im","user":"U1","text":"","ts":"1700000000.000100","upload":false,
 "files":[
  {"id":"F0CLIP","name":"audio_message.webm","title":"Audio clip","mimetype":"audio/webm","filetype":"webm","pretty_type":"WebM",
   "subtype":"slack_audio","media_display_type":"audio","duration_ms":4200,"size":18000,"mode":"hosted",
   "url_private":"https://files.slack.com/files-pri/T1-F0CLIP/audio_message.webm",
   "url_private_download":"https://files.slack.com/files-pri/T1-F0CLIP/download/audio_message.webm",
   "aac":"https://files.slack.com/files-tmb/T1-F0CLIP-x/audio_message_audio.mp4",
   "audio_wave_samples":[10,40,80],"transcription":{"status":"processing"}},
  {"id":"F0MP3","name":"song.mp3","mimetype":"audio/mpeg","filetype":"mp3","size":5000000,"mode":"hosted",
   "url_private_download":"https://files.slack.com/files-pri/T1-F0MP3/download/song.mp3"},
  {"id":"F0VID","name":"audio_message.mp4","mimetype":"video/mp4","filetype":"mp4","subtype":"slack_audio","size":9000,
   "url_private_download":"https://files.slack.com/files-pri/T1-F0VID/download/audio_message.mp4"},
  {"id":"F0PDF","name":"a.pdf","mimetype":"application/pdf","filetype":"pdf","size":10,
   "url_private_download":"https://files.slack.com/files-pri/T1-F0PDF/download/a.pdf"}]}}`

// TestInboundAudioClip: Slack's audio clips are voice notes (Voice, an
// audio MIME type even when Slack says video/*); other files keep their
// MIME type; a message of only a clip is not dropped.
func TestInboundAudioClip(t *testing.T) {
	c, err := New(Options{BotToken: "xoxb-t", AppToken: "xapp-t", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c.botUser = "UBOT"
	ev, err := slackevents.ParseEvent(json.RawMessage(clipPayload), slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatal(err)
	}
	in, files := c.inbound(ev)
	if in == nil || !files || in.Text != "" {
		t.Fatalf("inbound = %+v, %v", in, files)
	}
	dl := "https://files.slack.com/files-pri/T1-"
	want := []bus.Attachment{
		{Name: "audio_message.webm", Size: 18000, Ref: dl + "F0CLIP/download/audio_message.webm", MIME: "audio/webm", Voice: true},
		{Name: "song.mp3", Size: 5000000, Ref: dl + "F0MP3/download/song.mp3", MIME: "audio/mpeg"},
		{Name: "audio_message.mp4", Size: 9000, Ref: dl + "F0VID/download/audio_message.mp4", MIME: "audio/mp4", Voice: true},
		{Name: "a.pdf", Size: 10, Ref: dl + "F0PDF/download/a.pdf", MIME: "application/pdf"},
	}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for i, a := range in.Files {
		if a.Audio() != (i < 3) {
			t.Errorf("%s: Audio() = %v", a.Name, a.Audio())
		}
	}
}

// TestAudioClipThroughFake: a clip shared through the fake Slack reaches
// the publisher as a voice note, and opens to the recorded bytes.
func TestAudioClipThroughFake(t *testing.T) {
	fake := fakeslack.New(t)
	c, err := New(Options{BotToken: fake.BotToken, AppToken: fake.AppToken, APIURL: fake.URL + "/api/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub) }()
	defer func() { cancel(); testutil.Wait(t, done, "Start to return") }()

	voice := fakeopenai.VoiceNote()
	f := fake.AddAudioClip("F0CLIP", "audio/webm", "webm", voice, 1000)
	fake.ShareFile("D0USER", "im", "U0USER", "", "", f)
	in := testutil.Wait(t, pub.Got, "the clip")
	want := []bus.Attachment{{Name: "audio_message.webm", Size: int64(len(voice)), Ref: f.URLPrivateDownload, MIME: "audio/webm", Voice: true}}
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
