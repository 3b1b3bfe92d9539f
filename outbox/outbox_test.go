package outbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// platform is a fake Sender that records what it shows, and refuses every
// send while down.
type platform struct {
	mu    sync.Mutex
	down  bool
	tries int
	next  int
	log   []string
}

func (p *platform) Name() string { return "plat" }

func (p *platform) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if p.down {
		return nil, errors.New("platform unavailable (503)")
	}
	p.next++
	id := fmt.Sprintf("m%d", p.next)
	p.log = append(p.log, fmt.Sprintf("send %s final=%v: %s", id, out.Final, out.Text))
	return []string{id}, nil
}

func (p *platform) setDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

func (p *platform) seen() (tries int, log []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tries, append([]string(nil), p.log...)
}

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newOutbox(t *testing.T, st *store.Store, p bus.Sender) *Outbox {
	t.Helper()
	o, err := New(Options{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	o.Register(p)
	return o
}

func outboxLen(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx *store.Tx) error {
		return tx.Outbox(func(uint64, []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFailedSendIsReplayedAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deerflow.db")
	st := openStore(t, path)
	p := &platform{down: true}
	o := newOutbox(t, st, p)
	ctx := context.Background()
	answer := &bus.Outbound{Kind: bus.OutMessage, Channel: "plat", ChatID: "c1", Text: "the answer", Final: true}
	if _, err := o.Send(ctx, "plat:c1", answer); err == nil {
		t.Fatal("a send to a platform that is down succeeded")
	}
	// A preview is not durable: after a restart it no longer matters.
	o.Send(ctx, "plat:c1", &bus.Outbound{Kind: bus.OutMessage, Channel: "plat", ChatID: "c1", Text: "a preview"})
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("outbox holds %d, want the failed answer", n)
	}
	st.Close()

	st = openStore(t, path)
	defer st.Close()
	p = &platform{}
	o = newOutbox(t, st, p)
	if n := o.Replay(ctx); n != 1 {
		t.Fatalf("replayed %d, want 1", n)
	}
	_, got := p.seen()
	if diff := cmp.Diff([]string{"send m1 final=true: the answer"}, got); diff != "" {
		t.Errorf("the platform saw (-want +got):\n%s", diff)
	}
	if n := outboxLen(t, st); n != 0 {
		t.Fatalf("outbox holds %d after the replay", n)
	}
	if key, err := st.BotMessageChat("plat", "c1", "m1"); err != nil || key != "plat:c1" {
		t.Fatalf("the replayed message is not mapped to its conversation: %q %v", key, err)
	}
}

func TestStaleOrHopelessSendsAreDropped(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "deerflow.db"))
	defer st.Close()
	p := &platform{down: true}
	o := newOutbox(t, st, p)
	put := func(rec *Record) {
		st.Batch(func(tx *store.Tx) error { return PutTx(tx, rec) })
	}
	put(&Record{ChatKey: "plat:c1", Kind: bus.OutMessage, Channel: "plat", ChatID: "c1", Text: "yesterday's news", Created: time.Now().Add(-25 * time.Hour)})
	put(&Record{ChatKey: "plat:c1", Kind: bus.OutMessage, Channel: "plat", ChatID: "c1", Text: "fresh", Created: time.Now()})
	put(&Record{ChatKey: "elsewhere:c1", Kind: bus.OutMessage, Channel: "elsewhere", ChatID: "c1", Text: "for a channel not running here", Created: time.Now()})
	ctx := context.Background()
	for range maxAttempts {
		o.Replay(ctx)
	}
	if tries, _ := p.seen(); tries != maxAttempts {
		t.Fatalf("the platform was tried %d times, want %d (the stale send never)", tries, maxAttempts)
	}
	if n := outboxLen(t, st); n != 2 {
		t.Fatalf("outbox holds %d, want the fresh one and the other channel's", n)
	}
	o.Replay(ctx) // past the attempts: given up
	if n := outboxLen(t, st); n != 1 {
		t.Fatalf("outbox holds %d, want only the other channel's", n)
	}
}

func TestRetryPausesGrow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &Record{Created: t0}
	if rec.due(t0.Add(4*time.Second)) || !rec.due(t0.Add(5*time.Second)) {
		t.Fatal("a failed send is first retried 5 s after it was recorded")
	}
	var pauses []time.Duration
	for rec.Attempts < 9 {
		rec.Attempts++
		rec.Tried = t0
		p := time.Second
		for !rec.due(t0.Add(p)) {
			p += time.Second
		}
		pauses = append(pauses, p)
	}
	var want []time.Duration
	for _, s := range []time.Duration{10, 20, 40, 80, 160, 320, 600, 600, 600} {
		want = append(want, s*time.Second)
	}
	if diff := cmp.Diff(want, pauses); diff != "" {
		t.Fatalf("pauses (-want +got):\n%s", diff)
	}
}
