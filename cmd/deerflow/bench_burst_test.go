package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// BenchmarkEndToEndBurst is many people at once, through a fake platform
// and the built binary, with our limits off and an instant model: 100
// chats each send 5 messages at the same moment (a group's backlog after
// an outage, a broadcast everyone answers). Each iteration is one such
// burst of 500 messages, in conversations opened before. It reports
// turns/s (from the first message to the last answer) and each answer's
// latency (p50/p99). Budget: ≥ 2,000 turns/s on 2 cores.
func BenchmarkEndToEndBurst(b *testing.B) {
	for _, name := range []string{"telegram", "slack", "lark"} {
		b.Run(name, func(b *testing.B) {
			newPlatform(b, name, false).burst(b, 100, 5)
		})
	}
}

// burst opens convs conversations, then per iteration has each send per
// messages at once and waits for all the answers.
func (p *platform) burst(b *testing.B, convs, per int) {
	p.stamps.instant.Store(true)
	p.f.model.KeepRequests = 1
	p.f.model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "pong " + benchToken(r), Chunk: -1}
	})
	tok := func(i int) string { return fmt.Sprintf("tok%07d", i) }
	for i := range convs {
		p.say(i, "ping "+tok(i))
	}
	p.waitAnswers(b, convs, tok)
	n := convs
	var lat []time.Duration
	var busy time.Duration
	for b.Loop() {
		start := time.Now()
		sentAt := map[string]time.Time{}
		for range per {
			for c := range convs {
				sentAt[tok(n)] = time.Now()
				p.say(c, "ping "+tok(n))
				n++
			}
		}
		p.waitAnswers(b, n, tok)
		last := start
		for _, s := range p.sent() {
			i := strings.Index(s.text, "pong tok")
			if i < 0 || len(s.text) < i+15 {
				continue
			}
			if at, ok := sentAt[s.text[i+5:i+15]]; ok {
				lat = append(lat, s.at.Sub(at))
				delete(sentAt, s.text[i+5:i+15]) // its first send counts
				if s.at.After(last) {
					last = s.at
				}
			}
		}
		busy += last.Sub(start)
	}
	b.ReportMetric(float64(n-convs)/busy.Seconds(), "turns/s")
	reportPercentiles(b, lat)
}
