package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// Benchmarks of the built binary, `deerflow serve`, against the fake
// platforms and the fake model on loopback. Times are taken at the fakes'
// edges: when a fake platform has a person's message ready for the bot,
// when the fake model receives the request and hands back its answer, and
// when a fake platform receives the bot's send. Everything between those
// edges is the harness: the real binary, wired as operators run it.

// serveBinary is the binary the serve benchmarks run: $DEERFLOW_BIN when
// set (to compare builds), else this package built by the tests.
func serveBinary(b *testing.B) string {
	if p := os.Getenv("DEERFLOW_BIN"); p != "" {
		return p
	}
	return binary(b)
}

// fakes are the servers one serve process talks to; a nil platform is not
// enabled.
type fakes struct {
	model    *fakeopenai.Server
	modelURL string // the model's base URL when not model.URL (see timedModel)
	tg       *faketelegram.Server
	sl       *fakeslack.Server
	lk       *fakelark.Server
	// defaultLimits leaves our send limits at their defaults (each
	// platform's published limits) instead of off.
	defaultLimits bool
}

// config is the process's config.yaml.
func (f *fakes) config() string {
	var c strings.Builder
	url := f.modelURL
	if url == "" {
		url = f.model.URL
	}
	fmt.Fprintf(&c, "models:\n  - {name: m, model: m, base_url: %s, api_key: k}\nchannels:\n", url)
	// Our own send limits off, unless defaultLimits: the benchmarks
	// measure us, not a queue in front of a platform (the fakes have no
	// limits).
	off, tgOff := ", limits: {per_chat_per_second: 0, global_per_second: 0}",
		", limits: {per_chat_per_second: 0, per_group_per_minute: 0, global_per_second: 0}"
	if f.defaultLimits {
		off, tgOff = "", ""
	}
	if f.tg != nil {
		fmt.Fprintf(&c, "  telegram: {enabled: true, bot_token: %q, api_url: %s%s}\n", f.tg.Token, f.tg.URL, tgOff)
	}
	if f.sl != nil {
		fmt.Fprintf(&c, "  slack: {enabled: true, bot_token: %s, app_token: %s, api_url: %s/api/%s}\n", f.sl.BotToken, f.sl.AppToken, f.sl.URL, off)
	}
	if f.lk != nil {
		fmt.Fprintf(&c, "  lark: {enabled: true, app_id: %s, app_secret: %s, domain: %s%s}\n", f.lk.AppID, f.lk.AppSecret, f.lk.URL, off)
	}
	return c.String()
}

// connections counts what each enabled platform has seen of the bot so
// far: getUpdates polls, Socket Mode connections, long connections.
func (f *fakes) connections() []int {
	var n []int
	if f.tg != nil {
		n = append(n, len(f.tg.Offsets()))
	}
	if f.sl != nil {
		n = append(n, f.sl.Connections())
	}
	if f.lk != nil {
		n = append(n, f.lk.Connections())
	}
	return n
}

// waitConnected blocks until every enabled platform has seen more than
// before (see connections): the first getUpdates, the Socket Mode and the
// long connection accepted.
func (f *fakes) waitConnected(before []int) {
	i := 0
	if f.tg != nil {
		n := before[i]
		f.tg.WaitFor(func() bool { return len(f.tg.Offsets()) > n })
		i++
	}
	if f.sl != nil {
		n := before[i]
		f.sl.WaitFor(func() bool { return f.sl.Connections() > n })
		i++
	}
	if f.lk != nil {
		n := before[i]
		f.lk.WaitFor(func() bool { return f.lk.Connections() > n })
	}
}

// runServeBinary starts `deerflow serve` in a fresh directory; it is stopped
// (SIGTERM, then a kill) when the benchmark ends. Its log is kept in the
// directory and shown if the benchmark fails.
func runServeBinary(b *testing.B, f *fakes) *exec.Cmd {
	b.Helper()
	return runServeBinaryIn(b, f, b.TempDir())
}

// runServeBinaryIn is runServeBinary in directory dir, which may hold an
// earlier run's data (a restart).
func runServeBinaryIn(b *testing.B, f *fakes, dir string) *exec.Cmd {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(f.config()), 0o600); err != nil {
		b.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(serveBinary(b), "serve")
	cmd.Dir, cmd.Env, cmd.Stderr = dir, cleanEnv(), logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stopServeBinary(cmd)
		logf.Close()
		if b.Failed() {
			log, _ := os.ReadFile(logf.Name())
			b.Logf("serve log:\n%s", log)
		}
	})
	return cmd
}

// stopServeBinary ends a serve process: SIGTERM, and a kill if it lingers.
func stopServeBinary(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// platform is one fake chat platform as the turn benchmarks drive it.
type platform struct {
	f      *fakes
	stamps *modelStamps
	// say makes a person write text in conversation conv (0, 1, ...).
	say func(conv int, text string)
	// sent is what the bot has sent and edited so far, with when the
	// fake received it.
	sent func() []sent
	// ready blocks until the bot can take messages (connected, and knows
	// who it is).
	ready func()
	// pid is the serve process's.
	pid int
}

type sent struct {
	at   time.Time
	text string
}

// newPlatform starts the fake platform name ("telegram", "slack" or
// "lark") and the fake model, and `deerflow serve` with that platform
// alone, with our send limits off, or at their defaults when
// defaultLimits is set.
func newPlatform(b *testing.B, name string, defaultLimits bool) *platform {
	p := &platform{f: &fakes{model: fakeopenai.New(b), defaultLimits: defaultLimits}, stamps: &modelStamps{at: map[string][2]time.Time{}}}
	p.f.modelURL = timedModel(b, p.f.model, p.stamps)
	switch name {
	case "telegram":
		p.f.tg = faketelegram.New(b, "123456:TEST-token")
		p.telegram(p.f.tg)
	case "slack":
		sl := fakeslack.New(b)
		p.f.sl = sl
		// A conversation is a thread in a direct message: the first
		// message opens it, the next ones reply in it.
		var mu sync.Mutex
		threads := map[int]string{}
		p.say = func(conv int, text string) {
			mu.Lock()
			th := threads[conv]
			mu.Unlock()
			ts := sl.Message(fmt.Sprintf("D%04d", conv), "im", fmt.Sprintf("U%04d", conv), text, th)
			if th == "" {
				mu.Lock()
				threads[conv] = ts
				mu.Unlock()
			}
		}
		p.sent = func() []sent {
			var out []sent
			for _, c := range sl.Calls() {
				if c.Method == "chat.postMessage" || c.Method == "chat.update" {
					out = append(out, sent{c.Time, c.Form["text"] + c.Form["blocks"]})
				}
			}
			return out
		}
		p.ready = func() {
			sl.WaitFor(func() bool { return sl.Connections() > 0 && len(sl.CallsTo("auth.test")) > 0 })
		}
	case "lark":
		lk := fakelark.New(b)
		p.f.lk = lk
		p.say = func(conv int, text string) {
			lk.Send(fakelark.MessageEvent{
				ChatID: fmt.Sprintf("oc_bench%04d", conv), ChatType: "p2p",
				SenderOpenID: fmt.Sprintf("ou_bench%04d", conv), Content: fakelark.Text(text),
			})
		}
		p.sent = func() []sent {
			var out []sent
			for _, c := range lk.Calls() {
				if c.Method != "GET" && strings.Contains(c.Path, "/im/v1/messages") {
					out = append(out, sent{c.Time, c.Body})
				}
			}
			return out
		}
		p.ready = func() {
			lk.WaitFor(func() bool {
				if lk.Connections() == 0 {
					return false
				}
				for _, c := range lk.Calls() {
					if strings.Contains(c.Path, "/bot/v3/info") {
						return true
					}
				}
				return false
			})
		}
	default:
		b.Fatalf("no platform %q", name)
	}
	serveBinary(b)
	p.pid = runServeBinary(b, p.f).Process.Pid
	p.ready()
	return p
}

// telegram makes p drive the fake Telegram tg: each conversation is a
// private chat with a person of its own.
func (p *platform) telegram(tg *faketelegram.Server) {
	p.say = func(conv int, text string) {
		u := faketelegram.User{ID: 5000 + int64(conv), FirstName: "P" + strconv.Itoa(conv)}
		tg.PushMessage(faketelegram.Private(u, text))
	}
	p.sent = func() []sent {
		var out []sent
		for _, c := range tg.Calls() {
			if t := c.Params["text"]; t != "" {
				out = append(out, sent{c.Time, t})
			}
		}
		return out
	}
	p.ready = func() { tg.WaitFor(func() bool { return len(tg.Offsets()) > 0 }) }
}

// modelStamps are, per message token, when its model request arrived and
// when the model's answer was handed back.
type modelStamps struct {
	mu sync.Mutex
	at map[string][2]time.Time
	// instant: the front answers itself, at once (see instantAnswer).
	instant atomic.Bool
	// calls counts the model requests.
	calls atomic.Int64
}

func (m *modelStamps) get(tok string) [2]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at[tok]
}

// timedModel serves model behind a front that stamps each request at the
// exact edges: as it arrives (its headers read, before the fake reads and
// checks the body) and as the answer's first byte is written. It returns
// the front's base URL.
func timedModel(b *testing.B, model *fakeopenai.Server, stamps *modelStamps) string {
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		stamps.calls.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The person's message is the last one: its token is the last in
		// the body (earlier ones are the conversation's history).
		tok := ""
		if i := bytes.LastIndex(body, []byte("ping tok")); i >= 0 && len(body) >= i+15 {
			tok = string(body[i+5 : i+15])
		}
		sw := &stampWriter{ResponseWriter: w, first: func(answered time.Time) {
			if tok != "" {
				stamps.mu.Lock()
				stamps.at[tok] = [2]time.Time{arrived, answered}
				stamps.mu.Unlock()
			}
		}}
		if stamps.instant.Load() {
			instantAnswer(sw, tok)
			return
		}
		model.ServeHTTP(sw, r)
	}))
	b.Cleanup(front.Close)
	return front.URL + "/v1"
}

// instantAnswer writes the answer "pong <tok>" as an OpenAI chat
// completion stream at once: an instant model. The fake model decodes and
// checks every request first, which on this 2-core machine took about a
// millisecond and a core the binary shares: its time, not the harness's.
func instantAnswer(w http.ResponseWriter, tok string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","+
		"\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"pong %s\"},\"finish_reason\":null}]}\n\n"+
		"data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","+
		"\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"+
		"\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}\n\n"+
		"data: [DONE]\n\n", tok)
}

// stampWriter calls first with the time the first byte of the body is
// written.
type stampWriter struct {
	http.ResponseWriter
	first func(time.Time)
}

func (w *stampWriter) Write(p []byte) (int, error) {
	if w.first != nil {
		w.first(time.Now())
		w.first = nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// turns drives messages through p: convs conversations are opened first
// (one message each, not counted), then one message every pace, round
// robin over them, once per benchmark iteration. The model answers at
// once with "pong <token>". It reports, in µs, the harness's share of each
// turn in both directions (in-p50/p99: platform event in → model request
// out; out-p50/p99: model answer in → platform send out) and the whole
// round trip (p50/p99).
func (p *platform) turns(b *testing.B, convs int, pace time.Duration) {
	p.stamps.instant.Store(true)
	p.f.model.KeepRequests = 1
	p.f.model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "pong " + benchToken(r), Chunk: -1}
	})
	tok := func(i int) string { return fmt.Sprintf("tok%07d", i) }
	var ins []time.Time
	send := func(i int, at time.Time) {
		time.Sleep(time.Until(at))
		ins = append(ins, time.Now())
		p.say(i%convs, "ping "+tok(i))
	}
	open := time.Now()
	for i := range convs {
		send(i, open.Add(time.Duration(i)*pace))
	}
	p.waitAnswers(b, convs, tok)
	cpu0, own0, calls0 := cpuTime(p.pid), cpuTime(os.Getpid()), p.stamps.calls.Load()
	start, n := time.Now(), 0
	for b.Loop() {
		send(convs+n, start.Add(time.Duration(n)*pace))
		n++
	}
	p.waitAnswers(b, convs+n, tok)
	b.ReportMetric(float64((cpuTime(p.pid)-cpu0).Microseconds())/float64(n), "cpu-µs/turn")
	b.ReportMetric(float64((cpuTime(os.Getpid())-own0).Microseconds())/float64(n), "fakes-cpu-µs/turn")
	b.ReportMetric(float64(p.stamps.calls.Load()-calls0)/float64(n), "model-calls/turn")

	out := map[string]time.Time{}
	for _, s := range p.sent() {
		if i := strings.Index(s.text, "pong tok"); i >= 0 && len(s.text) >= i+15 {
			if t := s.text[i+5 : i+15]; out[t].IsZero() {
				out[t] = s.at
			}
		}
	}
	var in, back, whole []time.Duration
	for i := convs; i < convs+n; i++ {
		t := p.stamps.get(tok(i))
		if t[0].IsZero() {
			b.Fatalf("the model never saw %s", tok(i))
		}
		in = append(in, t[0].Sub(ins[i]))
		back = append(back, out[tok(i)].Sub(t[1]))
		whole = append(whole, out[tok(i)].Sub(ins[i]))
	}
	reportPercentiles(b, whole)
	reportPercentilesAs(b, "in-", in)
	reportPercentilesAs(b, "out-", back)
}

// waitAnswers waits until the answers to messages 0..n-1 have all reached
// the platform.
func (p *platform) waitAnswers(b *testing.B, n int, tok func(int) string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := map[string]bool{}
		for _, s := range p.sent() {
			if i := strings.Index(s.text, "pong tok"); i >= 0 && len(s.text) >= i+15 {
				got[s.text[i+5:i+15]] = true
			}
		}
		missing := 0
		for i := range n {
			if !got[tok(i)] {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d answers never reached the platform", missing, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchToken is the token of a "ping <token>" message that req answers
// (the last message is the person's), or "" for any other request.
func benchToken(req fakeopenai.Request) string {
	last := req.Last()
	if last.Role != "user" {
		return ""
	}
	i := strings.LastIndex(last.Content, "ping tok")
	if i < 0 || len(last.Content) < i+15 {
		return ""
	}
	return last.Content[i+5 : i+15]
}

func reportPercentilesAs(b *testing.B, prefix string, lat []time.Duration) {
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), prefix+"p50-µs")
	b.ReportMetric(p(0.99), prefix+"p99-µs")
}

// BenchmarkHarnessOverhead is 100 conversations, each sending a message a
// second (one every 10 ms in all), with an instant model behind real HTTP.
// It reports the harness's time per turn in each direction, taken at the
// fakes: platform event in → model request out (in-p50/p99), model answer
// in → platform send out (out-p50/p99). Budget: p99 ≤ 2 ms.
//
// It runs on Lark. Telegram's own limit (30 messages a second per bot) is
// below this load, and on Slack an answer takes two calls (the reply, then
// its formatted final version) from the channel's budget of one a second,
// so at a message a second per conversation the sends queue behind the
// limiter and the figure would measure the queue.
func BenchmarkHarnessOverhead(b *testing.B) {
	b.Run("lark", func(b *testing.B) {
		newPlatform(b, "lark", false).turns(b, 100, 10*time.Millisecond)
	})
}

// BenchmarkEndToEnd is one message at a time through a fake platform to
// an instant model behind real HTTP and back: the time from the message
// being ready for the bot to the answer reaching the platform (p50/p99;
// the in-/out- figures split it as BenchmarkHarnessOverhead does).
// Messages are spaced so that no limit of the platform, or of our
// adapter, ever holds one back: an answer is two limited calls on
// Telegram (30 a second per bot, one a second per chat) and on Slack (one
// a second per channel). Our own limits are off here;
// BenchmarkEndToEndDefaultLimits runs it with them at their defaults.
// Budget (DESIGN.md): p50 ≤ 1.5 ms, p99 ≤ 5 ms.
func BenchmarkEndToEnd(b *testing.B) {
	for _, tt := range []struct {
		name  string
		convs int
		pace  time.Duration
	}{
		{"telegram", 50, 80 * time.Millisecond},
		{"slack", 100, 25 * time.Millisecond},
		{"lark", 50, 25 * time.Millisecond},
	} {
		b.Run(tt.name, func(b *testing.B) {
			newPlatform(b, tt.name, false).turns(b, tt.convs, tt.pace)
		})
	}
}
