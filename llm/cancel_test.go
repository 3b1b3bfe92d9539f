package llm

import (
	"context"
	"errors"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// TestCancelMidStream is /stop: the caller cancels while the model is
// still answering; the sequence ends with context.Canceled itself and the
// provider sees the request go away.
func TestCancelMidStream(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Text: "a long answer that never ends", Chunk: 2, Hold: make(chan struct{}), HoldAfter: 3})
	c, _ := newClient(t, s, Options{MaxRetries: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var text string
	var last error
	for ch, err := range c.Stream(ctx, userRequest("hi")) {
		if err != nil {
			last = err
			break
		}
		text += ch.Text
		if text == "a lo" {
			cancel()
		}
	}
	if last != context.Canceled {
		t.Errorf("error %v (%T), want context.Canceled itself", last, last)
	}
	s.WaitCancelled(1)
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestCancelBeforeHeaders(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Hold: make(chan struct{})})
	c, _ := newClient(t, s, Options{MaxRetries: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() {
		_, err := Collect(c.Stream(ctx, userRequest("hi")), nil)
		done <- err
	}()
	s.WaitRequests(1)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("error %v, want context.Canceled", err)
	}
	s.WaitCancelled(1)
}

// TestCancelDuringBackoff cancels while the client waits to retry, with
// the real timer: the wait ends at once.
func TestCancelDuringBackoff(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Status: 503, RetryAfter: "50"}, fakeopenai.Turn{Text: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(Options{BaseURL: s.URL, Model: "m", MaxRetries: 3, Logf: func(context.Context, string, ...any) { cancel() }})
	_, err := Collect(c.Stream(ctx, userRequest("hi")), nil)
	if err != context.Canceled {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	s := fakeopenai.New(t)
	c, _ := newClient(t, s, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Collect(c.Stream(ctx, userRequest("hi")), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// TestEarlyBreak stops iterating mid-answer: the stream is closed, which
// the provider sees as a disconnect, and the client stays usable.
func TestEarlyBreak(t *testing.T) {
	s := fakeopenai.New(t)
	s.Script(fakeopenai.Turn{Text: "first part, then more", Chunk: 4, Hold: make(chan struct{}), HoldAfter: 2}, fakeopenai.Turn{Text: "again"})
	c, _ := newClient(t, s, Options{})
	for ch, err := range c.Stream(context.Background(), userRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Text != "" {
			break
		}
	}
	s.WaitCancelled(1)
	if resp, err := Collect(c.Stream(context.Background(), userRequest("hi")), nil); err != nil || resp.Message.Content != "again" {
		t.Fatalf("second call: %v %+v", err, resp)
	}
	s.WaitIdle()
}
