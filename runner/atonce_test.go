package runner

import (
	"context"
	"errors"
	"iter"
	"path/filepath"
	"testing"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// seenAlso is a front end's Also: it marks the platform event seen.
func seenAlso(key string) func(*store.Tx) error {
	return func(tx *store.Tx) error { return tx.PutState(key, []byte("1")) }
}

func hasState(t *testing.T, st *store.Store, key string) bool {
	t.Helper()
	found := false
	st.View(func(tx *store.Tx) error {
		_, err := tx.State(key)
		found = err == nil
		return nil
	})
	return found
}

// TestAtOnceStoredByBegin: a run whose engine begins at once, in an idle
// conversation, is stored by its begin commit alone: when Submit returns,
// the front end's Also is durable, the queue holds nothing, and one commit
// was made. A second message meanwhile waits in the queue as before.
func TestAtOnceStoredByBegin(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	gate := hs.eng.gate("first")
	before := hs.st.Stats().Commits
	tk, err := hs.r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "first", BeginsAtOnce: true, Also: seenAlso("seen:1")})
	if err != nil {
		t.Fatal(err)
	}
	<-hs.eng.began // sent once the begin commit's Update has returned
	if got := hs.st.Stats().Commits - before; got != 1 {
		t.Errorf("%d commits until Submit returned; want 1 (the begin commit)", got)
	}
	if !hasState(t, hs.st, "seen:1") {
		t.Error("the first message's Also is not stored when Submit returns")
	}
	if seqs, _, _ := BoltQueue(hs.st).Pending(); len(seqs) != 0 {
		t.Errorf("%d runs stored in the queue; want none", len(seqs))
	}
	second, err := hs.r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "second", BeginsAtOnce: true, Also: seenAlso("seen:2")})
	if err != nil {
		t.Fatal(err)
	}
	if second.Ahead != 1 || !hasState(t, hs.st, "seen:2") {
		t.Errorf("second message: %d ahead, stored %v; want 1 ahead, stored", second.Ahead, hasState(t, hs.st, "seen:2"))
	}
	if seqs, _, _ := BoltQueue(hs.st).Pending(); len(seqs) != 1 {
		t.Errorf("%d runs stored in the queue; want the second", len(seqs))
	}
	close(gate)
	if _, end := outcome(t, tk.Run); end.Status != StatusSuccess {
		t.Errorf("first run ended %q", end.Status)
	}
	<-hs.eng.began
	if _, end := outcome(t, second.Run); end.Status != StatusSuccess {
		t.Errorf("second run ended %q", end.Status)
	}
}

// TestAtOnceEndsBeforeBegin: a run started at once that ends without
// beginning (refused, or failed loading its thread) still has its Also
// stored before Submit returns, and nothing queued: the platform's event
// is handled, and the message is not run again after a restart.
func TestAtOnceEndsBeforeBegin(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(OriginAPI, Handler{Engine: EngineFunc(func(context.Context, *Run) iter.Seq[event.Event] {
		return func(yield func(event.Event) bool) {
			yield(event.Error{Text: "this conversation is damaged", Err: errors.New("damaged")})
		}
	})})
	r.Start()
	defer r.Close(context.Background(), 0, errors.New("test over"))
	tk, err := r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "hi", BeginsAtOnce: true, Also: seenAlso("seen:1")})
	if err != nil {
		t.Fatal(err)
	}
	if !hasState(t, st, "seen:1") {
		t.Error("Also is not stored when Submit returns")
	}
	if _, end := outcome(t, tk.Run); end.Status != StatusError {
		t.Errorf("run ended %q; want error", end.Status)
	}
	if seqs, _, _ := BoltQueue(st).Pending(); len(seqs) != 0 {
		t.Errorf("%d runs stored in the queue; want none", len(seqs))
	}
}

// TestAtOnceAlsoRefused: an Also that fails (a redelivered event, say)
// fails Submit, whether it ran in the begin commit or alone.
func TestAtOnceAlsoRefused(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	dup := errors.New("a redelivered event")
	_, err := hs.r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "hi", BeginsAtOnce: true,
		Also: func(*store.Tx) error { return dup }})
	if !errors.Is(err, dup) {
		t.Errorf("Submit = %v; want the Also's error", err)
	}
}
