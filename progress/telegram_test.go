package progress

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels/telegram"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestRenderedOnTelegram drives a run's events through a delivery, the
// outbox and the real Telegram channel into the fake Bot API, and reads
// what a person in the private chat sees: the subagent's reply threaded
// under their message with its outcome, then the answer, rendered from
// Markdown (bold as an entity) and, in a private chat, not quoting them.
func TestRenderedOnTelegram(t *testing.T) {
	tg := faketelegram.New(t, "123456:TEST-token")
	ch, err := telegram.New(telegram.Options{Token: tg.Token, APIURL: tg.URL, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ob, _ := newOutbox(t, ch)
	user := faketelegram.User{ID: 4242, FirstName: "Ann"}
	up := tg.PushMessage(faketelegram.Private(user, "compare the two reports"))
	in := &bus.Inbound{Channel: "telegram", ChatID: strconv.FormatInt(user.ID, 10),
		MessageID: strconv.Itoa(up.Message.MessageID), UserID: "4242"}
	d := New(t.Context(), in, Options{Outbox: ob, Logger: quiet(), RunID: "run_1"})
	defer d.Close()
	ctx := t.Context()

	task := event.Task{ID: "t1", Description: "read report A", Type: "general-purpose", Status: event.TaskRunning, Started: time.Now()}
	d.Handle(ctx, event.TaskStarted{Task: task})
	task.Status, task.Result, task.Duration = event.TaskCompleted, "A says 42.", 3*time.Second
	d.Handle(ctx, event.TaskDone{Task: task})
	d.Handle(ctx, event.Answer{Text: "Both agree: **42**."})
	d.Settle()

	var got []string
	for _, m := range tg.Messages(user.ID) {
		var bold []string
		for _, e := range m.Entities {
			if e.Type == "bold" {
				bold = append(bold, utf16Slice(m.PlainText, e.Offset, e.Length))
			}
		}
		got = append(got, fmt.Sprintf("reply_to=%v %q bold=%q", m.ReplyTo == up.Message.MessageID, m.PlainText, bold))
	}
	want := []string{
		`reply_to=true "✅ read report A · done in 3.0s\n\nA says 42." bold=[]`,
		`reply_to=false "Both agree: 42." bold=["42"]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the chat shows (-want +got):\n%s", diff)
	}
}

// utf16Slice cuts s by UTF-16 offsets, as Telegram's entities count.
func utf16Slice(s string, off, n int) string {
	var b strings.Builder
	pos := 0
	for _, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if pos >= off && pos < off+n {
			b.WriteRune(r)
		}
		pos += w
	}
	return b.String()
}
