package lark

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
)

var ignoreOpen = cmpopts.IgnoreFields(bus.Attachment{}, "Open")

// audioEvent is a p2p voice note as Feishu sends it: message_type
// "audio", content {"file_key","duration"} (milliseconds), no file name.
const audioEvent = `{"schema":"2.0","header":{"event_id":"ev_audio","event_type":"im.message.receive_v1","create_time":"1700000000000","token":"","app_id":"cli_x","tenant_key":"tk"},
 "event":{"sender":{"sender_id":{"union_id":"on_1","user_id":"u1","open_id":"ou_1"},"sender_type":"user","tenant_key":"tk"},
  "message":{"message_id":"om_voice","root_id":"","parent_id":"","create_time":"1700000000000","update_time":"1700000000000",
   "chat_id":"oc_1","thread_id":"","chat_type":"p2p","message_type":"audio",
   "content":"{\"file_key\":\"file_v3_00ab_voice\",\"duration\":2300}"}}}`

// receive decodes raw with the SDK's dispatcher, as the long connection
// does, and returns the bus message made of it.
func receive(t *testing.T, c *Channel, raw string) *bus.Inbound {
	t.Helper()
	var in *bus.Inbound
	d := dispatcher.NewEventDispatcher("", "").OnP2MessageReceiveV1(func(_ context.Context, e *larkim.P2MessageReceiveV1) error {
		in = c.inbound(e)
		return nil
	})
	if _, err := d.Do(context.Background(), []byte(raw)); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestInboundAudio: a voice note becomes one Voice attachment, an Opus
// "file" resource named after its key; a video ("media") stays a file.
func TestInboundAudio(t *testing.T) {
	c := fuzzChannel(t, nil)
	in := receive(t, c, audioEvent)
	if in == nil || in.Text != "" {
		t.Fatalf("voice note: %+v", in)
	}
	want := []bus.Attachment{{Name: "voice_file_v3_00ab_voice.opus", Size: -1, Ref: "om_voice|file_v3_00ab_voice|file", MIME: "audio/opus", Voice: true}}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	media := `"message_type":"media","content":"{\"file_key\":\"fk_v\",\"image_key\":\"img_t\",\"file_name\":\"clip.mp4\",\"duration\":3000}"`
	in = receive(t, c, strings.ReplaceAll(audioEvent, `"message_type":"audio",
   "content":"{\"file_key\":\"file_v3_00ab_voice\",\"duration\":2300}"`, media))
	want = []bus.Attachment{{Name: "clip.mp4", Size: -1, Ref: "om_voice|fk_v|file"}}
	if diff := cmp.Diff(want, in.Files, ignoreOpen); diff != "" {
		t.Errorf("media (-want +got):\n%s", diff)
	}
	if in := receive(t, c, strings.ReplaceAll(audioEvent, `file_v3_00ab_voice`, ``)); in != nil {
		t.Errorf("audio without a file_key: %+v", in)
	}
}

// TestVoiceThroughFake: a voice note sent through the fake Lark reaches
// the publisher, and opens to the recorded bytes (GET …/resources/:key?type=file).
func TestVoiceThroughFake(t *testing.T) {
	fake := fakelark.New(t)
	c, err := New(Options{AppID: fake.AppID, AppSecret: fake.AppSecret, Domain: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub) }()
	defer func() { cancel(); testutil.Wait(t, done, "Start to return") }()

	voice := fakeopenai.VoiceNote()
	_, key := fake.SendVoice(fakelark.MessageEvent{MessageID: "om_v1", ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_user"}, voice, 1200*time.Millisecond)
	in := testutil.Wait(t, pub.Got, "the voice note")
	want := []bus.Attachment{{Name: "voice_" + key + ".opus", Size: -1, Ref: "om_v1|" + key + "|file", MIME: "audio/opus", Voice: true}}
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
