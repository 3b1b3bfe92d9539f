package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// benchMessage is a typical assistant reply: a few hundred bytes.
func benchMessage() *Message {
	return &Message{Role: "assistant", Content: strings.Repeat("lorem ipsum ", 30),
		RunID: "run-0001", Time: time.Now()}
}

func openBench(b *testing.B, noSync bool) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), FileName), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAppendMessage is the hot path of a turn: append one message and
// update the run, in one write transaction.
func BenchmarkAppendMessage(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("NoSync=%t", noSync), func(b *testing.B) {
			s := openBench(b, noSync)
			run := &Run{ID: "run-0001", ThreadID: "thread-1", Status: RunRunning, Started: time.Now()}
			b.ReportAllocs()
			for b.Loop() {
				err := s.Update(func(tx *Tx) error {
					if err := tx.AppendMessages("thread-1", benchMessage()); err != nil {
						return err
					}
					run.Turns++
					return tx.PutRun(run)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendMessageParallel appends from 32 goroutines (one thread
// each), through Update (one fsync each), Batch (group commit) and, for
// comparison, bbolt's db.Batch (which waits up to 10 ms for company).
func BenchmarkAppendMessageParallel(b *testing.B) {
	modes := []struct {
		name  string
		write func(s *Store, fn func(*Tx) error) error
	}{
		{"Update", (*Store).Update},
		{"Batch", (*Store).Batch},
		{"boltBatch", func(s *Store, fn func(*Tx) error) error {
			return s.db.Batch(func(tx *bbolt.Tx) error { return fn(&Tx{tx: tx}) })
		}},
	}
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			s := openBench(b, false)
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				thread := fmt.Sprintf("thread-%d", n.Add(1))
				run := &Run{ID: "run-" + thread, ThreadID: thread, Status: RunRunning}
				for pb.Next() {
					err := mode.write(s, func(tx *Tx) error {
						if err := tx.AppendMessages(thread, benchMessage()); err != nil {
							return err
						}
						return tx.PutRun(run)
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkMessagesLast50 loads the recent history of a 1,000-message
// thread that shares the bucket with other threads.
func BenchmarkMessagesLast50(b *testing.B) {
	s := openBench(b, true)
	for _, thread := range []string{"thread-0", "thread-1", "thread-2"} {
		err := s.Update(func(tx *Tx) error {
			for range 1000 {
				if err := tx.AppendMessages(thread, benchMessage()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		msgs, err := s.LastMessages("thread-1", 50)
		if err != nil || len(msgs) != 50 {
			b.Fatal(len(msgs), err)
		}
	}
}
