package doctor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/store/boltfile"
	"github.com/deerflow/deerflow/store/internal/schema"
	"github.com/deerflow/deerflow/store/storetest"
)

// damagedFile, threadsFile and expectThreads are store's own test helpers
// (store/damage_test.go), here through store's exported API.

// damagedFile writes three threads through the store, then overwrites a
// leaf page holding only t-bad's messages. It returns the file's path and
// the other threads' messages.
func damagedFile(t testing.TB) (string, map[string][]*store.Message) {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	want := threadsFile(t, path)
	if err := storetest.DamageThread(path, "t-bad"); err != nil {
		t.Fatal(err)
	}
	delete(want, "t-bad")
	return path, want
}

// threadsFile writes threads t-a, t-bad (pages of messages) and t-c to a
// new database at path, and returns their messages.
func threadsFile(t testing.TB, path string) map[string][]*store.Message {
	t.Helper()
	s, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]*store.Message{}
	err = s.Update(func(tx *store.Tx) error {
		for _, th := range []struct {
			id   string
			n    int
			size int
		}{{"t-a", 5, 100}, {"t-bad", 40, 1000}, {"t-c", 5, 100}} {
			if err := tx.PutThread(&store.Thread{ID: th.id, ChatKey: "chat-" + th.id}); err != nil {
				return err
			}
			if err := tx.SetChatThread("chat-"+th.id, th.id); err != nil {
				return err
			}
			for i := range th.n {
				m := &store.Message{Role: "user", Content: strings.Repeat(string(rune('a'+i%26)), th.size)}
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

func expectThreads(t *testing.T, s *store.Store, want map[string][]*store.Message) {
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

func TestCheckAndSalvage(t *testing.T) {
	path, want := damagedFile(t)
	r, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Problems[0].Thread != "t-bad" {
		t.Fatalf("Check: %v, want one problem, thread t-bad", r.Problems)
	}
	out := filepath.Join(t.TempDir(), "salvaged.db")
	lost, err := Salvage(path, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0].Thread != "t-bad" || !strings.Contains(lost[0].Detail, "40 messages") {
		t.Fatalf("Salvage lost %v, want thread t-bad's 40 messages", lost)
	}
	if r, err := Check(out); err != nil || len(r.Problems) != 0 || r.SchemaVersion != uint64(store.SchemaVersion()) {
		t.Fatalf("Check of the salvaged file: %+v, %v; want no problems", r, err)
	}
	s, err := store.Open(out, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expectThreads(t, s, want)
	if msgs, err := s.Messages("t-bad", 0); err != nil || len(msgs) != 0 {
		t.Errorf("t-bad after salvage: %d messages, %v; want none", len(msgs), err)
	}
	if th, err := s.ChatThread("chat-t-bad"); err != nil || th != "t-bad" {
		t.Errorf("chat-t-bad maps to %q, %v; want t-bad kept", th, err)
	}
	// A new message gets a fresh seq, not one the lost history used.
	err = s.Update(func(tx *store.Tx) error {
		m := &store.Message{Role: "user"}
		if err := tx.AppendMessages("t-bad", m); err != nil {
			return err
		}
		if m.Seq != 41 {
			t.Errorf("seq after salvage = %d, want 41", m.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	s, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error { // as a newer deerflow's migration would
		newer := binary.BigEndian.AppendUint64(nil, uint64(store.SchemaVersion()+1))
		return tx.Bucket(schema.Meta).Put(schema.KeySchemaVersion, newer)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) == 0 || !strings.Contains(r.Problems[0].Detail, "newer") {
		t.Errorf("Check of a newer file: %v, want a problem saying it is newer", r.Problems)
	}
}

func TestBackupWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, store.FileName)
	s, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // commits keep landing while the copies are taken
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Update(func(tx *store.Tx) error {
				return tx.AppendMessages("t", &store.Message{Role: "user", Content: strings.Repeat("x", i%3000)})
			})
		}
	}()
	out := filepath.Join(dir, "backup.db")
	var berr error
	for range 5 {
		if berr = Backup(path, out); berr != nil && !errors.Is(berr, ErrBusy) {
			break
		}
	}
	close(stop)
	<-done
	if berr != nil {
		t.Fatal(berr)
	}
	r, err := Check(out)
	if err != nil || len(r.Problems) != 0 {
		t.Fatalf("Check of the backup: %+v, %v", r, err)
	}
	if left, _ := filepath.Glob(out + ".tmp*"); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	if err := Backup(path, path); err == nil {
		t.Error("a backup over the database itself was taken")
	}
}

// FuzzDamagedFile overwrites bytes of a real database file and reads it
// through the store and Check: damage is an error, never a panic.
func FuzzDamagedFile(f *testing.F) {
	path, _ := damagedFile(f)
	base, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(4096*3+20), []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint32(4096*5), []byte("garbage in a page header"))
	f.Fuzz(func(t *testing.T, off uint32, data []byte) {
		b := append([]byte(nil), base...)
		copy(b[int(off)%len(b):], data)
		path := filepath.Join(t.TempDir(), store.FileName)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		Check(path)
		s, err := store.Open(path, store.Options{NoSync: true})
		if err != nil {
			return
		}
		defer s.Close()
		for _, id := range []string{"t-a", "t-bad", "t-c"} {
			s.Messages(id, 0)
			s.LastMessages(id, 3)
			s.Thread(id)
		}
		s.Update(func(tx *store.Tx) error { return tx.AppendMessages("t-a", &store.Message{Role: "user"}) })
	})
}

// TestSalvageDamagedFreelist: a damaged free page list makes store.Open refuse the
// file; Check names it, and Salvage writes a file that opens, with every
// message.
func TestSalvageDamagedFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	want := threadsFile(t, path)
	s, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *store.Tx) error { return tx.DeleteThread("t-c") }) // frees pages
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	delete(want, "t-c")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, why := boltfile.FindMeta(bytes.NewReader(b), int64(len(b)))
	if why != "" || m.Freelist == boltfile.NoFreelist {
		t.Fatalf("meta: %+v %s", m, why)
	}
	off := int(m.Freelist) * int(m.PageSize)
	binary.NativeEndian.PutUint16(b[off+8:], 0xABAB) // not a freelist page
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(path, store.Options{NoSync: true}); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("open: %v, want store.ErrCorrupt", err)
	}
	r, err := Check(path)
	if err != nil || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Detail, "free page list") {
		t.Fatalf("Check: %+v, %v; want the free page list named", r, err)
	}
	out := filepath.Join(t.TempDir(), "salvaged.db")
	if lost, err := Salvage(path, out); err != nil || len(lost) != 0 {
		t.Fatalf("Salvage: lost %v, %v", lost, err)
	}
	s, err = store.Open(out, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expectThreads(t, s, want)
}
