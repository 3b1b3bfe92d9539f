package outbox

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels/slack"
	"github.com/deerflow/deerflow/internal/fakeslack"
)

// TestSlackOutageReplayed: an answer sent while Slack's Web API fails is
// kept, not lost; when Slack is back the replay posts it, once, in its
// thread, and the outbox is empty.
func TestSlackOutageReplayed(t *testing.T) {
	sl := fakeslack.New(t)
	sl.AddChannel("C1", "channel")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ch, err := slack.New(slack.Options{BotToken: sl.BotToken, AppToken: sl.AppToken, APIURL: sl.URL + "/api/", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, filepath.Join(t.TempDir(), "deerflow.db"))
	defer st.Close()
	ob := newOutbox(t, st, ch)
	ctx := context.Background()
	sl.FailAlways("chat.postMessage", 200, 0, "fatal_error")
	out := &bus.Outbound{Kind: bus.OutMessage, Channel: "slack", ChatID: "C1", Topic: "1700000000.000100",
		ReplyTo: "1700000000.000100", Text: "The answer.", Final: true}
	if _, err := ob.Send(ctx, "slack:C1:1700000000.000100", out); err == nil {
		t.Fatal("a send during the outage reported success")
	}
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("%d sends kept during the outage, want 1", n)
	}
	sl.ClearFailures("chat.postMessage")
	if n := ob.Replay(ctx); n != 1 {
		t.Fatalf("replayed %d, want 1", n)
	}
	var got []string
	for _, m := range sl.Messages("C1") {
		got = append(got, m.ThreadTS+" "+m.Text)
	}
	if len(got) != 1 || got[0] != "1700000000.000100 The answer." {
		t.Errorf("Slack shows %q", got)
	}
	if n := outboxLen(t, st); n != 0 {
		t.Errorf("%d sends still kept after the replay", n)
	}
}
