package slack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/metrics"
)

// TestLimits posts bursts through the fake Web API: with no limits of
// ours they go out without a wait of ours, and with a limit the fake's
// recorded times are spaced by at least it (per channel, and across
// channels).
func TestLimits(t *testing.T) {
	tests := []struct {
		name      string
		limits    channels.Limits
		chans     []string // the posts, in order
		perSecond float64  // the spacing to expect; 0: none of ours
		burst     int
	}{
		{"off", channels.Limits{}, []string{"C1", "C1", "C1", "C1", "C1", "C1"}, 0, 0},
		{"per channel", channels.Limits{PerChatPerSecond: 2, PerChatBurst: 1}, []string{"C1", "C1", "C1", "C1"}, 2, 1},
		{"overall", channels.Limits{GlobalPerSecond: 2}, []string{"C1", "C2", "D1", "C1", "C2"}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakeslack.New(t)
			fake.AddChannel("C1", "channel")
			fake.AddChannel("C2", "channel")
			fake.AddChannel("D1", "im")
			met := metrics.New()
			c, err := New(Options{BotToken: fake.BotToken, AppToken: fake.AppToken, APIURL: fake.URL + "/api/",
				Metrics: met, Limits: tt.limits})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i, ch := range tt.chans {
				out := &bus.Outbound{Kind: bus.OutMessage, ChatID: ch, Text: fmt.Sprint("part ", i)}
				if _, err := c.Send(context.Background(), out); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			calls := fake.CallsTo("chat.postMessage")
			if len(calls) != len(tt.chans) {
				t.Fatalf("the fake got %d chat.postMessage calls, want %d", len(calls), len(tt.chans))
			}
			var times []time.Time
			for i, call := range calls {
				if want := fmt.Sprint("part ", i); call.Form["text"] != want {
					t.Errorf("call %d: text %q, want %q (out of order)", i, call.Form["text"], want)
				}
				times = append(times, call.Time)
			}
			waits := testutil.RateLimitWaits(t, met, Name)
			if tt.perSecond == 0 {
				if waits != 0 {
					t.Errorf("%v posts waited for a limit of ours with none set", waits)
				}
				return
			}
			testutil.AssertSpaced(t, start, times, tt.perSecond, tt.burst)
			if want := float64(len(tt.chans) - tt.burst); waits < want {
				t.Errorf("%v posts waited for the limit, want at least %v", waits, want)
			}
		})
	}
}
