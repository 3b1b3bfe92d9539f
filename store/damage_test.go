package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/store/storetest"
)

// damagedFile writes three threads through the store, then overwrites a
// leaf page holding only t-bad's messages. It returns the file's path and
// the other threads' messages.
func damagedFile(t testing.TB) (string, map[string][]*Message) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	want := threadsFile(t, path)
	if err := storetest.DamageThread(path, "t-bad"); err != nil {
		t.Fatal(err)
	}
	delete(want, "t-bad")
	return path, want
}

// threadsFile writes threads t-a, t-bad (pages of messages) and t-c to a
// new database at path, and returns their messages.
func threadsFile(t testing.TB, path string) map[string][]*Message {
	t.Helper()
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]*Message{}
	err = s.Update(func(tx *Tx) error {
		for _, th := range []struct {
			id   string
			n    int
			size int
		}{{"t-a", 5, 100}, {"t-bad", 40, 1000}, {"t-c", 5, 100}} {
			if err := tx.PutThread(&Thread{ID: th.id, ChatKey: "chat-" + th.id}); err != nil {
				return err
			}
			if err := tx.SetChatThread("chat-"+th.id, th.id); err != nil {
				return err
			}
			for i := range th.n {
				m := &Message{Role: "user", Content: strings.Repeat(string(rune('a'+i%26)), th.size)}
				if err := tx.AppendMessages(th.id, m); err != nil {
					return err
				}
				want[th.id] = append(want[th.id], m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func checkThreads(t *testing.T, s *Store, want map[string][]*Message) {
	t.Helper()
	for id, msgs := range want {
		got, err := s.Messages(id, 0)
		if err != nil {
			t.Fatalf("thread %s: %v", id, err)
		}
		if d := cmp.Diff(msgs, got); d != "" {
			t.Errorf("thread %s (-want +got):\n%s", id, d)
		}
	}
}

func TestDamagedThreadIsContained(t *testing.T) {
	path, want := damagedFile(t)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	checkThreads(t, s, want)
	_, err = s.Messages("t-bad", 0)
	var de *DamagedError
	if !errors.Is(err, ErrDamaged) || !errors.As(err, &de) || de.Thread != "t-bad" || de.Bucket != "messages" {
		t.Fatalf("messages of t-bad: %v, want a DamagedError naming thread t-bad in bucket messages", err)
	}
	if _, err := s.LastMessages("t-bad", 100); !errors.Is(err, ErrDamaged) {
		t.Errorf("last messages of t-bad: %v, want ErrDamaged", err)
	}
	// Writes elsewhere go on.
	if err := s.Update(func(tx *Tx) error { return tx.AppendMessages("t-a", &Message{Role: "user"}) }); err != nil {
		t.Errorf("append to t-a: %v", err)
	}
	if err := s.Health(); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "thread t-bad") {
		t.Errorf("health: %v, want ErrDamaged naming thread t-bad", err)
	}
	if got := s.Damaged(); len(got) != 1 || got[0].Thread != "t-bad" {
		t.Errorf("Damaged() = %v, want thread t-bad", got)
	}
}

func TestCallerPanicIsNotDamage(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), FileName), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if r := recover(); r != "bug" {
			t.Errorf("recovered %v, want the caller's panic", r)
		}
		if d := s.Damaged(); len(d) != 0 {
			t.Errorf("Damaged() = %v after a caller's panic", d)
		}
	}()
	s.View(func(tx *Tx) error { panic("bug") })
}
