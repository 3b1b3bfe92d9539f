package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/schema"
)

func TestInboundQueue(t *testing.T) {
	s := newStore(t)
	var seqs []uint64
	err := s.Update(func(tx *Tx) error {
		for _, d := range []string{"a", "b", "c"} {
			seq, err := tx.PutInbound([]byte(d))
			if err != nil {
				return err
			}
			seqs = append(seqs, seq)
		}
		return tx.DeleteInbound(seqs[1])
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	s.View(func(tx *Tx) error {
		return tx.Inbound(func(seq uint64, data []byte) error {
			got = append(got, string(data))
			return nil
		})
	})
	if len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("pending = %q", got)
	}
}

func TestMarkSeenAndPrune(t *testing.T) {
	s := newStore(t)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *Tx) error {
		for i, want := range []bool{false, true} {
			seen, err := tx.MarkSeen("telegram:5001", day)
			if err != nil || seen != want {
				t.Errorf("mark %d: seen=%v err=%v", i, seen, err)
			}
		}
		tx.MarkSeen("telegram:5002", day.Add(48*time.Hour))
		if seen, _ := tx.Seen("telegram:5002"); !seen {
			t.Error("Seen does not see a marked key")
		}
		n, err := tx.PruneSeen(day.Add(24 * time.Hour))
		if n != 1 || err != nil {
			t.Errorf("pruned %d, %v", n, err)
		}
		if seen, _ := tx.MarkSeen("telegram:5001", day); seen {
			t.Error("a pruned key is still seen")
		}
		if seen, _ := tx.MarkSeen("telegram:5002", day); !seen {
			t.Error("a recent key was pruned")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *Tx) error {
		if _, err := tx.State("telegram:offset"); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing state: %v", err)
		}
		return tx.PutState("telegram:offset", []byte("5001"))
	})
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *Tx) error {
		v, err := tx.State("telegram:offset")
		if string(v) != "5001" || err != nil {
			t.Errorf("state after reopen = %q, %v", v, err)
		}
		return nil
	})
}

// A database written by schema version 1 gains the state bucket on open.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	s, err := open(path, Options{}, schema.Migrations[:1])
	if err != nil {
		t.Fatal(err)
	}
	s.Update(func(tx *Tx) error { return tx.AppendMessages("t1", &Message{Role: "user", Content: "kept"}) })
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(schema.State) == nil {
			t.Error("no state bucket after migration")
		}
		return nil
	})
	msgs, err := s.Messages("t1", 0)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "kept" {
		t.Errorf("messages after migration = %v, %v", msgs, err)
	}
}
