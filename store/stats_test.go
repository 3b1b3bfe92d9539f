package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Stats counts commits: one per Update, one per shared Batch commit, none
// for a read or a write that rolls back.
func TestStatsCommits(t *testing.T) {
	s := newStore(t)
	base := s.Stats().Commits
	commits := func() uint64 { return s.Stats().Commits - base }

	if err := s.Update(func(tx *Tx) error { return tx.SetChatThread("a", "t") }); err != nil {
		t.Fatal(err)
	}
	if got := commits(); got != 1 {
		t.Fatalf("after one Update: %d commits, want 1", got)
	}
	s.View(func(*Tx) error { return nil })
	s.Update(func(*Tx) error { return errors.New("roll back") })
	if got := commits(); got != 1 {
		t.Fatalf("after a View and a rolled-back Update: %d commits, want 1", got)
	}
	if err := s.Batch(func(tx *Tx) error { return tx.SetChatThread("b", "t") }); err != nil {
		t.Fatal(err)
	}
	if got := commits(); got != 2 {
		t.Fatalf("after a lone Batch: %d commits, want 2", got)
	}

	// Concurrent Batch calls share commits: at least one, at most one each.
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := s.Batch(func(tx *Tx) error { return tx.SetChatThread(fmt.Sprint("c", i), "t") }); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := commits() - 2; got < 1 || got > n {
		t.Fatalf("%d concurrent Batch calls took %d commits, want 1 to %d", n, got, n)
	}
}
