package progress

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/event"
)

func todos(statuses ...string) event.Todos {
	var ev event.Todos
	for i, s := range statuses {
		ev.Items = append(ev.Items, event.Todo{Content: "step " + string(rune('a'+i)), Status: s})
	}
	return ev
}

// TestChecklistIsOneEditedMessage: the run's checklist is its own message,
// first shown after the usual moment, then edited within the chat's
// budget (two live messages: every two seconds), its last state shown
// before the answer.
func TestChecklistIsOneEditedMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &platform{start: time.Now()}
		ob, _ := newOutbox(t, p)
		d := New(t.Context(), &bus.Inbound{Channel: "plat", ChatID: "c1", MessageID: "u1"}, Options{Outbox: ob, Logger: quiet()})
		defer d.Close()
		ctx := t.Context()
		d.Handle(ctx, todos(event.TodoInProgress, event.TodoPending))
		time.Sleep(time.Second)
		d.Handle(ctx, todos(event.TodoCompleted, event.TodoInProgress))
		time.Sleep(3 * time.Second)
		d.Handle(ctx, todos(event.TodoCompleted, event.TodoCompleted))
		d.Handle(ctx, event.Answer{Text: "Done."})
		synctest.Wait()
		want := []string{
			"100ms typing",
			"700ms send m1 final=false: Plan · 0/2 done\n◐ step a\n☐ step b",
			"2.7s edit m1 final=false: Plan · 1/2 done\n☑ step a\n◐ step b",
			"4s edit m1 final=true: Plan · 2/2 done\n☑ step a\n☑ step b",
			"4s send m2 final=true: Done.",
		}
		got := p.seen()
		got = slicesWithout(got, "typing", 1) // the renewals of typing… are not the point
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the chat saw (-want +got):\n%s", diff)
		}
	})
}

// slicesWithout drops the lines containing s after the first keep.
func slicesWithout(lines []string, s string, keep int) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, s) {
			if keep == 0 {
				continue
			}
			keep--
		}
		out = append(out, l)
	}
	return out
}

// TestChecklistStreamed: the terminal prints the checklist as a block on
// every change.
func TestChecklistStreamed(t *testing.T) {
	rec := &recorder{}
	ob, _ := newOutbox(t, rec)
	d := New(t.Context(), &bus.Inbound{Channel: "term", ChatID: "local"}, Options{Outbox: ob, Logger: quiet()})
	defer d.Close()
	d.Handle(t.Context(), todos(event.TodoInProgress))
	d.Handle(t.Context(), todos(event.TodoCompleted))
	want := []string{"Plan · 0/1 done\n◐ step a", "Plan · 1/1 done\n☑ step a"}
	if diff := cmp.Diff(want, rec.texts()); diff != "" {
		t.Errorf("the terminal printed (-want +got):\n%s", diff)
	}
}

// recorder is a terminal-like channel (it streams deltas) that records
// the messages it is sent.
type recorder struct {
	mu  sync.Mutex
	out []string
}

func (*recorder) Name() string        { return "term" }
func (*recorder) StreamsDeltas() bool { return true }
func (r *recorder) Send(_ context.Context, o *bus.Outbound) ([]string, error) {
	if o.Kind == bus.OutMessage {
		r.mu.Lock()
		r.out = append(r.out, o.Text)
		r.mu.Unlock()
	}
	return nil, nil
}

func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.out...)
}
