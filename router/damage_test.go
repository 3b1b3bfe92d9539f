package router

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/storetest"
)

// TestRecoverSkipsDamagedChats: a page of the chat → thread map is
// overwritten while two messages wait in the intake queue. Recover does not
// fail: the damaged chat is told its conversation is damaged, the other's
// message runs, and neither is replayed by the next Recover.
func TestRecoverSkipsDamagedChats(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(tx *store.Tx) error {
		for i := range 300 { // pages of chats of their own
			key := bus.ChatKey("plat", fmt.Sprintf("dmg-%03d-%s", i, strings.Repeat("c", 60)), "")
			if err := tx.SetChatThread(key, fmt.Sprintf("th-%03d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := storetest.DamageBucket(path, "chats", "plat:dmg-")
	if err != nil {
		t.Fatal(err)
	}
	damaged := strings.TrimPrefix(keys[0], "plat:")
	queue(t, path, &bus.Inbound{Channel: "plat", ChatID: damaged, UserID: "u1", Text: "lost"},
		&bus.Inbound{Channel: "plat", ChatID: "fine", UserID: "u2", Text: "kept"})

	ctx := context.Background()
	for round := range 2 {
		b, st := openBus(t, path, echoModel{})
		ch := newEditChannel()
		b.Register(ch)
		if _, err := b.recoverAll(ctx); err != nil {
			t.Fatalf("recover (round %d): %v", round, err)
		}
		b.WaitIdle(ctx)
		b.shutdown(ctx, 0, agent.ErrStopped)
		st.Close()
		got := strings.Join(ch.log, "\n")
		if round == 0 && (!strings.Contains(got, DamagedChatText) || !strings.Contains(got, "you said: kept")) {
			t.Errorf("after the first recover:\n%s", got)
		}
		if round == 1 && got != "" {
			t.Errorf("the second recover replayed:\n%s", got)
		}
	}

	// A new message in the damaged chat is answered with the notice and
	// taken (not refused, which would have the platform deliver it again).
	b, st := openBus(t, path, echoModel{})
	defer st.Close()
	ch := newEditChannel()
	b.Register(ch)
	for _, text := range []string{"again", "/new"} {
		if err := b.Publish(ctx, &bus.Inbound{Channel: "plat", ChatID: damaged, UserID: "u1", Text: text}); err != nil {
			t.Errorf("publish %q in the damaged chat: %v", text, err)
		}
	}
	b.WaitIdle(ctx)
	if got := strings.Join(ch.log, "\n"); strings.Count(got, DamagedChatText) != 2 {
		t.Errorf("the damaged chat was not told twice:\n%s", got)
	}
}

// queue stores messages in the intake queue, as accepted ones not yet run.
func queue(t *testing.T, path string, ins ...*bus.Inbound) {
	t.Helper()
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Update(func(tx *store.Tx) error {
		for _, in := range ins {
			data, err := json.Marshal(in)
			if err != nil {
				return err
			}
			if _, err := tx.PutInbound(data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
