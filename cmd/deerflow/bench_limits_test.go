package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkEndToEndDefaultLimits is BenchmarkEndToEnd with our send limits
// at their defaults (each platform's published limits: config.yaml.example,
// channels.*.limits) instead of off, at paces those limits allow. Besides
// the same latencies it checks, from the times the fake platforms recorded
// each call, that no default limit was exceeded: per chat, per group and
// overall, as a lower bound on the spacing (a slow machine spaces calls
// more, never less), less 5 ms for the limiter's rounding and loopback.
func BenchmarkEndToEndDefaultLimits(b *testing.B) {
	for _, tt := range []struct {
		name  string
		convs int
		pace  time.Duration
	}{
		// Telegram: 1 a second per chat (bursts of 4), 30 a second overall.
		{"telegram", 50, 80 * time.Millisecond},
		// Slack: 1 a second per channel (bursts of 3).
		{"slack", 100, 25 * time.Millisecond},
		// Lark: 5 a second per chat, 16 a second overall; at two calls an
		// answer (a preview and its final card), 7.7 messages a second.
		{"lark", 50, 130 * time.Millisecond},
	} {
		b.Run(tt.name, func(b *testing.B) {
			p := newPlatform(b, tt.name, true)
			p.turns(b, tt.convs, tt.pace)
			n := checkDefaultLimits(b, p, tt.convs)
			b.ReportMetric(float64(n), "limited-calls")
		})
	}
}

// limitedCall is one call the platform rate-limits, as its fake recorded it.
type limitedCall struct {
	chat string // "" for a call limited overall only (a Lark card patch)
	at   time.Time
}

// rateLimit is one default limit: perSecond in bursts of burst.
type rateLimit struct {
	perSecond float64
	burst     int
}

// checkDefaultLimits checks the calls p's fake received against the
// defaults (config/defaults.go) and returns how many it checked.
func checkDefaultLimits(b *testing.B, p *platform, convs int) int {
	var calls []limitedCall
	var perChat, perGroup, global rateLimit
	switch {
	case p.f.tg != nil:
		calls, perChat, perGroup, global = telegramCalls(p), rateLimit{1, 4}, rateLimit{20.0 / 60, 4}, rateLimit{30, 30}
	case p.f.sl != nil:
		calls, perChat = slackCalls(p), rateLimit{1, 3}
	case p.f.lk != nil:
		calls, perChat, global = larkCalls(p, convs), rateLimit{5, 1}, rateLimit{16, 16}
	}
	if len(calls) == 0 {
		b.Fatal("the fake recorded no rate-limited call")
	}
	byChat := map[string][]time.Time{}
	var all []time.Time
	for _, c := range calls {
		all = append(all, c.at)
		if c.chat != "" {
			byChat[c.chat] = append(byChat[c.chat], c.at)
		}
	}
	for chat, times := range byChat {
		assertRate(b, "chat "+chat, times, perChat)
		if strings.HasPrefix(chat, "-") && perGroup.perSecond > 0 {
			assertRate(b, "group "+chat, times, perGroup)
		}
	}
	assertRate(b, "overall", all, global)
	return len(calls)
}

// assertRate fails b if any run of calls in times went faster than l
// allows: k calls within d need d ≥ (k - burst)/perSecond. A zero l is no
// limit.
func assertRate(b *testing.B, what string, times []time.Time, l rateLimit) {
	if l.perSecond <= 0 {
		return
	}
	times = slices.Clone(times)
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	for i := range times {
		for j := i + max(l.burst, 1); j < len(times); j++ {
			k := j - i + 1
			least := time.Duration(float64(k-l.burst)/l.perSecond*float64(time.Second)) - 5*time.Millisecond
			if got := times[j].Sub(times[i]); got < least {
				b.Errorf("%s: %d calls in %v; at %g/s in bursts of %d they take at least %v",
					what, k, got, l.perSecond, l.burst, least)
				return
			}
		}
	}
}

// telegramCalls are the calls Telegram counts: sendMessage,
// editMessageText, sendPhoto and sendDocument, by chat_id.
func telegramCalls(p *platform) []limitedCall {
	var out []limitedCall
	for _, c := range p.f.tg.Calls() {
		switch strings.ToLower(c.Method) {
		case "sendmessage", "editmessagetext", "sendphoto", "senddocument":
			out = append(out, limitedCall{c.Params["chat_id"], c.Time})
		}
	}
	return out
}

// slackCalls are the calls Slack spaces per channel: chat.postMessage and
// chat.update.
func slackCalls(p *platform) []limitedCall {
	var out []limitedCall
	for _, c := range p.f.sl.Calls() {
		if c.Method == "chat.postMessage" || c.Method == "chat.update" {
			out = append(out, limitedCall{c.Form["channel"], c.Time})
		}
	}
	return out
}

// larkCalls are the calls Lark limits: new messages and replies, per chat
// and overall, and card patches, overall. A reply names its parent
// message, not its chat: its chat is the conversation of the token it
// answers (conversation i%convs answers message i).
func larkCalls(p *platform, convs int) []limitedCall {
	var out []limitedCall
	for _, c := range p.f.lk.Calls() {
		if c.Method == "GET" || !strings.Contains(c.Path, "/im/v1/messages") ||
			strings.Contains(c.Path, "/reactions") || strings.Contains(c.Path, "/resources") {
			continue
		}
		chat := ""
		if c.Method == "POST" {
			var body struct {
				ReceiveID string `json:"receive_id"`
			}
			json.Unmarshal([]byte(c.Body), &body)
			chat = body.ReceiveID
			if i := strings.Index(c.Body, "pong tok"); chat == "" && i >= 0 && len(c.Body) >= i+15 {
				n, _ := strconv.Atoi(c.Body[i+8 : i+15])
				chat = fmt.Sprintf("oc_bench%04d", n%convs)
			}
		}
		out = append(out, limitedCall{chat, c.Time})
	}
	return out
}
