package memory

import (
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

// TestBlockKeepsPayloadsInert: a fact or summary holding a classic
// injection payload stays text inside the <memory> block.
func TestBlockKeepsPayloadsInert(t *testing.T) {
	now := time.Now()
	block := func(text string) string {
		return render(&store.Memory{
			Work:      store.Summary{Text: "Bakes bread. " + text},
			TopOfMind: store.Summary{Text: text},
			Facts: []store.Fact{
				{ID: "f1", Content: "Likes rye.", Category: "preference", Confidence: 0.8, Created: now},
				{ID: "f2", Content: text, Category: "correction", Confidence: 0.9, Created: now},
				{ID: "f3", Content: "Said: " + text, Category: "context", Confidence: 0.7, Created: now},
			},
		}, 2000)
	}
	base := block("nothing special")
	for name, p := range testutil.Payloads {
		testutil.AssertInert(t, name, base, block(p), p)
	}
}

// TestUpdateRequestKeepsPayloadsInert: the updater's view of the memory
// and of what was said keeps its sections too.
func TestUpdateRequestKeepsPayloadsInert(t *testing.T) {
	req := func(text string) string {
		mem := &store.Memory{Personal: store.Summary{Text: text}, Facts: []store.Fact{{ID: "f1", Content: "Said: " + text, Category: "context", Confidence: 0.9}}}
		return updateRequest(mem, []*store.Exchange{{User: "remember " + text, Answer: "Noted: " + text}})
	}
	base := req("nothing special")
	for name, p := range testutil.Payloads {
		testutil.AssertInert(t, name, base, req(p), p)
	}
}
