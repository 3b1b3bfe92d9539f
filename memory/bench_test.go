package memory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deerflow/deerflow/store"
)

// fullMemory stores a memory at its limits: three summaries, 100 facts.
func fullMemory(b *testing.B, h *harness, scope string) {
	now := time.Now()
	mem := &store.Memory{Scope: scope, Work: store.Summary{Text: "Runs a small bakery and its website."},
		Personal: store.Summary{Text: "Lives in Oslo; writes in English and Norwegian."}, TopOfMind: store.Summary{Text: "Planning a new sourdough line."}}
	for i := range 100 {
		mem.Facts = append(mem.Facts, store.Fact{ID: fmt.Sprintf("f%d", i), Content: fmt.Sprintf("Fact number %d about how this person likes their bread and their answers.", i),
			Category: "preference", Confidence: 0.7 + float64(i%30)/100, Created: now, Updated: now})
	}
	if err := h.st.Update(func(tx *store.Tx) error { return tx.PutMemory(mem) }); err != nil {
		b.Fatal(err)
	}
}

func benchHarness(b *testing.B) *harness { return newHarness(b, Options{}) }

// BenchmarkBlock is the <memory> block of a full memory, as each run
// gets it: from the cache, and rebuilt after the memory changed.
func BenchmarkBlock(b *testing.B) {
	h := benchHarness(b)
	fullMemory(b, h, "u:1")
	b.Run("cached", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if h.m.Block("u:1", "c:1") == "" {
				b.Fatal("empty block")
			}
		}
	})
	b.Run("rebuilt", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			h.m.forget("u:1")
			if h.m.Block("u:1", "c:1") == "" {
				b.Fatal("empty block")
			}
		}
	})
}

// BenchmarkRecord is what memory adds to the write that stores an answer.
func BenchmarkRecord(b *testing.B) {
	h := benchHarness(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := h.st.Batch(func(tx *store.Tx) error {
			return h.m.Record(tx, "u:1", "c:1", "th_1", fmt.Sprintf("run_%d", i), "I like rye bread", "Noted.")
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	h.m.Flush(context.Background())
}
