package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/store/boltfile"
	"github.com/deerflow/deerflow/store/internal/schema"

	"go.etcd.io/bbolt"
)

// validDB returns the bytes of a closed store holding some data.
func validDB(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		for i := range 200 {
			m := &Message{Role: "user", Content: strings.Repeat("x", 500+i)}
			if err := tx.AppendMessages("t1", m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// foreignDB returns the bytes of a valid bbolt file that deerflow did not
// write.
func foreignDB(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("other"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenCorruptLeavesFileUntouched(t *testing.T) {
	valid := validDB(t)
	const page = 4096
	// bbolt grows small files to its mmap size; past the high-water mark
	// of pages in use the file is slack, and cutting it loses nothing.
	hw := highWater(t, valid, page)
	random := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	zeroMetas := bytes.Clone(valid)
	clear(zeroMetas[:2*page])
	badRoot := bytes.Clone(valid)
	clear(badRoot[2*page:]) // meta pages intact, every other page zeroed
	// Pages that pass the file check (right type) but hold garbage, which
	// bbolt only finds while reading them, by panicking or faulting.
	m := boltfile.ParseMeta(valid[boltfile.PageHeaderSize:])
	if m1 := boltfile.ParseMeta(valid[page+boltfile.PageHeaderSize:]); m1.TxID > m.TxID {
		m = m1
	}
	garbagePage := func(id uint64) []byte {
		b := bytes.Clone(valid)
		off := int(id)*page + boltfile.PageHeaderSize
		copy(b[off:off+page-boltfile.PageHeaderSize], random)
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"garbage root page", garbagePage(m.Root)},
		{"garbage freelist page", garbagePage(m.Freelist)},
		{"random bytes", random},
		{"short garbage", []byte("not a database")},
		{"text", bytes.Repeat([]byte("hello world\n"), 1000)},
		{"zeroed meta pages", zeroMetas},
		{"zeroed data pages", badRoot},
		{"truncated to one page", valid[:page]},
		{"truncated to two pages", valid[:2*page]},
		{"truncated to half", valid[:len(valid)/2]},
		{"truncated by one page", valid[:hw-page]},
		{"truncated mid page", valid[:hw-100]},
		{"foreign bbolt file", foreignDB(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, Options{Timeout: 10 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			t.Log(err)
			prefix := "store: " + path + " is not a deerflow database ("
			if !strings.HasPrefix(err.Error(), prefix) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %q: want prefix %q and ErrCorrupt", err, prefix)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !bytes.Equal(got, tt.data) {
				t.Errorf("file changed: %d bytes, was %d", len(got), len(tt.data))
			}
			// The failed Open released the file: a second try fails the
			// same way, not with ErrLocked.
			if _, err2 := Open(path, Options{Timeout: 10 * time.Millisecond}); errors.Is(err2, ErrLocked) {
				t.Errorf("second Open: %v", err2)
			}
		})
	}
}

func highWater(t *testing.T, db []byte, page int) int {
	t.Helper()
	m0 := boltfile.ParseMeta(db[boltfile.PageHeaderSize:])
	m1 := boltfile.ParseMeta(db[page+boltfile.PageHeaderSize:])
	if m0.Err != "" || m1.Err != "" || int(m0.PageSize) != page {
		t.Fatalf("unexpected meta pages: %+v %+v", m0, m1)
	}
	if m1.TxID > m0.TxID {
		m0 = m1
	}
	hw := int(m0.PGID) * page
	if hw > len(db) || hw < 4*page {
		t.Fatalf("high-water mark %d, file %d bytes", hw, len(db))
	}
	return hw
}

func TestOpenTruncatedSlack(t *testing.T) {
	valid := validDB(t)
	hw := highWater(t, valid, 4096)
	if hw == len(valid) {
		t.Skip("file has no slack")
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, valid[:hw], 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.MessageCount("t1"); n != 200 || err != nil {
		t.Errorf("MessageCount = %d, %v", n, err)
	}
	if msgs, err := s.Messages("t1", 0); len(msgs) != 200 || err != nil {
		t.Errorf("Messages: %d, %v", len(msgs), err)
	}
}

func TestOpenTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	newer := uint64(SchemaVersion() + 5)
	err = s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(schema.Meta).Put(schema.KeySchemaVersion, binary.BigEndian.AppendUint64(nil, newer))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	want := fmt.Sprintf("store: %s has schema version %d, newer than this deerflow supports (%d)", path, newer, SchemaVersion())
	if err == nil || err.Error() != want || !errors.Is(err, ErrTooNew) {
		t.Fatalf("Open: %v, want %q", err, want)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("file changed")
	}
}

func TestMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.SetChatThread("c", "t") }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A failing migration leaves the database as it was.
	failing := append(schema.Migrations[:len(schema.Migrations):len(schema.Migrations)], func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucket([]byte("half")); err != nil {
			return err
		}
		return errors.New("boom")
	})
	if _, err := open(path, Options{NoSync: true}, failing); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("open with failing migration: %v", err)
	}

	runs := 0
	extra := append(schema.Migrations[:len(schema.Migrations):len(schema.Migrations)], func(tx *bbolt.Tx) error {
		runs++
		if tx.Bucket([]byte("half")) != nil {
			t.Error("failed migration was committed")
		}
		b, err := tx.CreateBucket([]byte("extra"))
		if err != nil {
			return err
		}
		// Existing data is visible to a migration.
		return b.Put([]byte("copied"), tx.Bucket(schema.Chats).Get([]byte("c")))
	})
	for range 2 {
		s, err := open(path, Options{NoSync: true}, extra)
		if err != nil {
			t.Fatal(err)
		}
		if v := storedVersion(t, s); v != uint64(len(extra)) {
			t.Errorf("schema version %d, want %d", v, len(extra))
		}
		s.db.View(func(tx *bbolt.Tx) error {
			if got := tx.Bucket([]byte("extra")).Get([]byte("copied")); string(got) != "t" {
				t.Errorf("migrated value %q", got)
			}
			return nil
		})
		s.Close()
	}
	if runs != 1 {
		t.Errorf("migration ran %d times, want 1", runs)
	}
	// The build without that migration now refuses the file.
	if _, err := Open(path, Options{}); !errors.Is(err, ErrTooNew) {
		t.Errorf("Open: %v, want ErrTooNew", err)
	}
}

// A bbolt file with no buckets (deerflow crashed while creating it) is
// migrated like a new one.
func TestOpenBareBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := storedVersion(t, s); v != uint64(SchemaVersion()) {
		t.Errorf("schema version %d", v)
	}
}
