package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/store/storetest"
)

func TestFullDisk(t *testing.T) {
	dir := storetest.Tmpfs(t, "8m")
	path := filepath.Join(dir, "data", FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Health(); err != nil {
		t.Fatalf("health before: %v", err)
	}
	filler := storetest.Fill(t, dir)
	err = s.Update(func(tx *Tx) error {
		return tx.AppendMessages("t", &Message{Role: "user", Content: strings.Repeat("x", 256<<10)})
	})
	if err == nil {
		t.Fatal("a write on a full disk succeeded")
	}
	err = s.Health()
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("health on a full disk: %v, want ErrNoSpace naming %s", err, dir)
	}
	s2, err := Open(filepath.Join(dir, "other", FileName), Options{})
	if err == nil {
		s2.Close()
		t.Fatal("Open on a full disk succeeded")
	}
	if !errors.Is(err, ErrNoSpace) {
		t.Errorf("Open on a full disk: %v, want ErrNoSpace", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); err != nil {
		t.Fatalf("health once space returned: %v", err)
	}
	err = s.Update(func(tx *Tx) error {
		return tx.AppendMessages("t", &Message{Role: "user", Content: strings.Repeat("x", 256<<10)})
	})
	if err != nil {
		t.Fatalf("write once space returned: %v", err)
	}
}

// TestHealthAfterAFailedCommit: a failed commit (injected) makes Health try
// a small write; it passing, Health is nil and the failure is forgotten.
func TestHealthAfterAFailedCommit(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), FileName), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.note(true, errors.New("injected: input/output error"), nil)
	s.View(func(*Tx) error { return nil }) // a read says nothing about writes
	if s.health.writeErr == nil {
		t.Fatal("a read cleared the failed write")
	}
	if err := s.Health(); err != nil {
		t.Fatalf("health: %v, want the probe write to pass", err)
	}
	if s.health.writeErr != nil {
		t.Errorf("the failure is still remembered after a write landed: %v", s.health.writeErr)
	}
	// A function's own error is not a failed commit.
	s.Update(func(*Tx) error { return errors.New("no") })
	if s.health.writeErr != nil {
		t.Errorf("fn's error was taken for a failed commit: %v", s.health.writeErr)
	}
}
