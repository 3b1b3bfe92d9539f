package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// newStore opens a fresh store in a temporary directory.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), FileName), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func storedVersion(t *testing.T, s *Store) uint64 {
	t.Helper()
	var v uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		v, err = schemaVersion(tx, s.path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenCreates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if v := storedVersion(t, s); v != uint64(SchemaVersion()) {
		t.Errorf("schema version %d, want %d", v, SchemaVersion())
	}
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := Open(path, Options{Timeout: 10 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("second Open succeeded")
	}
	if want := "another deerflow is using " + path; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, ErrLocked) || !errors.Is(err, bbolt.ErrTimeout) {
		t.Errorf("error %v does not wrap ErrLocked and bbolt.ErrTimeout", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		if err := tx.SetChatThread("telegram:1", "t1"); err != nil {
			return err
		}
		return tx.AppendMessages("t1", &Message{Role: "user", Content: "hello"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if id, err := s.ChatThread("telegram:1"); err != nil || id != "t1" {
		t.Errorf("ChatThread = %q, %v", id, err)
	}
	msgs, err := s.Messages("t1", 0)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "hello" || msgs[0].Seq != 1 {
		t.Errorf("Messages = %v, %v", msgs, err)
	}
}

func TestOpenEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := storedVersion(t, s); v != uint64(SchemaVersion()) {
		t.Errorf("schema version %d, want %d", v, SchemaVersion())
	}
}

func TestNotFound(t *testing.T) {
	s := newStore(t)
	lookups := map[string]func() error{
		"ChatThread":     func() error { _, err := s.ChatThread("x:1"); return err },
		"BotMessageChat": func() error { _, err := s.BotMessageChat("x", "1", "2"); return err },
		"Thread":         func() error { _, err := s.Thread("nope"); return err },
		"Run":            func() error { _, err := s.Run("nope"); return err },
	}
	for name, f := range lookups {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}
