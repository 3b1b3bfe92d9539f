package choice

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/store"
)

// chat is a conversation as the person sees it: the messages sent into
// it, by id, edits applied.
type chat struct {
	buttons bool
	hold    chan struct{} // when set, a new message's Post returns once it is closed
	mu      sync.Mutex
	msgs    map[string]*bus.Outbound
	posted  chan string // ids of new messages
}

func newChat(buttons bool) *chat {
	return &chat{buttons: buttons, msgs: map[string]*bus.Outbound{}, posted: make(chan string, 10)}
}

func (c *chat) Post(_ context.Context, _ string, out *bus.Outbound) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if out.Channel == "gone" {
		return "", errors.New("no sender for channel gone")
	}
	if out.Kind == bus.OutEdit {
		c.msgs[out.EditID] = out
		return out.EditID, nil
	}
	id := "m" + string(rune('0'+len(c.msgs)))
	c.msgs[id] = out
	c.posted <- id
	if c.hold != nil {
		c.mu.Unlock()
		<-c.hold
		c.mu.Lock()
	}
	return id, nil
}

func (c *chat) ShowsButtons(string) bool { return c.buttons }

func (c *chat) text(id string) (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[id].Text, len(c.msgs[id].Buttons)
}

func newAsks(t *testing.T, c *chat) *Asks {
	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := NewAsks(st, nil)
	a.SetPoster(c)
	return a
}

var perm = []string{"Allow", "Reject"}

type asked struct {
	opt int
	err error
}

func ask(a *Asks, ctx context.Context, key string, wait time.Duration) chan asked {
	res := make(chan asked, 1)
	go func() {
		opt, err := a.Ask(ctx, key, "telegram:42", "🔐 coder asks for permission: Editing notes.txt", perm, wait)
		res <- asked{opt, err}
	}()
	return res
}

// TestTypedAnswers: without buttons the options are a numbered list; the
// asked person's number or label answers, anyone else's text does not.
func TestTypedAnswers(t *testing.T) {
	for _, typed := range []string{"2", "reject", "REJECT!", " 2. "} {
		c := newChat(false)
		a := newAsks(t, c)
		res := ask(a, t.Context(), "telegram:100:7", time.Hour)
		id := <-c.posted
		want := "🔐 coder asks for permission: Editing notes.txt\n\n1. Allow\n2. Reject\n\nReply with a number."
		if got, _ := c.text(id); got != want {
			t.Fatalf("the question reads %q", got)
		}
		for _, in := range []*bus.Inbound{
			{Channel: "telegram", ChatID: "100", Topic: "7", UserID: "43", Text: "1"},  // someone else
			{Channel: "telegram", ChatID: "100", UserID: "42", Text: "1"},              // another topic
			{Channel: "telegram", ChatID: "100", Topic: "7", UserID: "42", Text: "3"},  // no such option
			{Channel: "telegram", ChatID: "100", Topic: "7", UserID: "42", Text: "ok"}, // not an option
		} {
			if a.Typed(t.Context(), in) {
				t.Errorf("%+v was taken as the answer", in)
			}
		}
		if !a.Typed(t.Context(), &bus.Inbound{Channel: "telegram", ChatID: "100", Topic: "7", UserID: "42", UserName: "ann", Text: typed}) {
			t.Fatalf("%q was not taken as the answer", typed)
		}
		if r := <-res; r.opt != 1 || r.err != nil {
			t.Errorf("%q: Ask = %d, %v", typed, r.opt, r.err)
		}
		if got, _ := c.text(id); !strings.HasSuffix(got, "\n\n✅ Reject — chosen by ann") {
			t.Errorf("the answered question reads %q", got)
		}
		if a.Typed(t.Context(), &bus.Inbound{Channel: "telegram", ChatID: "100", Topic: "7", UserID: "42", Text: "1"}) {
			t.Error("a second answer was taken")
		}
	}
}

// TestAnswerBeforeTheSendReturns: the person sees the question and
// answers while its send is still being confirmed; the answer counts and
// the question's message shows it.
func TestAnswerBeforeTheSendReturns(t *testing.T) {
	a := newAsks(t, nil)
	synctest.Test(t, func(t *testing.T) {
		c := newChat(false) // its channels in the bubble: blocking on them is durable
		c.hold = make(chan struct{})
		a.SetPoster(c)
		res := ask(a, context.Background(), "telegram:42", time.Hour)
		id := <-c.posted
		typed := make(chan bool)
		go func() {
			typed <- a.Typed(context.Background(), &bus.Inbound{Channel: "telegram", ChatID: "42", UserID: "42", UserName: "ann", Text: "1"})
		}()
		synctest.Wait() // the send is not confirmed; the answer is in
		close(c.hold)
		if r := <-res; r.opt != 0 || r.err != nil {
			t.Errorf("Ask = %d, %v", r.opt, r.err)
		}
		if !<-typed {
			t.Fatal("the answer was not taken")
		}
		if got, _ := c.text(id); !strings.HasSuffix(got, "Editing notes.txt\n\n✅ Allow — chosen by ann") {
			t.Errorf("the question reads %q", got)
		}
	})
}

// TestPressAnswers: with buttons, the press the router claimed answers.
func TestPressAnswers(t *testing.T) {
	c := newChat(true)
	a := newAsks(t, c)
	res := ask(a, t.Context(), "slack:D1", time.Hour)
	id := <-c.posted
	text, buttons := c.text(id)
	if text != "🔐 coder asks for permission: Editing notes.txt" || buttons != 2 {
		t.Fatalf("the question reads %q with %d buttons", text, buttons)
	}
	rec, _ := a.pending(t)
	if !a.Answer(rec.ID, 0) {
		t.Fatal("the press found nobody waiting")
	}
	if r := <-res; r.opt != 0 || r.err != nil {
		t.Errorf("Ask = %d, %v", r.opt, r.err)
	}
	if a.Answer(rec.ID, 1) {
		t.Error("a press after the answer found the question waiting")
	}
}

// pending is the record of the one question waiting.
func (a *Asks) pending(t *testing.T) (*Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiting) != 1 {
		t.Fatalf("%d questions wait", len(a.waiting))
	}
	return a.waiting[0].rec, nil
}

// TestUnanswered: a question left unanswered ends at its time, one
// stopped ends at once; either closes it and says so in its message.
func TestUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop bool
		err  error
		note string
	}{
		{"timeout", false, ErrNoAnswer, "⌛ No answer within 10m0s; taken as no."},
		{"stopped", true, context.Canceled, "⏹ Stopped before an answer."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newChat(true)
			a := newAsks(t, c)
			var id string
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				res := ask(a, ctx, "lark:oc_1", 10*time.Minute)
				msg := <-c.posted
				rec, _ := a.pending(t)
				id = rec.ID
				if tc.stop {
					cancel()
				}
				r := <-res
				if !errors.Is(r.err, tc.err) {
					t.Errorf("Ask = %d, %v; want %v", r.opt, r.err, tc.err)
				}
				text, buttons := c.text(msg)
				if diff := cmp.Diff(rec.Text+"\n\n"+tc.note, text); diff != "" || buttons != 0 {
					t.Errorf("the question reads (-want +got):\n%s\nwith %d buttons", diff, buttons)
				}
				if a.Answer(rec.ID, 0) {
					t.Error("a late press found the question waiting")
				}
			})
			a.st.View(func(tx *store.Tx) error {
				if got, err := GetTx(tx, id); err != nil || !got.Answered || got.Answer != "no answer" {
					t.Errorf("the stored question is %+v, %v", got, err)
				}
				return nil
			})
		})
	}
}

// TestNobodyToAsk: a conversation whose channel cannot be reached.
func TestNobodyToAsk(t *testing.T) {
	a := newAsks(t, newChat(true))
	if _, err := a.Ask(t.Context(), "gone:1", "gone:2", "?", perm, time.Minute); !errors.Is(err, ErrNobody) {
		t.Errorf("Ask = %v", err)
	}
	if _, err := NewAsks(a.st, nil).Ask(t.Context(), "slack:D1", "slack:U1", "?", perm, time.Minute); !errors.Is(err, ErrNobody) {
		t.Errorf("Ask without a poster = %v", err)
	}
}
