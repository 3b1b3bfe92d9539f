package store

import (
	"cmp"
	"maps"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/deerflow/deerflow/store/internal/schema"
)

// dbKey names one key of the database.
type dbKey struct{ bucket, key string }

// dump returns every key and value of the database, bucket by bucket.
func dump(t *testing.T, s *Store) map[dbKey]string {
	t.Helper()
	out := make(map[dbKey]string)
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				out[dbKey{string(name), string(k)}] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// owner returns the thread a key belongs to, or "".
func owner(k dbKey) string {
	switch k.bucket {
	case string(schema.Threads), string(schema.Seqs), string(schema.Research):
		return k.key
	case string(schema.Messages):
		if n := len(k.key) - 9; n > 0 && k.key[n] == 0 {
			return k.key[:n]
		}
	}
	return ""
}

// expectDump reports every key where got differs from want.
func expectDump(t *testing.T, got, want map[dbKey]string) {
	t.Helper()
	keys := slices.Collect(maps.Keys(got))
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b dbKey) int {
		return cmp.Or(cmp.Compare(a.bucket, b.bucket), cmp.Compare(a.key, b.key))
	})
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !wok:
			t.Errorf("%s %q: extra key, value %q", k.bucket, k.key, g)
		case !gok:
			t.Errorf("%s %q: missing, want %q", k.bucket, k.key, w)
		case g != w:
			t.Errorf("%s %q: value %q, want %q", k.bucket, k.key, g, w)
		}
	}
}

func update(t *testing.T, s *Store, fn func(*Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatal(err)
	}
}

var snapNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// seedThreads stores thread "t" (summarized through seq 2, with a tool
// call left unanswered at seq 5 and a deleted seq 6, so its counter's
// last and count differ), "t1" (whose keys sort right after t's), "s",
// and messages of "m", which has no record.
func seedThreads(t *testing.T, s *Store) {
	t.Helper()
	update(t, s, func(tx *Tx) error {
		err := tx.AppendMessages("t",
			&Message{Role: "user", Content: "hi", Time: snapNow},
			&Message{Role: "assistant", Content: "hello", RunID: "r0", Time: snapNow},
			&Message{Role: "user", Content: "list files", Time: snapNow},
			&Message{Role: "assistant", RunID: "r1", Time: snapNow,
				ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"cmd":"ls"}`}}},
			&Message{Role: "tool", ToolCallID: "c1", Name: "bash", Content: "a.txt", RunID: "r1"},
			&Message{Role: "assistant", RunID: "r1", Time: snapNow,
				ToolCalls: []ToolCall{{ID: "c2", Name: "bash", Arguments: `{"cmd":"cat a.txt"}`}}},
			&Message{Role: "user", Content: "deleted"},
		)
		if err != nil {
			return err
		}
		if err := tx.TruncateMessagesAfter("t", 6); err != nil {
			return err
		}
		err = tx.PutThread(&Thread{ID: "t", ChatKey: "http:1", Created: snapNow, Updated: snapNow,
			Summary: "they said hello", SummarySeq: 2, PromptTokens: 100, CompletionTokens: 20,
			Meta: map[string]string{"k": "v"}})
		if err != nil {
			return err
		}
		for _, id := range []string{"t1", "s"} {
			if err := tx.PutThread(&Thread{ID: id, Title: id, Created: snapNow}); err != nil {
				return err
			}
			if err := tx.AppendMessages(id, &Message{Role: "user", Content: id}); err != nil {
				return err
			}
		}
		return tx.AppendMessages("m", &Message{Role: "user", Content: "m"})
	})
}

func snapshot(t *testing.T, s *Store, id string) *ThreadSnapshot {
	t.Helper()
	var snap *ThreadSnapshot
	err := s.View(func(tx *Tx) error {
		var err error
		snap, err = tx.SnapshotThread(id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// touch updates thread id's record as a run's writes do.
func touch(tx *Tx, id string, fn func(*Thread)) error {
	th, err := tx.Thread(id)
	if err != nil {
		return err
	}
	fn(th)
	return tx.PutThread(th)
}

func TestRestoreThread(t *testing.T) {
	later := snapNow.Add(time.Minute)
	tests := []struct {
		name string
		id   string
		run  func(tx *Tx) error // what happens after the snapshot
	}{
		{"append and update record", "t", func(tx *Tx) error {
			err := tx.AppendMessages("t",
				&Message{Role: "user", Content: "again", RunID: "r2", Time: later},
				&Message{Role: "assistant", Content: "sure", RunID: "r2", Time: later})
			if err != nil {
				return err
			}
			return touch(tx, "t", func(th *Thread) {
				th.Title, th.Updated = "Files", later
				th.PromptTokens += 50
				th.CompletionTokens += 7
			})
		}},
		{"repair then append", "t", func(tx *Tx) error {
			// As agent.repairHistory does: answer c2 with a synthetic result.
			err := tx.ReplaceMessagesFrom("t", 6,
				&Message{Role: "assistant", RunID: "r1", Time: snapNow,
					ToolCalls: []ToolCall{{ID: "c2", Name: "bash", Arguments: `{"cmd":"cat a.txt"}`}}},
				&Message{Role: "tool", ToolCallID: "c2", Name: "bash", Hidden: true,
					Content: "The tool call was interrupted before it returned a result."})
			if err != nil {
				return err
			}
			if err := tx.AppendMessages("t", &Message{Role: "user", Content: "go on", RunID: "r2"}); err != nil {
				return err
			}
			return touch(tx, "t", func(th *Thread) { th.Updated = later })
		}},
		{"repair from the first message after the summary", "t", func(tx *Tx) error {
			return tx.ReplaceMessagesFrom("t", 3, &Message{Role: "user", Content: "list files"})
		}},
		{"summarize", "t", func(tx *Tx) error {
			if err := tx.AppendMessages("t", &Message{Role: "user", Content: "more", RunID: "r2"}); err != nil {
				return err
			}
			return touch(tx, "t", func(th *Thread) {
				th.Summary, th.SummarySeq = "they listed files", 5
			})
		}},
		{"missing thread created", "new", func(tx *Tx) error {
			err := tx.AppendMessages("new",
				&Message{Role: "user", Content: "first"},
				&Message{Role: "assistant", Content: "reply"})
			if err != nil {
				return err
			}
			return tx.PutThread(&Thread{ID: "new", Created: later, Title: "New"})
		}},
		{"deleted thread", "s", func(tx *Tx) error {
			if err := tx.DeleteThread("s"); err != nil {
				return err
			}
			return tx.AppendMessages("s", &Message{Role: "user", Content: "again"})
		}},
		{"messages without a record", "m", func(tx *Tx) error {
			if err := tx.AppendMessages("m", &Message{Role: "user", Content: "more"}); err != nil {
				return err
			}
			return tx.PutThread(&Thread{ID: "m", Created: later})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			seedThreads(t, s)
			before := dump(t, s)
			snap := snapshot(t, s, tc.id)
			update(t, s, tc.run)
			if maps.Equal(dump(t, s), before) {
				t.Fatal("the run changed nothing")
			}
			update(t, s, func(tx *Tx) error { return tx.RestoreThread(snap) })
			expectDump(t, dump(t, s), before)
			// A snapshot can be restored again; it is not used up.
			update(t, s, func(tx *Tx) error { return tx.RestoreThread(snap) })
			expectDump(t, dump(t, s), before)
		})
	}
}

// Only the messages after SummarySeq are copied.
func TestSnapshotThreadWindow(t *testing.T) {
	s := newStore(t)
	seedThreads(t, s)
	var seqs []uint64
	for _, m := range snapshot(t, s, "t").msgs {
		seqs = append(seqs, m.seq)
	}
	if want := []uint64{3, 4, 5, 6}; !slices.Equal(seqs, want) {
		t.Errorf("snapshot holds seqs %v, want %v", seqs, want)
	}
	snap := snapshot(t, s, "missing")
	if snap.record != nil || snap.seqs != nil || len(snap.msgs) != 0 {
		t.Errorf("snapshot of a missing thread holds %+v", snap)
	}
}

func TestRestoreThreadLeavesOthers(t *testing.T) {
	s := newStore(t)
	seedThreads(t, s)
	before := dump(t, s)
	snap := snapshot(t, s, "t")
	update(t, s, func(tx *Tx) error {
		for _, id := range []string{"t", "t1"} {
			if err := tx.AppendMessages(id, &Message{Role: "user", Content: "later"}); err != nil {
				return err
			}
			if err := touch(tx, id, func(th *Thread) { th.Title = "changed" }); err != nil {
				return err
			}
		}
		return tx.DeleteThread("s")
	})
	mid := dump(t, s)
	update(t, s, func(tx *Tx) error { return tx.RestoreThread(snap) })

	// t is as it was; everything else is as the changes left it.
	want := make(map[dbKey]string)
	for k, v := range mid {
		if owner(k) != "t" {
			want[k] = v
		}
	}
	for k, v := range before {
		if owner(k) == "t" {
			want[k] = v
		}
	}
	expectDump(t, dump(t, s), want)
}

func TestSnapshotThreadErrors(t *testing.T) {
	s := newStore(t)
	err := s.View(func(tx *Tx) error {
		_, err := tx.SnapshotThread("a\x00b")
		return err
	})
	if err == nil {
		t.Error("SnapshotThread accepted an id with a NUL byte")
	}
	if err := s.Update(func(tx *Tx) error { return tx.RestoreThread(nil) }); err == nil {
		t.Error("RestoreThread(nil) returned no error")
	}
}
