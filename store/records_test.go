package store

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/store/internal/schema"
)

func TestChats(t *testing.T) {
	s := newStore(t)
	err := s.Update(func(tx *Tx) error {
		for _, e := range [][2]string{
			{"telegram:42", "t1"}, {"slack:C1:1700.1", "t2"}, {"telegram:42", "t3"}, // remap
		} {
			if err := tx.SetChatThread(e[0], e[1]); err != nil {
				return err
			}
		}
		return tx.SetChatThread("", "t9")
	})
	if err == nil {
		t.Fatal("SetChatThread with an empty key succeeded")
	}
	// The failed Update rolled everything back.
	if _, err := s.ChatThread("telegram:42"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after rollback: %v", err)
	}
	err = s.Update(func(tx *Tx) error {
		if err := tx.SetChatThread("telegram:42", "t1"); err != nil {
			return err
		}
		if err := tx.SetChatThread("telegram:42", "t3"); err != nil {
			return err
		}
		if err := tx.SetChatThread("slack:C1:1700.1", "t2"); err != nil {
			return err
		}
		return tx.SetChatThread("lark:oc_1", "t4")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.DeleteChatThread("lark:oc_1") }); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"telegram:42": "t3", "slack:C1:1700.1": "t2", "lark:oc_1": ""} {
		got, err := s.ChatThread(key)
		if want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("ChatThread(%q) = %q, %v; want ErrNotFound", key, got, err)
			}
		} else if got != want || err != nil {
			t.Errorf("ChatThread(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestBotMessages(t *testing.T) {
	s := newStore(t)
	puts := []struct{ channel, chat, msg, chatKey string }{
		{"telegram", "42", "100", "telegram:42"},
		{"telegram", "42", "101", "telegram:42:7"},
		{"telegram", "4", "2100", "telegram:4"}, // would collide with 42/100 if simply joined
		{"slack", "C1", "1700.000200", "slack:C1:1700.000100"},
		{"a\x00b", "c", "d", "odd:ids"},
	}
	err := s.Update(func(tx *Tx) error {
		for _, p := range puts {
			if err := tx.PutBotMessage(p.channel, p.chat, p.msg, p.chatKey); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range puts {
		if got, err := s.BotMessageChat(p.channel, p.chat, p.msg); got != p.chatKey || err != nil {
			t.Errorf("BotMessageChat(%q, %q, %q) = %q, %v; want %q", p.channel, p.chat, p.msg, got, err, p.chatKey)
		}
	}
	for _, miss := range [][3]string{{"telegram", "42", "102"}, {"telegram", "421", "00"}, {"slack", "C1", "100"}} {
		if _, err := s.BotMessageChat(miss[0], miss[1], miss[2]); !errors.Is(err, ErrNotFound) {
			t.Errorf("BotMessageChat%v: %v, want ErrNotFound", miss, err)
		}
	}
}

func TestThreads(t *testing.T) {
	s := newStore(t)
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	threads := []*Thread{
		{ID: "t1", ChatKey: "telegram:42", Title: "Trip", Model: "gpt-x", Created: now, Updated: now.Add(time.Minute),
			Summary: "they planned a trip", Meta: map[string]string{"lang": "en"}},
		{ID: "t2"},
		{ID: "t3", ChatKey: "slack:C1"},
	}
	err := s.Update(func(tx *Tx) error {
		for _, th := range threads {
			if err := tx.PutThread(th); err != nil {
				return err
			}
		}
		if err := tx.SetChatThread("telegram:42", "t1"); err != nil {
			return err
		}
		if err := tx.AppendMessages("t1", &Message{Role: "user"}, &Message{Role: "assistant"}); err != nil {
			return err
		}
		return tx.AppendMessages("t2", &Message{Role: "user"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range threads {
		got, err := s.Thread(want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Thread(%s) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}

	var ids []string
	err = s.View(func(tx *Tx) error {
		return tx.Threads(func(th *Thread) bool {
			ids = append(ids, th.ID)
			return th.ID != "t2" // stop after t2
		})
	})
	if err != nil || !slices.Equal(ids, []string{"t1", "t2"}) {
		t.Errorf("Threads visited %v, %v", ids, err)
	}

	if err := s.Update(func(tx *Tx) error { return tx.PutThread(&Thread{}) }); err == nil {
		t.Error("PutThread without an id succeeded")
	}

	for range 2 { // deleting twice is fine
		if err := s.Update(func(tx *Tx) error { return tx.DeleteThread("t1") }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Thread("t1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted thread: %v", err)
	}
	if msgs, _ := s.Messages("t1", 0); len(msgs) != 0 {
		t.Errorf("deleted thread still has %d messages", len(msgs))
	}
	if n, _ := s.MessageCount("t1"); n != 0 {
		t.Errorf("deleted thread MessageCount = %d", n)
	}
	if id, err := s.ChatThread("telegram:42"); id != "t1" || err != nil {
		t.Errorf("chat map changed: %q, %v", id, err)
	}
	if n, _ := s.MessageCount("t2"); n != 1 {
		t.Errorf("other thread MessageCount = %d", n)
	}
}

func TestRuns(t *testing.T) {
	s := newStore(t)
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	r1 := &Run{ID: "r1", ThreadID: "t1", ChatKey: "telegram:42", Model: "m", Status: RunRunning,
		Started: start, Turns: 1, PromptTokens: 100, CompletionTokens: 20, FirstSeq: 7}
	r2 := &Run{ID: "r2", ThreadID: "t2", Status: RunRunning, Started: start}
	r3 := &Run{ID: "r3", ThreadID: "t2", Status: RunDone, Started: start, Ended: start.Add(time.Second)}
	put := func(rs ...*Run) {
		t.Helper()
		err := s.Update(func(tx *Tx) error {
			for _, r := range rs {
				if err := tx.PutRun(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put(r1, r2, r3)
	if got, err := s.Run("r1"); err != nil || !reflect.DeepEqual(got, r1) {
		t.Errorf("Run(r1) = %+v, %v", got, err)
	}
	r2b := *r2
	r2b.Status, r2b.Error, r2b.Ended = RunError, "model: 500", start.Add(time.Minute)
	put(&r2b, r1) // a status change, and a rewrite with the same status
	check := func(want map[RunStatus][]string) {
		t.Helper()
		for _, st := range []RunStatus{RunRunning, RunDone, RunError, RunCancelled, RunInterrupted} {
			runs, err := s.RunsWithStatus(st)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range runs {
				if r.Status != st {
					t.Errorf("RunsWithStatus(%s) returned %s with %s", st, r.ID, r.Status)
				}
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, want[st]) {
				t.Errorf("RunsWithStatus(%s) = %v, want %v", st, ids, want[st])
			}
		}
	}
	check(map[RunStatus][]string{RunRunning: {"r1"}, RunDone: {"r3"}, RunError: {"r2"}})
	// The index holds the running runs only: it stays the size of the
	// work under way.
	var indexed []string
	s.View(func(tx *Tx) error {
		return tx.tx.Bucket(schema.RunIndex).ForEach(func(k, _ []byte) error {
			indexed = append(indexed, strings.ReplaceAll(string(k), "\x00", "/"))
			return nil
		})
	})
	if want := []string{"running/r1"}; !slices.Equal(indexed, want) {
		t.Errorf("status index = %q, want %q", indexed, want)
	}
	if got, _ := s.Run("r2"); !reflect.DeepEqual(got, &r2b) {
		t.Errorf("Run(r2) = %+v", got)
	}

	if err := s.Update(func(tx *Tx) error { return tx.DeleteRun("r3") }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.DeleteRun("nope") }); err != nil {
		t.Fatal(err)
	}
	check(map[RunStatus][]string{RunRunning: {"r1"}, RunError: {"r2"}})
	if _, err := s.Run("r3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run: %v", err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.PutRun(&Run{}) }); err == nil {
		t.Error("PutRun without an id succeeded")
	}
}

// A database an older deerflow wrote indexes ended runs too. Those entries
// are left where they are: ended runs are still found once each (by
// reading the runs), the running ones by the index, and deleting a run
// removes its old entry.
func TestRunIndexFromAnOlderVersion(t *testing.T) {
	s := newStore(t)
	done := &Run{ID: "r1", ThreadID: "t1", Status: RunDone}
	live := &Run{ID: "r2", ThreadID: "t1", Status: RunRunning}
	err := s.Update(func(tx *Tx) error {
		if err := tx.PutRun(done); err != nil {
			return err
		}
		if err := tx.PutRun(live); err != nil {
			return err
		}
		// What the older version also wrote.
		return tx.tx.Bucket(schema.RunIndex).Put(schema.RunIndexKey(string(RunDone), "r1"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(st RunStatus) []string {
		runs, err := s.RunsWithStatus(st)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(RunDone); !slices.Equal(got, []string{"r1"}) {
		t.Errorf("done = %v", got)
	}
	if got := ids(RunRunning); !slices.Equal(got, []string{"r2"}) {
		t.Errorf("running = %v", got)
	}
	if err := s.Update(func(tx *Tx) error { return tx.DeleteRun("r1") }); err != nil {
		t.Fatal(err)
	}
	var left []string
	s.View(func(tx *Tx) error {
		return tx.tx.Bucket(schema.RunIndex).ForEach(func(k, _ []byte) error {
			left = append(left, strings.ReplaceAll(string(k), "\x00", "/"))
			return nil
		})
	})
	if want := []string{"running/r2"}; !slices.Equal(left, want) {
		t.Errorf("index after deleting r1 = %q, want %q", left, want)
	}
}
