package runner

import (
	"context"
	"errors"
	"iter"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/store"
)

// scripted is an engine whose runs append the person's message in their
// begin commit, then wait for their text's gate (if any) before answering
// "re: <text>". A cancelled run reports Stopped with the cause.
type scripted struct {
	st    *store.Store
	mu    sync.Mutex
	gates map[string]chan struct{}
	began chan string // the text of each run that began
}

func (e *scripted) gate(text string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gates[text] == nil {
		e.gates[text] = make(chan struct{})
	}
	return e.gates[text]
}

func (e *scripted) Run(ctx context.Context, run *Run) iter.Seq[event.Event] {
	return func(yield func(event.Event) bool) {
		err := e.st.Update(func(tx *store.Tx) error {
			if err := tx.AppendMessages(run.Req.ThreadID, &store.Message{Role: "user", Content: run.Req.Text}); err != nil {
				return err
			}
			return run.Begin(tx)
		})
		if err != nil {
			yield(event.Error{Text: "store", Err: err})
			return
		}
		e.began <- run.Req.Text
		if !yield(event.TextDelta{Text: "re: "}) {
			return
		}
		e.mu.Lock()
		g := e.gates[run.Req.Text]
		e.mu.Unlock()
		if g != nil {
			select {
			case <-g:
			case <-ctx.Done():
				yield(event.Stopped{Err: context.Cause(ctx)})
				return
			}
		}
		yield(event.Answer{Text: "re: " + run.Req.Text})
	}
}

type harness struct {
	t   *testing.T
	st  *store.Store
	eng *scripted
	r   *Runner
	h   Handler
}

func newHarness(t *testing.T, path string, h Handler) *harness {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "db")
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng := &scripted{st: st, gates: map[string]chan struct{}{}, began: make(chan string, 100)}
	h.Engine = eng
	r, err := New(Options{Store: st, MaxQueued: 3})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(OriginAPI, h)
	r.Start()
	hs := &harness{t: t, st: st, eng: eng, r: r, h: h}
	t.Cleanup(func() { hs.close() })
	return hs
}

func (hs *harness) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs.r.Close(ctx, 0, errors.New("test over"))
	hs.st.Close()
}

func (hs *harness) submit(text string, st Strategy) (Ticket, error) {
	return hs.r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: text, Strategy: st})
}

// outcome follows a run to its end and returns its events' names and its
// final status.
func outcome(t *testing.T, run *Run) (names []string, ended event.Ended) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for rec := range run.Events(ctx, 0) {
		names = append(names, event.Name(rec.Event))
		if e, ok := rec.Event.(event.Ended); ok {
			ended = e
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("run %s did not end", run.ID())
	}
	return names, ended
}

func (hs *harness) messages() []string {
	var out []string
	hs.st.View(func(tx *store.Tx) error {
		msgs, err := tx.Messages("th_1", 0)
		for _, m := range msgs {
			out = append(out, m.Content)
		}
		return err
	})
	return out
}

func TestEnqueueRunsInOrder(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	g := hs.eng.gate("one")
	a, err := hs.submit("one", Enqueue)
	if err != nil {
		t.Fatal(err)
	}
	<-hs.eng.began
	b, err := hs.submit("two", Enqueue)
	if err != nil {
		t.Fatal(err)
	}
	if a.Ahead != 0 || b.Ahead != 1 {
		t.Errorf("ahead = %d, %d; want 0, 1", a.Ahead, b.Ahead)
	}
	close(g)
	_, ea := outcome(t, a.Run)
	names, eb := outcome(t, b.Run)
	if diff := cmp.Diff([]string{"metadata", "message_delta", "message", "end"}, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if ea.Status != StatusSuccess || eb.Status != StatusSuccess {
		t.Errorf("statuses %q %q", ea.Status, eb.Status)
	}
	if diff := cmp.Diff([]string{"one", "two"}, hs.messages()); diff != "" {
		t.Errorf("thread (-want +got):\n%s", diff)
	}
}

func TestRejectWhenBusy(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	g := hs.eng.gate("one")
	a, _ := hs.submit("one", Enqueue)
	<-hs.eng.began
	if _, err := hs.submit("two", Reject); !errors.Is(err, ErrBusy) {
		t.Fatalf("reject while busy: %v", err)
	}
	close(g)
	outcome(t, a.Run)
	hs.r.WaitIdle(context.Background())
	b, err := hs.submit("three", Reject)
	if err != nil {
		t.Fatalf("reject while idle: %v", err)
	}
	if _, e := outcome(t, b.Run); e.Status != StatusSuccess {
		t.Errorf("status %q", e.Status)
	}
}

func TestInterruptKeepsRollbackUndoes(t *testing.T) {
	for _, st := range []Strategy{Interrupt, Rollback} {
		t.Run(string(st), func(t *testing.T) {
			hs := newHarness(t, "", Handler{Undoable: true})
			hs.eng.gate("one")
			a, _ := hs.submit("one", Enqueue)
			<-hs.eng.began
			b, err := hs.submit("two", st)
			if err != nil {
				t.Fatal(err)
			}
			_, ea := outcome(t, a.Run)
			_, eb := outcome(t, b.Run)
			want := []string{"one", "two"}
			wantErr := "interrupted by a later run"
			if st == Rollback {
				want, wantErr = []string{"two"}, "rolled back by a later run (multitask_strategy rollback)"
			}
			if ea.Status != StatusInterrupted || ea.Error != wantErr || eb.Status != StatusSuccess {
				t.Errorf("first %+v, second %+v", ea, eb)
			}
			if diff := cmp.Diff(want, hs.messages()); diff != "" {
				t.Errorf("thread (-want +got):\n%s", diff)
			}
			if st == Rollback && !a.Run.Info().RolledBack {
				t.Error("the first run does not say it was rolled back")
			}
		})
	}
}

func TestQueueCapAndCancel(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	g := hs.eng.gate("one")
	a, _ := hs.submit("one", Enqueue)
	<-hs.eng.began
	var waiting []Ticket
	for _, text := range []string{"two", "three", "four"} {
		tk, err := hs.submit(text, Enqueue)
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, tk)
	}
	var full *FullError
	if _, err := hs.submit("five", Enqueue); !errors.As(err, &full) || full.Waiting != 3 || full.Global {
		t.Fatalf("over the cap: %v", err)
	}
	if !hs.r.Cancel(waiting[0].Run.ID(), nil) {
		t.Fatal("cancel of a waiting run found nothing")
	}
	if _, e := outcome(t, waiting[0].Run); e.Status != StatusInterrupted || e.Error != "cancelled before it started" {
		t.Errorf("cancelled waiting run: %+v", e)
	}
	stopped, dropped := hs.r.Stop("api:th_1")
	if !stopped || dropped != 2 {
		t.Errorf("stop = %v, %d; want true, 2", stopped, dropped)
	}
	if _, e := outcome(t, a.Run); e.Status != StatusInterrupted {
		t.Errorf("stopped run: %+v", e)
	}
	_ = g
	hs.r.WaitIdle(context.Background())
	if n := pendingCount(t, hs.st); n != 0 {
		t.Errorf("%d runs still stored after cancel and stop", n)
	}
}

func pendingCount(t *testing.T, st *store.Store) int {
	n := 0
	st.View(func(tx *store.Tx) error {
		return tx.QueuedRuns(func(uint64, []byte) error { n++; return nil })
	})
	return n
}

func TestFollowerRejoinsFromSeq(t *testing.T) {
	hs := newHarness(t, "", Handler{})
	tk, _ := hs.submit("one", Enqueue)
	names, _ := outcome(t, tk.Run)
	var again []int
	for rec := range tk.Run.Events(context.Background(), 2) {
		again = append(again, rec.Seq)
	}
	want := []int{}
	for i := 3; i <= len(names); i++ {
		want = append(want, i)
	}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("rejoin after seq 2 (-want +got):\n%s", diff)
	}
}

func TestRecoverResumesQueuedAndReportsInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	hs := newHarness(t, path, Handler{})
	hs.eng.gate("one")
	a, _ := hs.submit("one", Enqueue)
	<-hs.eng.began
	b, _ := hs.submit("two", Enqueue)
	// A crash: the store is left as the process left it, one run
	// recorded as running.
	hs.st.Update(func(tx *store.Tx) error {
		return tx.PutRun(&store.Run{ID: a.Run.ID(), ThreadID: "th_1", ChatKey: "api:th_1", Status: store.RunRunning})
	})
	hs.r.Refuse()
	hs.r.Stop("api:th_1") // the waiting run stays: we re-store it as the crash left it
	data := b.Run.Req
	hs.st.Update(func(tx *store.Tx) error {
		_, err := tx.PutQueuedRun([]byte(`{"id":"` + data.ID + `","thread_id":"th_1","input":"two","user":"api:u"}`))
		return err
	})
	hs.close()

	var told []string
	hs2 := newHarness(t, path, Handler{Keep: time.Minute, Interrupted: func(tx *store.Tx, rec *store.Run, _ []*store.Task) error {
		told = append(told, rec.ID)
		return nil
	}})
	var mu sync.Mutex
	var followed []string
	hs2.h.Observe = func(run *Run, ev event.Event) {
		if _, ok := ev.(event.Began); ok {
			mu.Lock()
			followed = append(followed, run.ID())
			mu.Unlock()
		}
	}
	hs2.r.Handle(OriginAPI, hs2.h)
	resumed, interrupted, err := hs2.r.Recover()
	if err != nil || resumed != 1 || interrupted != 1 {
		t.Fatalf("recover = %d, %d, %v", resumed, interrupted, err)
	}
	if diff := cmp.Diff([]string{a.Run.ID()}, told); diff != "" {
		t.Errorf("interrupted runs reported (-want +got):\n%s", diff)
	}
	run, ok := hs2.r.Lookup(data.ID)
	if !ok {
		t.Fatal("the resumed run is not found by its id")
	}
	if _, e := outcome(t, run); e.Status != StatusSuccess {
		t.Errorf("resumed run: %+v", e)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{data.ID}, followed); diff != "" {
		t.Errorf("resumed runs observed (-want +got):\n%s", diff)
	}
}

// TestSubmitDuringShutdownIsKept: a run stored while shutdown begins is
// accepted (its front end may have marked its event seen in the same
// commit) and runs after the restart.
func TestSubmitDuringShutdownIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	hs := newHarness(t, path, Handler{})
	tk, err := hs.r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "late", Also: func(*store.Tx) error {
		hs.r.Refuse() // shutdown begins while the request is being stored
		return nil
	}})
	if err != nil {
		t.Fatalf("submit racing shutdown: %v", err)
	}
	if info := tk.Run.Info(); info.Status != StatusPending {
		t.Errorf("the run = %+v, want pending", info)
	}
	hs.close()
	hs2 := newHarness(t, path, Handler{Keep: time.Minute})
	if resumed, _, err := hs2.r.Recover(); err != nil || resumed != 1 {
		t.Fatalf("recover = %d, %v", resumed, err)
	}
	run, _ := hs2.r.Lookup(tk.Run.ID())
	if _, e := outcome(t, run); e.Status != StatusSuccess {
		t.Errorf("after the restart: %+v", e)
	}
}

// TestRunsWaitForStart: runs submitted before Start (the front ends cannot
// show them yet) are stored and wait; Start starts them in order.
func TestRunsWaitForStart(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := &scripted{st: st, gates: map[string]chan struct{}{}, began: make(chan string, 10)}
	r, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background(), 0, errors.New("test over"))
	r.Handle(OriginAPI, Handler{Engine: eng})
	a, _ := r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "one"})
	b, _ := r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "two"})
	if got := a.Run.Info().Status; got != StatusPending || pendingCount(t, st) != 2 {
		t.Fatalf("before Start: %s, %d stored", got, pendingCount(t, st))
	}
	r.Start()
	outcome(t, a.Run)
	outcome(t, b.Run)
	if diff := cmp.Diff([]string{"one", "two"}, []string{<-eng.began, <-eng.began}); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// countingQueue is another Queue over the bolt one: the seam a queue on
// another engine would use.
type countingQueue struct {
	Queue
	mu                     sync.Mutex
	pushed, taken, dropped int
}

func (q *countingQueue) Push(req *Request) (uint64, error) {
	q.mu.Lock()
	q.pushed++
	q.mu.Unlock()
	return q.Queue.Push(req)
}

func (q *countingQueue) Take(tx *store.Tx, seq uint64) error {
	q.mu.Lock()
	q.taken++
	q.mu.Unlock()
	return q.Queue.Take(tx, seq)
}

func (q *countingQueue) Drop(seq uint64) error {
	q.mu.Lock()
	q.dropped++
	q.mu.Unlock()
	return q.Queue.Drop(seq)
}

// TestQueueIsPluggable: the runner keeps its waiting runs only through
// Options.Queue — each run is pushed once and taken in its begin commit,
// a cancelled one dropped.
func TestQueueIsPluggable(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q := &countingQueue{Queue: BoltQueue(st)}
	eng := &scripted{st: st, gates: map[string]chan struct{}{}, began: make(chan string, 10)}
	r, err := New(Options{Store: st, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background(), 0, errors.New("test over"))
	r.Handle(OriginAPI, Handler{Engine: eng})
	g := eng.gate("one")
	a, _ := r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "one"})
	b, _ := r.Submit(Request{ThreadID: "th_1", User: "api:u", Text: "two"})
	r.Start()
	<-eng.began
	r.Cancel(b.Run.ID(), nil)
	close(g)
	outcome(t, a.Run)
	outcome(t, b.Run)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pushed != 2 || q.taken != 1 || q.dropped != 1 {
		t.Errorf("pushed %d, taken %d, dropped %d; want 2, 1, 1", q.pushed, q.taken, q.dropped)
	}
}
