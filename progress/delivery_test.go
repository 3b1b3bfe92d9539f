package progress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/outbox"
	"github.com/deerflow/deerflow/store"
)

// platform is a fake chat platform that edits messages (an EditThrottler
// with a one-second interval) and shows "typing…" (a Typer). It records
// what the chat sees, with the (fake) time since it started.
type platform struct {
	start time.Time
	mu    sync.Mutex
	next  int
	log   []string
}

func (p *platform) Name() string                      { return "plat" }
func (p *platform) EditInterval(string) time.Duration { return time.Second }

func (p *platform) Typing(context.Context, *bus.Outbound) error {
	p.record("typing")
	return nil
}

func (p *platform) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	switch out.Kind {
	case bus.OutMessage:
		p.mu.Lock()
		p.next++
		id := fmt.Sprintf("m%d", p.next)
		p.mu.Unlock()
		p.record(fmt.Sprintf("send %s final=%v: %s", id, out.Final, out.Text))
		return []string{id}, nil
	case bus.OutEdit:
		p.record(fmt.Sprintf("edit %s final=%v: %s", out.EditID, out.Final, out.Text))
		return []string{out.EditID}, nil
	}
	return nil, nil
}

func (p *platform) record(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, fmt.Sprintf("%v %s", time.Since(p.start), line))
}

func (p *platform) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// streamPlatform shows answers as they stream, like the terminal.
type streamPlatform struct{}

func (streamPlatform) Name() string        { return "term" }
func (streamPlatform) StreamsDeltas() bool { return true }
func (streamPlatform) Send(context.Context, *bus.Outbound) ([]string, error) {
	return nil, nil
}

func newOutbox(t *testing.T, senders ...bus.Sender) (*outbox.Outbox, *store.Store) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "deerflow.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ob, err := outbox.New(outbox.Options{Store: st, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range senders {
		ob.Register(s)
	}
	return ob, st
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestAnswerStreamsByEdits drives one run through a delivery: the first
// preview waits a moment, later versions are edits spaced by the chat's
// interval, and the answer is the final edit of the same message.
func TestAnswerStreamsByEdits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		finals := 0
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{
			Outbox: ob, Logger: quiet(), OnFinal: func() { finals++ },
		})
		defer d.Close()
		ctx := t.Context()

		d.Handle(ctx, event.TextDelta{Text: "Hel"})
		time.Sleep(time.Second)
		d.Handle(ctx, event.TextDelta{Text: "lo"})
		time.Sleep(time.Second)
		d.Handle(ctx, event.ToolCall{Name: "web_search", Summary: "deer"})
		d.Handle(ctx, event.Answer{Text: "Hello, world."})
		d.Settle()
		synctest.Wait()

		want := []string{
			"100ms typing",
			"700ms send m1 final=false: Hel",
			"1.7s edit m1 final=false: Hello",
			"2s edit m1 final=true: Hello, world.",
		}
		if diff := cmp.Diff(want, p.seen()); diff != "" {
			t.Errorf("the chat saw (-want +got):\n%s", diff)
		}
		if finals != 1 {
			t.Errorf("OnFinal called %d times, want once", finals)
		}
	})
}

// TestSubagentRepliesShowTheirOutcomeFirst: a subagent's reply is told its
// outcome before the answer goes out, and the router hears of the task.
func TestSubagentRepliesShowTheirOutcomeFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		var tasks []string
		ended := false
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{
			Outbox: ob, Logger: quiet(),
			OnTask:     func(tk event.Task, done bool) { tasks = append(tasks, fmt.Sprintf("%s done=%v", tk.ID, done)) },
			OnTasksEnd: func() { ended = true },
		})
		defer d.Close()
		ctx := t.Context()
		task := event.Task{ID: "t1", Description: "read the logs", Status: event.TaskRunning}
		d.Handle(ctx, event.TaskStarted{Task: task})
		time.Sleep(time.Second)
		task.Status, task.Duration, task.Result = event.TaskCompleted, 3*time.Second, "all quiet"
		d.Handle(ctx, event.TaskDone{Task: task})
		d.Handle(ctx, event.Answer{Text: "The logs are quiet."})
		synctest.Wait()

		got := p.seen()
		if len(got) < 3 || !strings.Contains(got[len(got)-1], "send m2 final=true: The logs are quiet.") ||
			!strings.Contains(strings.Join(got, "\n"), "edit m1 final=true: ✅ read the logs · done in 3.0s") {
			t.Errorf("the chat saw:\n%s", strings.Join(got, "\n"))
		}
		if diff := cmp.Diff([]string{"t1 done=false", "t1 done=true"}, tasks); diff != "" {
			t.Errorf("OnTask (-want +got):\n%s", diff)
		}
		if !ended {
			t.Error("OnTasksEnd was not called")
		}
	})
}

func TestOnlyAnswersThatAreNotStreamedAreRecorded(t *testing.T) {
	ob, _ := newOutbox(t, streamPlatform{}, &platform{start: time.Now()})
	ctx := context.Background()
	term := New(ctx, &bus.Inbound{Channel: "term", ChatID: "local"}, Options{Outbox: ob, Logger: quiet()})
	defer term.Close()
	if term.AnswerTx() != nil {
		t.Error("a streamed answer is recorded in the outbox: a restart would print it again")
	}
	plat := New(ctx, &bus.Inbound{Channel: "plat", ChatID: "c1"}, Options{Outbox: ob, Logger: quiet()})
	defer plat.Close()
	if plat.AnswerTx() == nil {
		t.Error("a platform answer is not recorded with the answer")
	}
}

// TestFinalVersionsNeverWait: a subagent that ends 100 ms after its reply
// was last edited, and the answer right behind it, go out at once — the
// edit throttle (1 s here) and the first-show delay hold back previews,
// never an outcome or an answer. A subagent done before its reply was
// first shown gets one message, final.
func TestFinalVersionsNeverWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{Outbox: ob, Logger: quiet()})
		defer d.Close()
		ctx := t.Context()
		slow := event.Task{ID: "t1", Description: "read the logs", Status: event.TaskRunning}
		quick := event.Task{ID: "t2", Description: "check the disk", Status: event.TaskRunning}
		d.Handle(ctx, event.TaskStarted{Task: slow})
		time.Sleep(800 * time.Millisecond) // t1's reply is shown at 700 ms
		d.Handle(ctx, event.TaskStarted{Task: quick})
		time.Sleep(100 * time.Millisecond)
		quick.Status, quick.Duration = event.TaskCompleted, 100*time.Millisecond
		d.Handle(ctx, event.TaskDone{Task: quick})
		slow.Status, slow.Duration = event.TaskCompleted, 900*time.Millisecond
		d.Handle(ctx, event.TaskDone{Task: slow})
		d.Handle(ctx, event.Answer{Text: "All fine."})
		synctest.Wait()

		want := []string{
			"100ms typing",
			"700ms send m1 final=false: ⏳ read the logs · working",
			"900ms send m2 final=true: ✅ check the disk · done in 100ms",
			"900ms edit m1 final=true: ✅ read the logs · done in 900ms",
			"900ms send m3 final=true: All fine.",
		}
		got := p.seen()
		sort.Strings(got[2:4]) // the two outcomes may go in either order
		sort.Strings(want[2:4])
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the chat saw (-want +got):\n%s", diff)
		}
	})
}

// TestRestartText: a run stopped by a restart ends with the chat message's
// sentence (send /retry), or with Options.RestartText when the front end
// has its own (a scheduled run's); /stop's "Stopped." is the same for both.
func TestRestartText(t *testing.T) {
	for _, tt := range []struct {
		cause   error
		restart string
		want    string
	}{
		{errors.New("shutting down"), "", "I had to stop in the middle of this because I'm restarting; once I'm back, send /retry to run your message again."},
		{errors.New("shutting down"), "⏰ stopped for a restart", "⏰ stopped for a restart"},
		{agent.ErrStopped, "⏰ stopped for a restart", "Stopped."},
	} {
		synctest.Test(t, func(t *testing.T) {
			p := &platform{start: time.Now()}
			ob, _ := newOutbox(t, p)
			d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{
				Outbox: ob, Logger: quiet(), RestartText: tt.restart,
			})
			defer d.Close()
			d.Handle(t.Context(), event.Stopped{Err: tt.cause})
			d.Settle()
			synctest.Wait()
			seen := p.seen()
			if len(seen) == 0 || !strings.HasSuffix(seen[len(seen)-1], ": "+tt.want) {
				t.Errorf("restart text %q, cause %v: the chat saw %q; want it to end with %q", tt.restart, tt.cause, seen, tt.want)
			}
		})
	}
}

// TestClosedEditorSendsNothingMore: once a delivery is closed while its
// preview waits for the first-show delay, its editor sends nothing, not
// even when its timer fires (halt no longer waits for the editor's loop
// to end, so the loop itself must keep to that).
func TestClosedEditorSendsNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{Outbox: ob, Logger: quiet()})
		d.Handle(t.Context(), event.TextDelta{Text: "half an answer"})
		time.Sleep(300 * time.Millisecond) // the preview would show at 700 ms
		d.Close()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"100ms typing"}, p.seen()); diff != "" {
			t.Errorf("the chat saw (-want +got):\n%s", diff)
		}
	})
}
