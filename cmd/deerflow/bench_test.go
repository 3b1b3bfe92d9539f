package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/llm"
)

// instantModel answers every request at once, with no network: what is
// left of a turn's time is the harness.
type instantModel struct{}

func (instantModel) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		if !yield(llm.Chunk{Text: "pong"}, nil) {
			return
		}
		yield(llm.Chunk{Done: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "pong"}, FinishReason: "stop"}}, nil)
	}
}

// finalSender signals every final outbound message.
type finalSender struct{ final chan string }

func (s *finalSender) Name() string { return "bench" }
func (s *finalSender) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	if out.Final {
		s.final <- out.Text
	}
	return nil, nil
}

// benchTurns publishes b.N messages one after another, round-robin over
// 100 conversations (so histories stay a realistic length), and reports
// the time from publish to the final answer.
func benchTurns(b *testing.B, a *app) {
	s := &finalSender{final: make(chan string, 1)}
	a.bus.Register(s)
	lat := make([]time.Duration, 0, b.N)
	ctx := context.Background()
	// Open the conversations first: a first message also creates the
	// thread, which BenchmarkFirstMessage measures.
	for i := 0; i < 100; i++ {
		a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: fmt.Sprintf("c%d", i), UserID: "u1", Text: "hello"})
		<-s.final
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		chat := fmt.Sprintf("c%d", i%100)
		if err := a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: chat, UserID: "u1", Text: "ping"}); err != nil {
			b.Fatal(err)
		}
		if got := <-s.final; got != "pong" {
			b.Fatalf("answer %q", got)
		}
		lat = append(lat, time.Since(start))
		// One turn at a time: its commits land before the next begins, so
		// the number is a turn's own cost, not a backlog's.
		b.StopTimer()
		a.bus.WaitIdle(ctx)
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkThroughput keeps 100 conversations busy: each sends its next
// message as soon as its answer arrives. Reports turns per second (budget:
// ≥ 2,000/s with a zero-latency model on 2 cores).
func BenchmarkThroughput(b *testing.B) {
	a := benchApp(b, []agent.ModelRef{{Name: "instant", ID: "instant", Model: instantModel{}}}, nil)
	s := &chatSender{final: make(chan string, 256)}
	a.bus.Register(s)
	ctx := context.Background()
	publish := func(chat string) {
		if err := a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: chat, UserID: "u1", Text: "ping"}); err != nil {
			b.Fatal(err)
		}
	}
	const convs = 100
	for i := 0; i < convs; i++ { // open the conversations
		publish(fmt.Sprint(i))
		<-s.final
	}
	a.bus.WaitIdle(ctx)
	b.ResetTimer()
	start := time.Now()
	sent := 0
	for ; sent < min(convs, b.N); sent++ {
		publish(fmt.Sprint(sent))
	}
	for got := 0; got < b.N; got++ {
		chat := <-s.final
		if sent < b.N {
			publish(chat)
			sent++
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
	b.StopTimer()
	a.bus.WaitIdle(ctx)
}

// chatSender reports the chat of every final answer; it fails the run on
// any other final message (a "Queued" notice would mean a turn overlapped).
type chatSender struct{ final chan string }

func (s *chatSender) Name() string { return "bench" }
func (s *chatSender) Send(_ context.Context, out *bus.Outbound) ([]string, error) {
	if out.Final {
		if out.Text != "pong" {
			panic("unexpected final message: " + out.Text)
		}
		s.final <- out.ChatID
	}
	return nil, nil
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), "p50-µs")
	b.ReportMetric(p(0.99), "p99-µs")
}

func benchApp(b *testing.B, models []agent.ModelRef, cfg *config.Config) *app {
	if cfg == nil {
		cfg = config.Default()
		cfg.DataDir = b.TempDir()
	}
	a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.shutdown(5 * time.Second) })
	if models != nil {
		ag, err := agent.New(agent.Options{Store: a.store, Models: models, Tools: a.tools, Logger: a.log})
		if err != nil {
			b.Fatal(err)
		}
		a.agent = ag
		a.bus, err = bus.New(bus.Options{Store: a.store, Agent: ag, Logger: a.log})
		if err != nil {
			b.Fatal(err)
		}
	}
	return a
}

// BenchmarkTurnOverhead is the harness's cost of one turn: message in
// through the router, thread and run persisted (with fsync), model call
// against an instant in-process model, answer persisted, answer out.
// Budget: ≤ 1 ms p99.
func BenchmarkTurnOverhead(b *testing.B) {
	a := benchApp(b, []agent.ModelRef{{Name: "instant", ID: "instant", Model: instantModel{}}}, nil)
	benchTurns(b, a)
}

// BenchmarkTurnFakeHTTP is one whole turn with the model behind real HTTP
// (the fake OpenAI server on loopback, zero latency, one-chunk answer).
func BenchmarkTurnFakeHTTP(b *testing.B) {
	fake := fakeopenai.New(b)
	fake.KeepRequests = 1
	fake.Handle(func(fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "pong", Chunk: -1} })
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	cfg.Models = []config.Model{{Name: "fake", Model: "fake", BaseURL: fake.URL, APIKey: "k", TimeoutSeconds: 60}}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	benchTurns(b, benchApp(b, nil, cfg))
}

// BenchmarkChatStartup is `deerflow chat` from configuration to the prompt
// being printed: store opened (and created), agent and bus wired, console
// started. Budget: ≤ 50 ms.
func BenchmarkChatStartup(b *testing.B) {
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		cfg := config.Default()
		cfg.DataDir = b.TempDir()
		start := time.Now()
		a, err := newApp(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		scr := newScreen()
		r, w := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- runConsole(context.Background(), a, r, scr, true) }()
		for !strings.Contains(scr.String(), "›") {
			scr.mu.Lock()
			ch := scr.changed
			scr.mu.Unlock()
			if strings.Contains(scr.String(), "›") {
				break
			}
			<-ch
		}
		lat = append(lat, time.Since(start))
		w.Close()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		a.shutdown(time.Second)
	}
	reportPercentiles(b, lat)
}

func ExampleNewID() {
	fmt.Println(strings.HasPrefix(agent.NewID("th_"), "th_"))
	// Output: true
}

// BenchmarkStop is /stop during a model stream that has started answering:
// the time from publishing /stop until the fake model server sees its
// client go away. The issue's bound is 100 ms.
func BenchmarkStop(b *testing.B) {
	fake := fakeopenai.New(b)
	fake.KeepRequests = 1
	fake.Handle(func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "this will not finish", Chunk: 4, HoldAfter: 1, Hold: make(chan struct{})}
	})
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	cfg.Models = []config.Model{{Name: "fake", Model: "fake", BaseURL: fake.URL, APIKey: "k", TimeoutSeconds: 60}}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	a := benchApp(b, nil, cfg)
	s := &finalSender{final: make(chan string, 4)}
	a.bus.Register(s)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: "c", UserID: "u", Text: "go"})
		fake.WaitRequests(i + 1)
		start := time.Now()
		a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: "c", UserID: "u", Text: "/stop"})
		fake.WaitCancelled(i + 1)
		lat = append(lat, time.Since(start))
		if got := <-s.final; got != "Stopped." {
			b.Fatalf("final = %q", got)
		}
		a.bus.WaitIdle(ctx)
	}
	reportPercentiles(b, lat)
}

// BenchmarkServeStartup starts the built binary (`deerflow serve` with
// Telegram, Slack and Lark pointed at the fakes) and reports the time until
// all three are connected (first getUpdates; Socket Mode and the Lark long
// connection accepted) and its resident memory once idle. Budgets:
// ≤ 15 ms, ≤ 15 MB.
func BenchmarkServeStartup(b *testing.B) {
	tg := faketelegram.New(b, "123456:TEST-token")
	sl := fakeslack.New(b)
	lk := fakelark.New(b)
	model := fakeopenai.New(b)
	bin := binary(b)
	var lat []time.Duration
	var rss []int
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		cfg := fmt.Sprintf("models:\n  - {name: m, model: m, base_url: %s, api_key: k}\nchannels:\n  telegram: {enabled: true, bot_token: %q, api_url: %s}\n  slack: {enabled: true, bot_token: %s, app_token: %s, api_url: %s/api/}\n  lark: {enabled: true, app_id: %s, app_secret: %s, domain: %s}\n",
			model.URL, tg.Token, tg.URL, sl.BotToken, sl.AppToken, sl.URL, lk.AppID, lk.AppSecret, lk.URL)
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
		polls := len(tg.Offsets()) // recorded when a poll arrives
		conns, lconns := sl.Connections(), lk.Connections()
		cmd := exec.Command(bin, "serve")
		cmd.Dir = dir
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		tg.WaitFor(func() bool { return len(tg.Offsets()) > polls })
		sl.WaitFor(func() bool { return sl.Connections() > conns })
		lk.WaitFor(func() bool { return lk.Connections() > lconns })
		lat = append(lat, time.Since(start))
		time.Sleep(200 * time.Millisecond) // let it settle before reading memory; not a timing assertion
		rss = append(rss, vmRSS(cmd.Process.Pid))
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	reportPercentiles(b, lat)
	slices.Sort(rss)
	b.ReportMetric(float64(rss[len(rss)/2])/1024, "idle-RSS-MB")
}

// vmRSS is a process's resident set size in KiB.
func vmRSS(pid int) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// BenchmarkLiveConversations holds a turn in each of 10,000 conversations
// (instant model, real store with fsync) and reports the heap in use and
// the process's resident memory afterwards. Budget: 10,000 live
// conversations in ≤ 200 MB.
func BenchmarkLiveConversations(b *testing.B) {
	const convs = 10000
	for i := 0; i < b.N; i++ {
		a := benchApp(b, []agent.ModelRef{{Name: "instant", ID: "instant", Model: instantModel{}}}, nil)
		s := &chatSender{final: make(chan string, 256)}
		a.bus.Register(s)
		ctx := context.Background()
		sent := 0
		for ; sent < 200; sent++ {
			a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: fmt.Sprint(sent), UserID: "u", Text: "ping"})
		}
		for got := 0; got < convs; got++ {
			<-s.final
			if sent < convs {
				a.bus.Publish(ctx, &bus.Inbound{Channel: "bench", ChatID: fmt.Sprint(sent), UserID: "u", Text: "ping"})
				sent++
			}
		}
		a.bus.WaitIdle(ctx)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		b.ReportMetric(float64(vmRSS(os.Getpid()))/1024, "RSS-MB")
	}
}
