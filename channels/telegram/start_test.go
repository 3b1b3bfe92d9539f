package telegram

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// publisher accepts every message.
type publisher struct{ got chan *bus.Inbound }

func (p publisher) Publish(_ context.Context, in *bus.Inbound) error {
	p.got <- in
	return nil
}

func (publisher) StartsRun(string) bool { return false }

// started runs c against fake until the returned stop is called; stop
// returns Start's error.
func started(t *testing.T, c *Channel, pub bus.Publisher) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, pub) }()
	t.Cleanup(cancel)
	return func() error {
		cancel()
		return wait(t, done, "Start to return")
	}
}

// TestDownloadStopsWithChannel: an attachment being fetched when the
// channel stops is given up, and one opened afterwards is refused.
func TestDownloadStopsWithChannel(t *testing.T) {
	fake := faketelegram.New(t, "123:secret")
	began, ended := fake.Stall("getFile")
	c, err := New(Options{Token: fake.Token, APIURL: fake.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pub := publisher{got: make(chan *bus.Inbound, 1)}
	stop := started(t, c, pub)

	ann := faketelegram.User{ID: 501, FirstName: "Ann"}
	m := faketelegram.Private(ann, "")
	m.Caption = "a file"
	m.Document = &faketelegram.Document{FileID: "doc1", FileUniqueID: "u1", FileName: "a.txt", FileSize: 3}
	fake.PushMessage(m)
	in := wait(t, pub.got, "the message")
	if len(in.Files) != 1 {
		t.Fatalf("files = %+v, want one", in.Files)
	}
	opened := make(chan error, 1)
	go func() {
		r, err := in.Files[0].Open()
		if err == nil {
			r.Close()
		}
		opened <- err
	}()
	wait(t, began, "getFile")
	if err := stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := wait(t, opened, "Open to give up"); err == nil {
		t.Error("Open succeeded while getFile hung")
	}
	wait(t, ended, "getFile to be given up")
	if _, err := c.Reattach("doc1")(); !errors.Is(err, channels.ErrStopped) {
		t.Errorf("Open after Start returned: %v, want %v", err, channels.ErrStopped)
	}
}

// TestStartWaitsForCommandMenu: Start returns only after the command
// menu's registration has ended.
func TestStartWaitsForCommandMenu(t *testing.T) {
	fake := faketelegram.New(t, "123:secret")
	began, ended := fake.Stall("setMyCommands")
	c, err := New(Options{Token: fake.Token, APIURL: fake.URL, PollTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop := started(t, c, publisher{got: make(chan *bus.Inbound, 1)})
	wait(t, began, "setMyCommands")
	if err := stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := running("(*Bot).SetMyCommands"); n > 0 {
		t.Errorf("%d setMyCommands goroutines still running after Start returned", n)
	}
	wait(t, ended, "setMyCommands to be given up")
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
