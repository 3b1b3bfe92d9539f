package channels

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestThrottle: in fake time, calls wait exactly as the limits say, per
// chat, per group and overall, and a zero limit never waits.
func TestThrottle(t *testing.T) {
	type call struct {
		chat  string
		group bool
	}
	tests := []struct {
		name  string
		l     Limits
		calls []call
		want  time.Duration // fake time the calls took
	}{
		{"no limits", Limits{}, []call{{"a", false}, {"a", false}, {"-1", true}, {"-1", true}}, 0},
		{"per chat", Limits{PerChatPerSecond: 2, PerChatBurst: 1}, []call{{"a", false}, {"a", false}, {"a", false}}, time.Second},
		{"per chat, burst", Limits{PerChatPerSecond: 1, PerChatBurst: 2}, []call{{"a", false}, {"a", false}, {"a", false}}, time.Second},
		{"chats apart", Limits{PerChatPerSecond: 1}, []call{{"a", false}, {"b", false}, {"c", false}}, 0},
		{"per group", Limits{PerGroupPerMinute: 20}, []call{{"-1", true}, {"-1", true}}, 3 * time.Second},
		{"a group is a chat too", Limits{PerChatPerSecond: 0.5, PerGroupPerMinute: 60}, []call{{"-1", true}, {"-1", true}}, 2 * time.Second},
		{"overall", Limits{GlobalPerSecond: 2}, []call{{"a", false}, {"b", false}, {"c", false}, {"", false}}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				th := NewThrottle(tt.l)
				start := time.Now()
				for i, c := range tt.calls {
					if _, err := th.Wait(context.Background(), c.chat, c.group); err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
				}
				if got := time.Since(start); got != tt.want {
					t.Errorf("the calls took %v, want %v", got, tt.want)
				}
			})
		})
	}
}

// TestThrottleForgetsIdleChats: past maxIdle chats, the ones whose bucket
// is full again are dropped, so the map does not grow without end.
func TestThrottleForgetsIdleChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := NewThrottle(Limits{PerChatPerSecond: 1})
		for i := range maxIdle {
			th.Wait(context.Background(), fmt.Sprint(i), false)
		}
		time.Sleep(time.Second)
		th.Wait(context.Background(), "new", false)
		if n := len(th.chats); n != 1 {
			t.Errorf("%d chats kept, want 1 (the idle ones forgotten)", n)
		}
	})
}

func TestEditInterval(t *testing.T) {
	tests := []struct {
		l     Limits
		group bool
		want  time.Duration
	}{
		{Limits{}, false, time.Second},
		{Limits{}, true, time.Second},
		{Limits{PerChatPerSecond: 1, PerGroupPerMinute: 20}, false, time.Second},
		{Limits{PerChatPerSecond: 1, PerGroupPerMinute: 20}, true, 3 * time.Second},
		{Limits{PerChatPerSecond: 5}, false, time.Second},
		{Limits{PerChatPerSecond: 0.25}, false, 4 * time.Second},
	}
	for _, tt := range tests {
		if got := tt.l.EditInterval(tt.group); got != tt.want {
			t.Errorf("%+v.EditInterval(%v) = %v, want %v", tt.l, tt.group, got, tt.want)
		}
	}
}
