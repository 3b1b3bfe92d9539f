package fakeslack

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/slack-go/slack/slackevents"
)

// TestAudioClipShared: an audio clip shared through the fake reaches the
// real slack-go client as Slack sends one (subtype slack_audio, an audio
// mimetype, duration and waveform), and downloads with the bot token.
func TestAudioClipShared(t *testing.T) {
	s := New(t)
	c := newClient(t, s, true)
	c.waitHello()
	data := []byte("OggS fake opus bytes")
	f := s.AddAudioClip("F0CLIP", "audio/webm", "webm", data, 3200)
	s.ShareFile("D1", "im", "U1", "", "", f)
	evt, api := c.nextUser()
	m := api.InnerEvent.Data.(*slackevents.MessageEvent)
	if m.SubType != "file_share" || m.Message == nil || len(m.Message.Files) != 1 {
		t.Fatalf("file_share = %#v", m)
	}
	got := m.Message.Files[0]
	if got.ID != "F0CLIP" || got.Name != "audio_message.webm" || got.Mimetype != "audio/webm" || got.Filetype != "webm" ||
		got.DurationMs != 3200 || got.MediaDisplayType != "audio" || len(got.AudioWaveSamples) == 0 || got.Size != len(data) {
		t.Fatalf("clip decoded as %+v", got)
	}
	// slack-go's File has no subtype; the raw event carries it.
	var raw struct {
		Event struct {
			Files []struct {
				Subtype string `json:"subtype"`
			} `json:"files"`
		} `json:"event"`
	}
	if err := json.Unmarshal(evt.Request.Payload, &raw); err != nil || len(raw.Event.Files) != 1 || raw.Event.Files[0].Subtype != "slack_audio" {
		t.Fatalf("raw event %s (%v)", evt.Request.Payload, err)
	}
	var buf bytes.Buffer
	if err := c.api.GetFile(got.URLPrivateDownload, &buf); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("GetFile = %q %v", buf.Bytes(), err)
	}
}
