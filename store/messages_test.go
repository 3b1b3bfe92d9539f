package store

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/store/internal/schema"
)

func appendN(t testing.TB, s *Store, threadID string, n int) {
	t.Helper()
	err := s.Update(func(tx *Tx) error {
		for i := range n {
			if err := tx.AppendMessages(threadID, &Message{Role: "user", Content: fmt.Sprint(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func seqsOf(msgs []*Message) []uint64 {
	out := []uint64{}
	for _, m := range msgs {
		out = append(out, m.Seq)
	}
	return out
}

func span(from, to uint64) []uint64 {
	out := []uint64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestMessageRoundTrip(t *testing.T) {
	s := newStore(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	in := []*Message{
		{Role: "system", Content: "be brief", Hidden: true},
		{Role: "user", Content: "<b>hi</b> & bye", Name: "alice", Time: now},
		{Role: "assistant", Reasoning: "think", RunID: "r1", Time: now,
			ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"cmd":"ls"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "a.txt", Name: "bash", RunID: "r1"},
	}
	if err := s.Update(func(tx *Tx) error { return tx.AppendMessages("t1", in...) }); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(in); !reflect.DeepEqual(got, span(1, 4)) {
		t.Errorf("assigned seqs %v", got)
	}
	out, err := s.Messages("t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		for i := range out {
			t.Errorf("got  %+v\nwant %+v", out[i], in[i])
		}
	}
	if n, err := s.MessageCount("t1"); n != 4 || err != nil {
		t.Errorf("MessageCount = %d, %v", n, err)
	}
}

// Seqs are big-endian in keys, so byte order is numeric order across the
// 1-, 2- and 4-byte boundaries. The counter is set directly to reach them.
func TestMessageOrderAcrossByteBoundaries(t *testing.T) {
	s := newStore(t)
	appendN(t, s, "t1", 300) // 1..300 the ordinary way
	for _, start := range []uint64{65530, 1<<32 - 5} {
		err := s.Update(func(tx *Tx) error {
			seqs, _ := tx.bucket(schema.Seqs)
			st := schema.GetSeqState(seqs, "t1")
			st.Last = start
			return schema.PutSeqState(seqs, "t1", st)
		})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, s, "t1", 10)
	}
	want := append(append(span(1, 300), span(65531, 65540)...), span(1<<32-4, 1<<32+5)...)
	msgs, err := s.Messages("t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(msgs); !reflect.DeepEqual(got, want) {
		t.Errorf("seqs %v…, want %v…", got[250:], want[250:])
	}
	last, err := s.LastMessages("t1", 25)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(last); !reflect.DeepEqual(got, want[len(want)-25:]) {
		t.Errorf("LastMessages seqs %v, want %v", got, want[len(want)-25:])
	}
	after, err := s.Messages("t1", 255)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(want)-255 || after[0].Seq != 256 {
		t.Errorf("Messages after 255: %d, first %d", len(after), after[0].Seq)
	}
	if n, _ := s.MessageCount("t1"); n != len(want) {
		t.Errorf("MessageCount = %d, want %d", n, len(want))
	}
}

// Threads whose ids are prefixes of one another must not see each other's
// messages, whether the thread sits first, in the middle or last in the
// bucket.
func TestMessagesStayInTheirThread(t *testing.T) {
	s := newStore(t)
	counts := map[string]int{"a": 5, "a:1": 3, "ab": 4, "b": 6}
	for id, n := range counts {
		appendN(t, s, id, n)
	}
	tests := []struct {
		thread   string
		afterSeq uint64
		last     int
		want     []uint64 // from Messages(thread, afterSeq)
		wantLast []uint64 // from LastMessages(thread, last)
	}{
		{"a", 0, 2, span(1, 5), span(4, 5)},
		{"a", 3, 0, span(4, 5), nil},
		{"a", 5, 10, nil, span(1, 5)},
		{"a:1", 0, 1, span(1, 3), span(3, 3)},
		{"ab", 2, 4, span(3, 4), span(1, 4)},
		{"b", 0, 3, span(1, 6), span(4, 6)},
		{"b", math.MaxUint64, -1, nil, nil},
		{"0", 0, 5, nil, nil},  // before every thread
		{"c", 0, 5, nil, nil},  // after every thread
		{"aa", 0, 5, nil, nil}, // between threads
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/after%d/last%d", tt.thread, tt.afterSeq, tt.last)
		t.Run(name, func(t *testing.T) {
			msgs, err := s.Messages(tt.thread, tt.afterSeq)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := seqsOf(msgs), append([]uint64{}, tt.want...); !reflect.DeepEqual(got, want) {
				t.Errorf("Messages seqs %v, want %v", got, want)
			}
			last, err := s.LastMessages(tt.thread, tt.last)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := seqsOf(last), append([]uint64{}, tt.wantLast...); !reflect.DeepEqual(got, want) {
				t.Errorf("LastMessages seqs %v, want %v", got, want)
			}
			for _, m := range append(msgs, last...) {
				if m.Content != fmt.Sprint(m.Seq-1) {
					t.Errorf("seq %d holds %q", m.Seq, m.Content)
				}
			}
		})
	}
}

func TestReplaceAndTruncate(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(tx *Tx) error
		wantSeqs  []uint64
		wantCount int
	}{
		{"replace from 3 with 2", func(tx *Tx) error {
			return tx.ReplaceMessagesFrom("t", 3, &Message{Role: "user"}, &Message{Role: "assistant"})
		}, []uint64{1, 2, 6, 7}, 4},
		{"replace from 0 with 1", func(tx *Tx) error {
			return tx.ReplaceMessagesFrom("t", 0, &Message{Role: "user"})
		}, []uint64{6}, 1},
		{"replace past the end", func(tx *Tx) error {
			return tx.ReplaceMessagesFrom("t", 9, &Message{Role: "user"})
		}, []uint64{1, 2, 3, 4, 5, 6}, 6},
		{"replace with nothing", func(tx *Tx) error {
			return tx.ReplaceMessagesFrom("t", 4)
		}, []uint64{1, 2, 3}, 3},
		{"truncate after 2", func(tx *Tx) error {
			return tx.TruncateMessagesAfter("t", 2)
		}, []uint64{1, 2}, 2},
		{"truncate after 0", func(tx *Tx) error {
			return tx.TruncateMessagesAfter("t", 0)
		}, []uint64{}, 0},
		{"truncate after the end", func(tx *Tx) error {
			return tx.TruncateMessagesAfter("t", math.MaxUint64)
		}, span(1, 5), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			appendN(t, s, "t", 5)
			appendN(t, s, "u", 2) // a neighbour, untouched
			if err := s.Update(tt.edit); err != nil {
				t.Fatal(err)
			}
			msgs, err := s.Messages("t", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqsOf(msgs); !reflect.DeepEqual(got, tt.wantSeqs) {
				t.Errorf("seqs %v, want %v", got, tt.wantSeqs)
			}
			if n, _ := s.MessageCount("t"); n != tt.wantCount {
				t.Errorf("MessageCount = %d, want %d", n, tt.wantCount)
			}
			if n, _ := s.MessageCount("u"); n != 2 {
				t.Errorf("neighbour MessageCount = %d", n)
			}
			// Seqs are never reused, even once the last messages are gone.
			prev := uint64(0)
			s.View(func(tx *Tx) error { prev, _ = tx.LastSeq("t"); return nil })
			m := &Message{Role: "user"}
			if err := s.Update(func(tx *Tx) error { return tx.AppendMessages("t", m) }); err != nil {
				t.Fatal(err)
			}
			if m.Seq != prev+1 || m.Seq <= 5 {
				t.Errorf("next seq %d after last %d", m.Seq, prev)
			}
		})
	}
}

func TestAppendRejectsBadThreadID(t *testing.T) {
	s := newStore(t)
	for _, id := range []string{"", "a\x00b"} {
		err := s.Update(func(tx *Tx) error { return tx.AppendMessages(id, &Message{Role: "user"}) })
		if err == nil {
			t.Errorf("AppendMessages(%q) succeeded", id)
		}
	}
}

// Concurrent Batch appends get unique, gap-free seqs per thread.
func TestBatchAppendConcurrent(t *testing.T) {
	s := newStore(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			thread := fmt.Sprintf("t%d", w%2)
			for range each {
				err := s.Batch(func(tx *Tx) error {
					return tx.AppendMessages(thread, &Message{Role: "user", Content: fmt.Sprint(w)})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, thread := range []string{"t0", "t1"} {
		msgs, err := s.Messages(thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := seqsOf(msgs), span(1, writers/2*each); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: seqs %v", thread, got)
		}
	}
}

func TestMessageJSONOmitsSeq(t *testing.T) {
	b, err := json.Marshal(&Message{Seq: 7, Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"role":"user"}` {
		t.Errorf("got %s", b)
	}
}
