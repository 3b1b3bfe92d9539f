package slack

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/internal/fakeslack"
)

// publisher accepts every message.
type publisher struct{ got chan *bus.Inbound }

func (p publisher) Publish(_ context.Context, in *bus.Inbound) error {
	p.got <- in
	return nil
}

func (publisher) StartsRun(string) bool { return false }

// TestStartWaitsForReactions: a reaction Slack never answers is given up
// when the channel stops, and Start returns only after it has.
func TestStartWaitsForReactions(t *testing.T) {
	fake := fakeslack.New(t)
	began, ended := fake.Stall("reactions.add")
	c, err := New(Options{BotToken: fake.BotToken, AppToken: fake.AppToken, APIURL: fake.URL + "/api/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := publisher{got: make(chan *bus.Inbound, 1)}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub) }()

	fake.Message("D0USER", "im", "U0USER", "hello", "")
	wait(t, pub.got, "the message")
	wait(t, began, "the reaction request")
	cancel()
	if err := wait(t, done, "Start to return"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := running("slack.(*Channel).react"); n > 0 {
		t.Errorf("%d reaction goroutines still running after Start returned", n)
	}
	wait(t, ended, "the reaction request to be given up")
}

// wait receives from ch, failing the test after 10 s.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// running counts the goroutines with fn on their stack.
func running(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}
