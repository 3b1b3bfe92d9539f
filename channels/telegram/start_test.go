package telegram

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	tgbot "github.com/go-telegram/bot"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/internal/testutil"
)

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
		return testutil.Wait(t, done, "Start to return")
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
	pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
	stop := started(t, c, pub)

	ann := faketelegram.User{ID: 501, FirstName: "Ann"}
	m := faketelegram.Private(ann, "")
	m.Caption = "a file"
	m.Document = &faketelegram.Document{FileID: "doc1", FileUniqueID: "u1", FileName: "a.txt", FileSize: 3}
	fake.PushMessage(m)
	in := testutil.Wait(t, pub.Got, "the message")
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
	testutil.Wait(t, began, "getFile")
	if err := stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := testutil.Wait(t, opened, "Open to give up"); err == nil {
		t.Error("Open succeeded while getFile hung")
	}
	testutil.Wait(t, ended, "getFile to be given up")
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
	stop := started(t, c, testutil.Publisher{Got: make(chan *bus.Inbound, 1)})
	testutil.Wait(t, began, "setMyCommands")
	if err := stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := testutil.Goroutines("(*Bot).SetMyCommands"); n > 0 {
		t.Errorf("%d setMyCommands goroutines still running after Start returned", n)
	}
	testutil.Wait(t, ended, "setMyCommands to be given up")
}

// TestStartWithWebhookSet: a bot that still has a webhook (from an earlier
// webhook deployment) is refused polling with 409 until it is deleted;
// Start deletes it then, once, and the waiting message arrives. A bot
// without one never has deleteWebhook called, so the first poll is the
// first call after getMe.
func TestStartWithWebhookSet(t *testing.T) {
	for _, hooked := range []bool{true, false} {
		fake := faketelegram.New(t, "123:secret")
		if hooked {
			other, err := tgbot.New(fake.Token, tgbot.WithServerURL(fake.URL), tgbot.WithSkipGetMe())
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := other.SetWebhook(context.Background(), &tgbot.SetWebhookParams{URL: "https://example.org/hook"}); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		c, err := New(Options{Token: fake.Token, APIURL: fake.URL, PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		pub := testutil.Publisher{Got: make(chan *bus.Inbound, 1)}
		stop := started(t, c, pub)
		fake.PushMessage(faketelegram.Private(faketelegram.User{ID: 501, FirstName: "Ann"}, "hello"))
		if in := testutil.Wait(t, pub.Got, "the message"); in.Text != "hello" {
			t.Errorf("hooked=%v: text = %q", hooked, in.Text)
		}
		if err := stop(); err != nil {
			t.Fatalf("Start: %v", err)
		}
		var methods []string
		for _, call := range fake.Calls() {
			if call.Method != "setMyCommands" && call.Method != "setWebhook" { // registered alongside
				methods = append(methods, fmt.Sprintf("%s %d", call.Method, call.Status))
			}
		}
		want := []string{"getMe 200", "getUpdates 200"}
		if hooked {
			want = []string{"getMe 200", "getUpdates 409", "deleteWebhook 200", "getUpdates 200"}
		}
		if len(methods) < len(want) || !slices.Equal(methods[:len(want)], want) {
			t.Errorf("hooked=%v: calls = %v, want them to begin %v", hooked, methods, want)
		}
		if n := len(fake.CallsOf("deleteWebhook")); hooked && n != 1 || !hooked && n != 0 {
			t.Errorf("hooked=%v: %d deleteWebhook calls", hooked, n)
		}
	}
}
