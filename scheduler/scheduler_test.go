package scheduler

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/deerflow/deerflow/runner"
	"github.com/deerflow/deerflow/store"
)

const chat = "telegram:42"

// fakeRunner stands for runner.Submit: it stores the request's Also in one
// commit, as the runner does, and records what was submitted.
type fakeRunner struct {
	st   *store.Store
	mu   sync.Mutex
	reqs []runner.Request
	err  error // returned without storing anything, when set
}

func (f *fakeRunner) submit(req runner.Request) (runner.Ticket, error) {
	f.mu.Lock()
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return runner.Ticket{}, err
	}
	if err := f.st.Update(func(tx *store.Tx) error { return req.Also(tx) }); err != nil {
		return runner.Ticket{}, err
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return runner.Ticket{}, nil
}

func (f *fakeRunner) submitted() []runner.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runner.Request(nil), f.reqs...)
}

type notices struct {
	mu   sync.Mutex
	text []string
}

func (n *notices) add(chatKey, text string) {
	n.mu.Lock()
	n.text = append(n.text, chatKey+": "+text)
	n.mu.Unlock()
}

func (n *notices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.text...)
}

type harness struct {
	t    *testing.T
	path string
	st   *store.Store
	run  *fakeRunner
	note *notices
	opts Options
	s    *Scheduler
}

// newHarness opens a store and a scheduler over it, inside the test's
// bubble (call it from synctest.Test).
func newHarness(t *testing.T, edit ...func(*Options)) *harness {
	h := &harness{t: t, path: filepath.Join(t.TempDir(), "deerflow.db"), note: &notices{}}
	h.opts = Options{MinInterval: time.Minute, MaxFailures: 3, Timezone: "UTC", Notify: h.note.add}
	for _, e := range edit {
		e(&h.opts)
	}
	h.open()
	return h
}

func (h *harness) open() {
	st, err := store.Open(h.path, store.Options{NoSync: true})
	if err != nil {
		h.t.Fatal(err)
	}
	h.st = st
	h.run = &fakeRunner{st: st}
	opts := h.opts
	opts.Store, opts.Submit = st, h.run.submit
	if h.s, err = New(opts); err != nil {
		h.t.Fatal(err)
	}
}

// restart drops the scheduler and its store, as a crash would, and opens
// both again.
func (h *harness) restart() {
	h.s.Close()
	h.st.Close()
	h.open()
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.s.Start(ctx)
	h.t.Cleanup(func() {
		cancel()
		h.s.Close()
		h.st.Close()
	})
}

func (h *harness) create(spec Spec, desc string) Task {
	h.t.Helper()
	task, err := h.s.Create(NewTask{ChatKey: chat, User: "telegram:7", Prompt: "summarize the news", Description: desc, Spec: spec})
	if err != nil {
		h.t.Fatal(err)
	}
	return task
}

func runHeader(t *testing.T, req runner.Request) string {
	var d RunData
	if err := json.Unmarshal(req.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Header
}

func TestEveryOccurrenceRunsOnceAsANewRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		err := h.st.Update(func(tx *store.Tx) error { // the chat switched to another model
			if err := tx.PutThread(&store.Thread{ID: "th_chat", ChatKey: chat, Model: "big"}); err != nil {
				return err
			}
			return tx.SetChatThread(chat, "th_chat")
		})
		if err != nil {
			t.Fatal(err)
		}
		task := h.create(Spec{Every: "1m"}, "news digest")
		h.start()
		time.Sleep(90 * time.Second)
		synctest.Wait()
		reqs := h.run.submitted()
		if len(reqs) != 1 {
			t.Fatalf("after 90 s: %d runs, want 1", len(reqs))
		}
		q := reqs[0]
		if q.Origin != runner.OriginSchedule || q.Conv != chat || q.ChatKey != chat || q.User != "telegram:7" || q.Text != "summarize the news" ||
			q.Model != "big" || q.ThreadID == "th_chat" || !strings.HasPrefix(q.ID, runner.ScheduledRunPrefix) {
			t.Errorf("request %+v", q)
		}
		if got := runHeader(t, q); got != "⏰ news digest" {
			t.Errorf("header %q", got)
		}
		// The previous run has not ended: the next occurrence is skipped,
		// not run beside it.
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 1 {
			t.Fatalf("an occurrence ran beside the unfinished one: %d runs", n)
		}
		if got := h.s.Tasks(chat)[0].LastStatus; !strings.Contains(got, "skipped") {
			t.Errorf("last status %q", got)
		}
		h.s.Ended(q, runner.StatusSuccess, "")
		time.Sleep(time.Minute)
		synctest.Wait()
		reqs = h.run.submitted()
		if len(reqs) != 2 || reqs[1].ThreadID == reqs[0].ThreadID {
			t.Fatalf("want a second run on a fresh thread: %+v", reqs)
		}
		got := h.s.Tasks(chat)[0]
		if got.ID != task.ID || got.LastStatus != "ok" || got.LastRun.IsZero() {
			t.Errorf("task after a success: %+v", got)
		}
	})
}

// TestRestartNeitherLosesNorRepeats: an occurrence claimed before a crash
// is not run again, one due while the service was down runs once (for all
// it missed), late, and a one-shot whose time passed runs once.
func TestRestartNeitherLosesNorRepeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		every := h.create(Spec{Every: "10m"}, "every ten")
		at := time.Now().Add(30 * time.Minute).Format(time.RFC3339)
		h.create(Spec{At: at}, "once")
		h.start()
		time.Sleep(10*time.Minute + time.Second)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 1 {
			t.Fatalf("%d runs before the crash, want 1", n)
		}
		first := h.run.submitted()[0]
		h.s.Ended(first, runner.StatusSuccess, "")
		synctest.Wait()

		h.restart() // the first occurrence was claimed: not again
		h.s.Start(context.Background())
		synctest.Wait()
		if n := len(h.run.submitted()); n != 0 {
			t.Fatalf("a claimed occurrence ran again after the restart: %d", n)
		}
		h.s.Close()

		time.Sleep(time.Hour) // down for an hour: 6 occurrences and the one-shot missed
		h.restart()
		h.start()
		synctest.Wait()
		reqs := h.run.submitted()
		if len(reqs) != 2 {
			t.Fatalf("after the outage %d runs, want one per task", len(reqs))
		}
		for _, q := range reqs {
			if hd := runHeader(t, q); !strings.Contains(hd, "(late: it was due at") {
				t.Errorf("a late run does not say so: %q", hd)
			}
		}
		tasks := h.s.Tasks(chat)
		if len(tasks) != 1 || tasks[0].ID != every.ID {
			t.Fatalf("the one-shot stays after its run: %+v", tasks)
		}
		if next := tasks[0].NextRun; !next.After(time.Now()) || next.Sub(every.Created)%(10*time.Minute) != 0 {
			t.Errorf("next run %s is not the next on the grid", next)
		}
	})
}

func TestSubmitFailureLeavesTheOccurrenceDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.create(Spec{Every: "1m"}, "")
		h.run.err = runner.ErrClosed // shutting down: nothing stored
		h.start()
		time.Sleep(61 * time.Second)
		synctest.Wait()
		h.s.Close()
		h.st.Close()
		h.open() // the next process
		h.s.Start(context.Background())
		defer h.s.Close()
		synctest.Wait()
		if n := len(h.run.submitted()); n != 1 {
			t.Fatalf("the occurrence refused at shutdown: %d runs after the restart, want 1", n)
		}
	})
}

func TestFailuresInARowPauseTheTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		task := h.create(Spec{Every: "1m"}, "flaky")
		h.start()
		for i := range 3 {
			time.Sleep(time.Minute)
			synctest.Wait()
			reqs := h.run.submitted()
			if len(reqs) != i+1 {
				t.Fatalf("run %d: %d submitted", i+1, len(reqs))
			}
			h.s.Ended(reqs[i], runner.StatusError, "the model is unreachable")
			synctest.Wait()
		}
		got := h.s.Tasks(chat)[0]
		if !got.Paused || !strings.Contains(got.LastStatus, "paused after 3 failed runs") {
			t.Fatalf("task after 3 failures: %+v", got)
		}
		if n := h.note.all(); len(n) != 1 || !strings.Contains(n[0], "I paused the scheduled task "+task.ID) {
			t.Errorf("notices %q", n)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 3 {
			t.Errorf("a paused task ran: %d runs", n)
		}
		if !strings.Contains(h.s.ListText(chat), "paused") {
			t.Errorf("/schedules does not say it is paused:\n%s", h.s.ListText(chat))
		}
	})
}

func TestCreatorNoLongerAllowedPausesTheTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		allowed := true
		h := newHarness(t, func(o *Options) {
			o.Allowed = func(user, _ string) bool { mu.Lock(); defer mu.Unlock(); return allowed }
		})
		h.create(Spec{Every: "1m"}, "")
		mu.Lock()
		allowed = false
		mu.Unlock()
		h.start()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 0 {
			t.Fatalf("a task of a user no longer allowed ran %d times", n)
		}
		if got := h.s.Tasks(chat)[0]; !got.Paused {
			t.Errorf("not paused: %+v", got)
		}
	})
}

func TestBusyConversationSkipsAndSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.create(Spec{Every: "1m"}, "digest")
		h.run.err = &runner.FullError{Waiting: 20}
		h.start()
		time.Sleep(61 * time.Second)
		synctest.Wait()
		got := h.s.Tasks(chat)[0]
		if !strings.Contains(got.LastStatus, "skipped") || !got.NextRun.After(time.Now()) {
			t.Errorf("task %+v", got)
		}
		if n := h.note.all(); len(n) != 1 || !strings.Contains(n[0], "20 messages were already waiting") {
			t.Errorf("notices %q", n)
		}
	})
}

// TestOneShotWaitsForRoom: a one-shot due while its conversation's queue
// is full is not skipped (it would be lost): it runs once there is room.
func TestOneShotWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.create(Spec{At: time.Now().Add(30 * time.Second).Format(time.RFC3339)}, "once")
		h.run.mu.Lock()
		h.run.err = &runner.FullError{Waiting: 20}
		h.run.mu.Unlock()
		h.start()
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if tasks := h.s.Tasks(chat); len(tasks) != 1 || len(h.note.all()) != 0 {
			t.Fatalf("a one-shot refused for a full queue: %+v, notices %q", tasks, h.note.all())
		}
		h.run.mu.Lock()
		h.run.err = nil
		h.run.mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 1 || len(h.s.Tasks(chat)) != 0 {
			t.Errorf("%d runs once there was room; tasks left %+v", n, h.s.Tasks(chat))
		}
	})
}

// TestCancelledTaskRunsNoMore: once cancelled (/unschedule,
// cancel_scheduled_task), a task's later occurrences never run, also
// across a restart.
func TestCancelledTaskRunsNoMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		task := h.create(Spec{Every: "1m"}, "ticker")
		h.start()
		time.Sleep(90 * time.Second)
		synctest.Wait()
		reqs := h.run.submitted()
		if len(reqs) != 1 {
			t.Fatalf("after 90 s: %d runs, want 1", len(reqs))
		}
		h.s.Ended(reqs[0], runner.StatusSuccess, "")
		if _, err := h.s.Cancel(chat, task.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 1 {
			t.Errorf("%d runs after the task was cancelled; want none after the first", n-1)
		}
		h.restart()
		h.s.Start(t.Context())
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(h.run.submitted()); n != 0 {
			t.Errorf("%d runs after a restart of a cancelled task", n)
		}
		if got := h.s.Tasks(chat); len(got) != 0 {
			t.Errorf("tasks left: %+v", got)
		}
	})
}

// TestContinuedTaskKeepsItsThread: a task scheduled with continue runs
// every occurrence on one thread of its own (not the chat's), so each run
// sees the earlier ones; across a restart too.
func TestContinuedTaskKeepsItsThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		task, err := h.s.Create(NewTask{ChatKey: chat, User: "telegram:7", Prompt: "what changed since the last run?", Spec: Spec{Every: "1m"}, Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		h.start()
		var threads []string
		for range 2 {
			time.Sleep(time.Minute)
			synctest.Wait()
			reqs := h.run.submitted()
			last := reqs[len(reqs)-1]
			threads = append(threads, last.ThreadID)
			h.s.Ended(last, runner.StatusSuccess, "")
		}
		h.restart()
		h.s.Start(t.Context())
		time.Sleep(time.Minute)
		synctest.Wait()
		if reqs := h.run.submitted(); len(reqs) > 0 {
			threads = append(threads, reqs[len(reqs)-1].ThreadID)
		}
		if len(threads) != 3 || threads[0] == "" || threads[0] != threads[1] || threads[1] != threads[2] {
			t.Errorf("task %s ran on threads %q; want one thread, three times", task.ID, threads)
		}
	})
}
