package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

// requestText is everything the model received in one request, in order.
func requestText(r fakeopenai.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		fmt.Fprintf(&b, "[%s]\n%s\n", m.Role, m.Content)
	}
	return b.String()
}

// TestSummaryAndTitlePayloadsStayInert pushes each classic payload through
// a thread's stored summary (into the lead model's request) and through a
// first message (into the title model's request), and compares what the
// fake model server received with what it receives for harmless text.
func TestSummaryAndTitlePayloadsStayInert(t *testing.T) {
	a, st, fake := fakeAgent(t, func(o *Options) { o.TitleModel = &o.Models[0] })
	fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "Trip plans"} })
	// through runs the payload through both paths, each on a thread of
	// its own, and returns the lead request that carries the summary and
	// the title request.
	through := func(id, payload string) (lead, title string) {
		t.Helper()
		n := len(fake.Requests())
		collect(a, context.Background(), Input{ThreadID: id + "_title", Text: "Plan a trip. " + payload})
		collect(a, context.Background(), Input{ThreadID: id, Text: "Plan a trip."})
		a.bg.Wait()
		err := st.Update(func(tx *store.Tx) error {
			th, err := tx.Thread(id)
			if err != nil {
				return err
			}
			th.Summary = "They plan a trip. " + payload
			return tx.PutThread(th)
		})
		if err != nil {
			t.Fatal(err)
		}
		collect(a, context.Background(), Input{ThreadID: id, Text: "and now?"})
		for _, r := range fake.Requests()[n:] {
			switch {
			case strings.Contains(r.Messages[0].Content, "Give this conversation a title") && strings.Contains(r.Last().Content, "Plan a trip. "):
				title = requestText(r)
			case len(r.Messages) > 1 && strings.Contains(r.Messages[1].Content, "<conversation_summary>"):
				lead = requestText(r)
			}
		}
		return lead, title
	}
	baseLead, baseTitle := through("th_base", "nothing special")
	if baseLead == "" || baseTitle == "" {
		t.Fatalf("the harmless run made no summary request (%t) or title request (%t)", baseLead != "", baseTitle != "")
	}
	i := 0
	for name, p := range testutil.Payloads {
		i++
		lead, title := through(fmt.Sprintf("th_%d", i), p)
		testutil.AssertInert(t, name+" (summary)", baseLead, lead, p)
		testutil.AssertInert(t, name+" (title request)", baseTitle, title, p)
	}
}
