package channels

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLanesOrderPerChat: each chat's work runs in the order given, and a
// chat whose work is held does not hold the others.
func TestLanesOrderPerChat(t *testing.T) {
	var g Group
	g.Begin(context.Background())
	var l Lanes
	var mu sync.Mutex
	got := map[string][]int{}
	hold := make(chan struct{})
	var others sync.WaitGroup
	others.Add(2 * 50)
	for i := range 50 {
		for _, chat := range []string{"a", "b", "c"} {
			l.Go(&g, chat, func(context.Context) {
				if chat == "a" && i == 0 {
					others.Wait() // a's first waits until b and c are done
					<-hold
				}
				mu.Lock()
				got[chat] = append(got[chat], i)
				mu.Unlock()
				if chat != "a" {
					others.Done()
				}
			})
		}
	}
	close(hold)
	g.End()
	want := make([]int, 50)
	for i := range want {
		want[i] = i
	}
	if diff := cmp.Diff(map[string][]int{"a": want, "b": want, "c": want}, got); diff != "" {
		t.Errorf("order per chat (-want +got):\n%s", diff)
	}
	if l.Go(&g, "a", func(context.Context) { t.Error("ran after End") }) {
		t.Error("Go after End reported true")
	}
}
