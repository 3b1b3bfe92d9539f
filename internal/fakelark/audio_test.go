package fakelark_test

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/deerflow/deerflow/internal/fakelark"
)

// TestVoiceNote: a voice note reaches the real SDK's ws client as an
// "audio" message with {"file_key","duration"} content, and its recording
// downloads through the SDK as the message's "file" resource.
func TestVoiceNote(t *testing.T) {
	f := fakelark.New(t)
	rec := startWS(t, f, nil)
	data := []byte("OggS opus voice")
	id, key := f.SendVoice(fakelark.MessageEvent{ChatID: "oc_p", ChatType: "p2p", SenderOpenID: "ou_a", MessageID: "om_v"}, data, 2300*time.Millisecond)
	if !f.WaitFor(func() bool { return len(rec.list()) == 1 }) {
		t.Fatal("no event")
	}
	e := rec.list()[0]
	m := e.Event.Message
	var content struct {
		FileKey  string `json:"file_key"`
		Duration int    `json:"duration"`
	}
	if err := json.Unmarshal([]byte(*m.Content), &content); err != nil || e.EventV2Base.Header.EventID != id ||
		*m.MessageType != "audio" || *m.MessageId != "om_v" || content.FileKey != key || content.Duration != 2300 {
		t.Fatalf("event decoded wrong (%v): %s", err, larkcore.Prettify(e))
	}
	cli := restClient(f)
	r, err := cli.Im.V1.MessageResource.Get(ctx, larkim.NewGetMessageResourceReqBuilder().MessageId("om_v").FileKey(key).Type("file").Build())
	if err != nil || !r.Success() || r.File == nil {
		t.Fatalf("download: %v %+v", err, r)
	}
	if b, _ := io.ReadAll(r.File); string(b) != string(data) {
		t.Fatalf("downloaded %q", b)
	}
}
