package router

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// TestChatStrategies: a chat message joins its conversation's queue
// (enqueue) and is answered in order; over the conversation's cap it is
// refused with a sentence naming /stop and is not stored (reject); /stop
// stops the running reply and drops the waiting ones (interrupt) — the
// runner's strategies as a person in a chat meets them.
func TestChatStrategies(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := &stepModel{step: make(chan string)}
	ag, err := agent.New(agent.Options{Store: st, Models: []agent.ModelRef{{Name: "m", ID: "m", Model: m}}, Tools: tools.NewRegistry(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := runner.New(runner.Options{Store: st, Logger: log, MaxQueued: 2, Stop: ag.StopAll})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{Store: st, Agent: ag, Runner: rn, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rn.Start()
	ch := newEditChannel()
	b.Register(ch)
	ctx := context.Background()
	say := func(text string) {
		t.Helper()
		if err := b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1", UserID: "u1", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	say("first")
	m.step <- "one"
	ch.waitText(t, "m1", "one")
	say("second")
	say("third")
	say("fourth") // over the cap of 2 waiting
	if q := rn.Conv("plat:c1"); q.Waiting != 2 {
		t.Fatalf("waiting = %d, want 2", q.Waiting)
	}
	stored := 0
	st.View(func(tx *store.Tx) error {
		return tx.QueuedRuns(func(uint64, []byte) error { stored++; return nil })
	})
	if stored != 2 {
		t.Errorf("%d runs stored, want the 2 waiting (the refused one is not kept)", stored)
	}
	say("/stop")
	b.WaitIdle(ctx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var replies []string
	for _, l := range ch.log {
		if strings.HasPrefix(l, "send ") && !strings.HasPrefix(l, "send m1 ") {
			replies = append(replies, l[strings.Index(l, ": ")+2:])
		}
	}
	want := []string{
		"Queued: I'll answer this when I'm done with the current message (1 waiting).",
		"Queued: I'll answer this when I'm done with the current message (2 waiting).",
		"I'm busy: 2 messages already wait in this conversation, so I didn't take this one. Send it again once I've caught up, or /stop to cancel the current work.",
		"Dropped 2 waiting message(s).",
	}
	if diff := cmp.Diff(want, replies); diff != "" {
		t.Errorf("replies (-want +got):\n%s\nlog:\n%s", diff, strings.Join(ch.log, "\n"))
	}
	if got := ch.texts["m1"]; got != "one\n\nStopped." {
		t.Errorf("the stopped reply = %q", got)
	}
}
