package telegram

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/channels"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/metrics"
)

// TestLimits sends bursts through the fake Bot API: with no limits of
// ours they go out without a wait of ours, and with a limit the fake's
// recorded times are spaced by at least it (per chat, per group, and
// across chats).
func TestLimits(t *testing.T) {
	const private, group, other = 501, -1001, 502
	tests := []struct {
		name      string
		limits    channels.Limits
		chats     []int64 // the sends, in order
		perSecond float64 // the spacing to expect; 0: none of ours
		burst     int
	}{
		{"off", channels.Limits{}, []int64{private, private, private, private, private, private}, 0, 0},
		{"off in a group", channels.Limits{}, []int64{group, group, group, group, group, group}, 0, 0},
		{"per chat", channels.Limits{PerChatPerSecond: 2, PerChatBurst: 1}, []int64{private, private, private, private}, 2, 1},
		{"per chat with a burst", channels.Limits{PerChatPerSecond: 4, PerChatBurst: 2}, []int64{private, private, private, private, private}, 4, 2},
		{"per group", channels.Limits{PerGroupPerMinute: 120, PerChatBurst: 1}, []int64{group, group, group, group}, 2, 1},
		{"overall", channels.Limits{GlobalPerSecond: 2}, []int64{private, other, group, private, other}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := faketelegram.New(t, "123:secret")
			fake.AddChat(faketelegram.Chat{ID: private, Type: "private", FirstName: "Ann"})
			fake.AddChat(faketelegram.Chat{ID: other, Type: "private", FirstName: "Bob"})
			fake.AddChat(faketelegram.Chat{ID: group, Type: "supergroup", Title: "team"})
			met := metrics.New()
			c, err := New(Options{Token: fake.Token, APIURL: fake.URL, Metrics: met, Limits: tt.limits})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i, chat := range tt.chats {
				out := &bus.Outbound{Kind: bus.OutMessage, ChatID: strconv.FormatInt(chat, 10), Text: fmt.Sprint("part ", i)}
				if _, err := c.Send(context.Background(), out); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			calls := fake.CallsOf("sendMessage")
			if len(calls) != len(tt.chats) {
				t.Fatalf("the fake got %d sendMessage calls, want %d", len(calls), len(tt.chats))
			}
			var times []time.Time
			for i, call := range calls {
				if want := fmt.Sprint("part ", i); call.Params["text"] != want {
					t.Errorf("call %d: text %q, want %q (out of order)", i, call.Params["text"], want)
				}
				times = append(times, call.Time)
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

// TestRetryAfterWithoutLimits: with no limits of ours, a 429's
// retry_after still holds the chat (Telegram's limit, not ours).
func TestRetryAfterWithoutLimits(t *testing.T) {
	fake := faketelegram.New(t, "123:secret")
	fake.AddChat(faketelegram.Chat{ID: 501, Type: "private", FirstName: "Ann"})
	c, err := New(Options{Token: fake.Token, APIURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	fake.FailNext("sendMessage", faketelegram.Failure{Code: 429, RetryAfter: 1})
	out := &bus.Outbound{Kind: bus.OutMessage, ChatID: "501", Text: "hello"}
	if _, err := c.Send(context.Background(), out); err == nil {
		t.Fatal("the refused send succeeded")
	}
	if _, err := c.Send(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	calls := fake.CallsOf("sendMessage")
	if len(calls) != 2 {
		t.Fatalf("the fake got %d sendMessage calls, want 2", len(calls))
	}
	if gap := calls[1].Time.Sub(calls[0].Time); gap < time.Second-5*time.Millisecond {
		t.Errorf("the send after a 429 with retry_after 1 went %v later, want at least 1s", gap)
	}
}
