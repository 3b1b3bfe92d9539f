package channels

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestLink(t *testing.T) {
	var l Link
	if h := l.Health(); h.Connected || h.Detail != "connecting" || !h.Since.IsZero() {
		t.Errorf("zero Link = %+v, want connecting", h)
	}
	l.Set(true, "polling")
	up := l.Health()
	if !up.Connected || up.Detail != "polling" || up.Since.IsZero() {
		t.Fatalf("after Set(true) = %+v", up)
	}
	l.Set(true, "still polling")
	if h := l.Health(); h.Since != up.Since || h.Detail != "still polling" {
		t.Errorf("Since moved without a change of state: %+v, was %+v", h, up)
	}
	l.Set(false, "getUpdates failed: 502 Bad Gateway")
	if h := l.Health(); h.Connected || h.Detail != "getUpdates failed: 502 Bad Gateway" || h.Since.Before(up.Since) {
		t.Errorf("after Set(false) = %+v", h)
	}
}

func TestWait(t *testing.T) {
	lim := rate.NewLimiter(rate.Every(time.Hour), 1)
	if d, err := Wait(context.Background(), lim); d != 0 || err != nil {
		t.Errorf("with a token free: waited %v, %v", d, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := Wait(ctx, lim); d != 0 || err == nil {
		t.Errorf("with no token and ctx done: waited %v, %v; want 0 and an error", d, err)
	}
	if _, err := Wait(context.Background(), rate.NewLimiter(1, 0)); err == nil {
		t.Error("a limiter that allows nothing did not fail")
	}
}
