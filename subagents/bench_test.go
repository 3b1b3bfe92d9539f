package subagents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// instantModel answers at once, with no network. The lead (offered task)
// delegates perLead tasks, then answers; a subagent says a line and calls
// noop, then answers. started, when set, gets the time of each subagent's
// first model call.
type instantModel struct {
	perLead int
	started chan time.Time
}

func (m *instantModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	lead := slices.ContainsFunc(req.Tools, func(s llm.ToolSpec) bool { return s.Name == ToolName })
	last := req.Messages[len(req.Messages)-1]
	var msg llm.Message
	switch {
	case lead && last.Role == llm.RoleUser:
		for i := range m.perLead {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: ToolName,
				Arguments: fmt.Sprintf(`{"description":"Part %d","prompt":"do part %d","subagent_type":"general-purpose"}`, i, i)})
		}
	case lead:
		msg.Content = "all parts done"
	case last.Role == llm.RoleUser:
		if m.started != nil {
			m.started <- time.Now()
		}
		msg.Content = "working on it"
		msg.ToolCalls = []llm.ToolCall{{ID: "call_noop", Name: "noop", Arguments: `{}`}}
	default:
		msg.Content = "part done"
	}
	msg.Role = llm.RoleAssistant
	return func(yield func(llm.Chunk, error) bool) {
		if msg.Content != "" && !yield(llm.Chunk{Text: msg.Content}, nil) {
			return
		}
		finish := "stop"
		if len(msg.ToolCalls) > 0 {
			finish = "tool_calls"
		}
		yield(llm.Chunk{Done: &llm.Response{Message: msg, FinishReason: finish}}, nil)
	}
}

func benchManager(b *testing.B, model *instantModel, opts Options) (*Manager, *agent.Agent) {
	st := testutil.Store(b)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	models := []agent.ModelRef{{Name: "instant", ID: "instant", Model: model}}
	reg := tools.NewRegistry(tools.Func("noop", "does nothing", func(context.Context, struct{}) (string, error) { return "ok", nil }))
	opts.Store, opts.Models, opts.Tools, opts.Logger = st, models, reg, log
	m, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	reg.Add(m.Tool())
	lead, err := agent.New(agent.Options{Store: st, Models: models, Tools: reg, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	return m, lead
}

// BenchmarkTaskStart is the cost of starting a subagent: from the lead's
// task call to the subagent's first model request (limits checked against
// the run's records, the record written, a slot taken, the agent loop and
// prompt set up). Budget: ≤ 1 ms.
func BenchmarkTaskStart(b *testing.B) {
	model := &instantModel{started: make(chan time.Time, 1)}
	m, _ := benchManager(b, model, Options{})
	tool := m.Tool()
	args := json.RawMessage(`{"description":"Part one","prompt":"do part one","subagent_type":"general-purpose"}`)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		env := &tools.Env{ThreadID: "th_bench", RunID: fmt.Sprintf("run_%d", i), ChatKey: "bench:1", Model: "instant",
			Turn: 1, Batch: []string{ToolName}, Emit: func(event.Event) {}}
		start := time.Now()
		out, err := tool.Run(tools.WithEnv(context.Background(), env), args)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-model.started).Sub(start))
		if want := "Status: completed"; !strings.Contains(out, want) {
			b.Fatalf("result = %q", out)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "start-p50-µs")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "start-p99-µs")
}

// BenchmarkConcurrentSubagents runs 100 subagents at once: 50
// conversations whose lead each delegates two tasks, on an instant model.
// Every task must report started, two steps and done, in that order, with
// nothing lost. One op is the whole wave.
func BenchmarkConcurrentSubagents(b *testing.B) {
	const convs, perLead = 50, 2
	model := &instantModel{perLead: perLead}
	m, lead := benchManager(b, model, Options{MaxRunning: convs * perLead})
	var peak atomic.Int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		errs := make(chan error, convs)
		for c := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				seen := map[string][]string{}
				var answer string
				for ev := range lead.Run(context.Background(), agent.Input{ThreadID: fmt.Sprintf("th_%d_%d", i, c), ChatKey: "bench:c"}) {
					if n := int64(m.Running()); n > peak.Load() {
						peak.Store(n)
					}
					switch ev := ev.(type) {
					case event.TaskStarted:
						seen[ev.Task.ID] = append(seen[ev.Task.ID], event.Name(ev))
					case event.TaskProgress:
						seen[ev.Task.ID] = append(seen[ev.Task.ID], event.Name(ev))
					case event.TaskDone:
						seen[ev.Task.ID] = append(seen[ev.Task.ID], event.Name(ev))
					case event.Answer:
						answer = ev.Text
					}
				}
				want := []string{"task_started", "task_progress", "task_progress", "task_done"}
				if len(seen) != perLead || answer != "all parts done" {
					errs <- fmt.Errorf("conversation %d: %d tasks reported, answer %q", c, len(seen), answer)
					return
				}
				for id, kinds := range seen {
					if !slices.Equal(kinds, want) {
						errs <- fmt.Errorf("task %s reported %v", id, kinds)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(convs*perLead), "subagents/op")
	b.ReportMetric(float64(peak.Load()), "peak-running")
}
