package lark

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/metrics"
)

// TestLimits sends bursts through the fake Lark API: with no limits of
// ours they go out without a wait of ours, and with a limit the fake's
// recorded times are spaced by at least it (per chat, and across chats).
func TestLimits(t *testing.T) {
	tests := []struct {
		name      string
		limits    channels.Limits
		chats     []string // the sends, in order
		perSecond float64  // the spacing to expect; 0: none of ours
		burst     int
	}{
		{"off", channels.Limits{}, []string{"oc_1", "oc_1", "oc_1", "oc_1", "oc_1", "oc_1"}, 0, 0},
		{"per chat", channels.Limits{PerChatPerSecond: 2, PerChatBurst: 1}, []string{"oc_1", "oc_1", "oc_1", "oc_1"}, 2, 1},
		{"overall", channels.Limits{GlobalPerSecond: 2}, []string{"oc_1", "oc_2", "oc_3", "oc_1", "oc_2"}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakelark.New(t)
			for _, chat := range []string{"oc_1", "oc_2", "oc_3"} {
				fake.AddChat(chat)
			}
			met := metrics.New()
			c, err := New(Options{AppID: fake.AppID, AppSecret: fake.AppSecret, Domain: fake.URL, Metrics: met, Limits: tt.limits})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i, chat := range tt.chats {
				out := &bus.Outbound{Kind: bus.OutMessage, ChatID: chat, Text: fmt.Sprint("part ", i)}
				if _, err := c.Send(context.Background(), out); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			var times []time.Time
			for _, call := range fake.Calls() {
				if call.Method == "POST" && strings.HasSuffix(call.Path, "/im/v1/messages") {
					if want := fmt.Sprint("part ", len(times)); !strings.Contains(call.Body, want) {
						t.Errorf("call %d: body %s, want %q (out of order)", len(times), call.Body, want)
					}
					times = append(times, call.Time)
				}
			}
			if len(times) != len(tt.chats) {
				t.Fatalf("the fake got %d message sends, want %d", len(times), len(tt.chats))
			}
			waits := testutil.RateLimitWaits(t, met, Name)
			if tt.perSecond == 0 {
				if waits != 0 {
					t.Errorf("%v sends waited for a limit of ours with none set", waits)
				}
				return
			}
			testutil.AssertSpaced(t, start, times, tt.perSecond, tt.burst)
			if want := float64(len(tt.chats) - tt.burst); waits < want {
				t.Errorf("%v sends waited for the limit, want at least %v", waits, want)
			}
		})
	}
}
