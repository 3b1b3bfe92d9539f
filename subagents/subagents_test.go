package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// harness is a lead agent with the task tool, on a fake model server.
type harness struct {
	t    *testing.T
	fake *fakeopenai.Server
	st   *store.Store
	m    *Manager
	lead *agent.Agent

	mu   sync.Mutex
	runs map[string]string // thread → its latest run's id
}

// runID is the id of the latest run on thread th.
func (h *harness) runID(th string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[th]
}

type nameArgs struct {
	Path string `json:"path,omitempty"`
}

// fakeTool is a tool that answers with its name, or blocks until its call
// is cancelled when block is set (then reports the cancel on cancelled).
func fakeTool(name string, block bool, cancelled chan<- string) tools.Tool {
	return tools.Func(name, "test tool "+name, func(ctx context.Context, in nameArgs) (string, error) {
		if block {
			<-ctx.Done()
			if cancelled != nil {
				cancelled <- name
			}
			return "", ctx.Err()
		}
		return name + " ok", nil
	})
}

func newHarness(t *testing.T, opts Options, leadTools ...tools.Tool) *harness {
	t.Helper()
	fake := fakeopenai.New(t)
	st := testutil.Store(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	models := []agent.ModelRef{
		{Name: "default", ID: "lead-model", Model: llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "lead-model", MaxRetries: -1})},
		{Name: "small", ID: "small-model", Model: llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "small-model", MaxRetries: -1})},
	}
	reg := tools.NewRegistry(leadTools...)
	opts.Store, opts.Models, opts.Tools, opts.Logger = st, models, reg, log
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	reg.Add(m.Tool())
	p := agent.DefaultPrompt("Lead")
	p.SetSection(agent.SectionSubagents, m.PromptSection())
	lead, err := agent.New(agent.Options{Store: st, Models: models, Tools: reg, Prompt: p, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, fake: fake, st: st, m: m, lead: lead}
}

// run sends text to the lead on thread th and returns its events.
func (h *harness) run(ctx context.Context, th, text string) []event.Event {
	id := agent.NewID("run_")
	h.mu.Lock()
	if h.runs == nil {
		h.runs = map[string]string{}
	}
	h.runs[th] = id
	h.mu.Unlock()
	var evs []event.Event
	for ev := range h.lead.Run(ctx, agent.Input{RunID: id, ThreadID: th, ChatKey: "test:chat", UserID: "test:u", Text: text}) {
		evs = append(evs, ev)
	}
	return evs
}

func taskCall(desc, prompt, typ string) fakeopenai.ToolCall {
	args, _ := json.Marshal(map[string]string{"description": desc, "prompt": prompt, "subagent_type": typ})
	return fakeopenai.ToolCall{Name: "task", Arguments: string(args)}
}

// isLead tells the lead's requests from the subagents': only the lead is
// offered task.
func isLead(r fakeopenai.Request) bool { return slices.Contains(r.ToolNames(), "task") }

// firstUser is the first user message of a request: a subagent's prompt.
func firstUser(r fakeopenai.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// toolResults returns the tool results the lead got, by call order.
func toolResults(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// taskEvents returns the task events of evs, each with its wire name
// before its Line ("task_progress|line").
func taskEvents(evs []event.Event) []event.Task {
	var out []event.Task
	for _, ev := range evs {
		var te event.Task
		switch ev := ev.(type) {
		case event.TaskStarted:
			te = ev.Task
		case event.TaskProgress:
			te = ev.Task
		case event.TaskDone:
			te = ev.Task
		default:
			continue
		}
		te.Line = event.Name(ev) + "|" + te.Line
		out = append(out, te)
	}
	return out
}

func last(evs []event.Event) event.Event { return evs[len(evs)-1] }

// answer is ev's text when it is an answer; ok reports whether it is.
func answer(ev event.Event) (text string, ok bool) {
	a, ok := ev.(event.Answer)
	return a.Text, ok
}

// text is the text of an answer or an error.
func text(ev event.Event) string {
	switch ev := ev.(type) {
	case event.Answer:
		return ev.Text
	case event.Error:
		return ev.Text
	}
	return ""
}

func TestParallelTasksAndPerResponseLimit(t *testing.T) {
	h := newHarness(t, Options{}, fakeTool("ls", false, nil), fakeTool("bash", false, nil), fakeTool("present_files", false, nil), fakeTool("ask_clarification", false, nil))
	hold := make(chan struct{})
	var leadTurn int
	var mu sync.Mutex
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		defer mu.Unlock()
		if isLead(r) {
			leadTurn++
			if leadTurn == 1 {
				return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
					taskCall("Count the apples", "count apples", GeneralPurpose),
					taskCall("Count the pears", "count pears", GeneralPurpose),
					taskCall("List the files", "list files", Bash),
					taskCall("Count the plums", "count plums", GeneralPurpose),
				}}
			}
			return fakeopenai.Turn{Text: "All counted."}
		}
		p := firstUser(r)
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Text: "Result for " + p}
		}
		// Every subagent's first request waits until all three have
		// arrived: they only finish if they really run at the same time.
		return fakeopenai.Turn{Text: "Looking into it.", ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{"path":"/"}`}}, Hold: hold, HoldAfter: 1}
	})
	done := make(chan []event.Event)
	go func() { done <- h.run(context.Background(), "th_1", "count everything") }()
	h.fake.WaitRequests(4) // the lead, then three subagents at once
	if n := h.fake.InFlight(); n != 3 {
		t.Fatalf("%d subagent requests in flight, want 3", n)
	}
	close(hold)
	evs := <-done
	if text, ok := answer(last(evs)); !ok || text != "All counted." {
		t.Fatalf("last event = %#v", last(evs))
	}

	var leadFinal fakeopenai.Request
	var subReqs []fakeopenai.Request
	for _, r := range h.fake.Requests() {
		if isLead(r) {
			leadFinal = r
		} else {
			subReqs = append(subReqs, r)
		}
	}
	res := toolResults(leadFinal)
	if len(res) != 4 {
		t.Fatalf("lead got %d tool results", len(res))
	}
	for i, fruit := range []string{"apples", "pears", "files"} {
		verb := "count "
		if fruit == "files" {
			verb = "list "
		}
		if !strings.Contains(res[i], "Status: completed") || !strings.Contains(res[i], "Result for "+verb+fruit) || !strings.Contains(res[i], "Duration: ") {
			t.Errorf("result %d = %q", i, res[i])
		}
	}
	if !strings.Contains(res[3], "not started") || !strings.Contains(res[3], "at most 3 task calls run per response") {
		t.Errorf("fourth call's result = %q", res[3])
	}

	// Subagents never get task, ask_clarification or present_files; the
	// bash type gets only its five tools (of which this lead has two).
	for _, r := range subReqs {
		names := r.ToolNames()
		if slices.Contains(names, "task") || slices.Contains(names, "present_files") || slices.Contains(names, "ask_clarification") {
			t.Errorf("a subagent was offered %v", names)
		}
		if r.Model != "lead-model" {
			t.Errorf("a subagent used model %q, want the lead's", r.Model)
		}
		if firstUser(r) == "list files" && strings.Join(names, ",") != "bash,ls" {
			t.Errorf("bash subagent tools = %v", names)
		}
		if r.Messages[0].Role != "system" || !strings.Contains(r.Messages[0].Content, "You are a subagent") {
			t.Errorf("subagent system prompt = %q", r.Messages[0].Content)
		}
	}
	if len(subReqs) != 6 {
		t.Errorf("%d subagent requests, want 6 (two each)", len(subReqs))
	}

	// Events: each task starts, reports its steps and ends, in that order.
	byTask := map[string][]string{}
	for _, te := range taskEvents(evs) {
		byTask[te.Description] = append(byTask[te.Description], te.Line+"|"+te.Status)
	}
	want := []string{"task_started||running", "task_progress|Looking into it.|running", "task_progress|› ls: /|running", "task_done||completed"}
	for _, d := range []string{"Count the apples", "Count the pears", "List the files"} {
		if !slices.Equal(byTask[d], want) {
			t.Errorf("events of %q = %q, want %q", d, byTask[d], want)
		}
	}
	if _, ok := byTask["Count the plums"]; ok {
		t.Error("the refused task reported events")
	}

	// Records: three completed tasks of the run's first response.
	var recs []*store.Task
	h.st.View(func(tx *store.Tx) error {
		var err error
		recs, err = tx.Tasks(h.runID("th_1"))
		return err
	})
	if len(recs) != 3 {
		t.Fatalf("%d task records", len(recs))
	}
	for _, r := range recs {
		if r.Status != event.TaskCompleted || r.Turn != 1 || r.ThreadID != "th_1" || r.ChatKey != "test:chat" || r.Started.IsZero() || r.Ended.Before(r.Started) || !strings.HasPrefix(r.Result, "Result for") {
			t.Errorf("record = %+v", r)
		}
	}
	if h.m.Running() != 0 {
		t.Errorf("%d still running", h.m.Running())
	}
}

func TestPromptSectionNamesLimitsAndTypes(t *testing.T) {
	h := newHarness(t, Options{MaxPerResponse: 2, MaxPerRun: 5})
	text := h.m.PromptSection()(context.Background(), nil)
	for _, want := range []string{"at most 2 task calls per response", "at most 5 task calls in total", "- general-purpose:"} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt section lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "- bash:") {
		t.Error("the bash type is offered without a bash tool")
	}
	spec := h.m.Tool().Spec()
	if !strings.Contains(string(spec.Parameters), `"enum":["general-purpose"]`) {
		t.Errorf("task schema = %s", spec.Parameters)
	}
}

func TestUnknownTypeListsTheValidOnes(t *testing.T) {
	h := newHarness(t, Options{Types: []Type{{Name: "researcher", Description: "reads"}}}, fakeTool("bash", false, nil))
	h.fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Do a thing", "x", "wizard")}},
		fakeopenai.Turn{Text: "ok"},
	)
	evs := h.run(context.Background(), "th_1", "go")
	if _, ok := answer(last(evs)); !ok {
		t.Fatalf("run ended with %#v", last(evs))
	}
	res := toolResults(h.fake.Requests()[1])
	if len(res) != 1 || !strings.Contains(res[0], `unknown subagent type "wizard"`) || !strings.Contains(res[0], "general-purpose, bash, researcher") {
		t.Errorf("result = %q", res)
	}
}

func TestPerRunLimitCountsEarlierResponses(t *testing.T) {
	h := newHarness(t, Options{MaxPerRun: 4})
	var mu sync.Mutex
	leadTurn := 0
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		defer mu.Unlock()
		if !isLead(r) {
			return fakeopenai.Turn{Text: "done " + firstUser(r)}
		}
		leadTurn++
		switch leadTurn {
		case 1:
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("a one", "1", GeneralPurpose), taskCall("a two", "2", GeneralPurpose), taskCall("a three", "3", GeneralPurpose)}}
		case 2:
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("b four", "4", GeneralPurpose), taskCall("b five", "5", GeneralPurpose)}}
		}
		return fakeopenai.Turn{Text: "finished"}
	})
	evs := h.run(context.Background(), "th_1", "go")
	if text(last(evs)) != "finished" {
		t.Fatalf("last = %+v", last(evs))
	}
	var final fakeopenai.Request
	for _, r := range h.fake.Requests() {
		if isLead(r) {
			final = r
		}
	}
	res := toolResults(final)
	if len(res) != 5 {
		t.Fatalf("%d results", len(res))
	}
	if !strings.Contains(res[3], "done 4") {
		t.Errorf("fourth task = %q", res[3])
	}
	if !strings.Contains(res[4], "already delegated 4 tasks, the limit is 4") {
		t.Errorf("fifth task = %q", res[4])
	}
	// A new message is a new run with a fresh allowance.
	h.fake.Script(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("c six", "6", GeneralPurpose)}}, fakeopenai.Turn{Text: "done 6"}, fakeopenai.Turn{Text: "again"})
	h.fake.Handle(nil)
	evs = h.run(context.Background(), "th_1", "more")
	if text(last(evs)) != "again" {
		t.Errorf("second run = %+v", last(evs))
	}
}

func TestTimeoutMarksTimedOutAndTheLeadContinues(t *testing.T) {
	h := newHarness(t, Options{Types: []Type{{Name: "slow", Description: "slow", Timeout: 300 * time.Millisecond}}})
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if !isLead(r) {
			return fakeopenai.Turn{Hold: make(chan struct{})} // never answers
		}
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Text: "The helper was too slow, so here is my own answer."}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Think slowly", "think", "slow")}}
	})
	evs := h.run(context.Background(), "th_1", "go")
	if text, ok := answer(last(evs)); !ok || !strings.Contains(text, "too slow") {
		t.Fatalf("last = %#v", last(evs))
	}
	tes := taskEvents(evs)
	end := tes[len(tes)-1]
	if end.Status != event.TaskTimedOut || end.Duration < 300*time.Millisecond {
		t.Errorf("task_done = %+v", end)
	}
	var res []string
	for _, r := range h.fake.Requests() {
		if isLead(r) {
			res = toolResults(r)
		}
	}
	if len(res) != 1 || !strings.Contains(res[0], "Status: timed_out") || !strings.Contains(res[0], "time limit of 300ms") {
		t.Errorf("result = %q", res)
	}
	h.fake.WaitCancelled(1) // the subagent's model stream was cut
}

func TestStopCancelsEverySubagentAndItsTools(t *testing.T) {
	cancelled := make(chan string, 8)
	h := newHarness(t, Options{}, fakeTool("bash", true, cancelled))
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if isLead(r) {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("one", "1", Bash), taskCall("two", "2", Bash), taskCall("three", "3", GeneralPurpose)}}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{}`}}}
	})
	done := make(chan []event.Event)
	go func() { done <- h.run(context.Background(), "th_1", "go") }()
	h.fake.WaitRequests(4)
	testutil.WaitFor(t, func() bool { return h.m.Running() == 3 })
	// Wait until all three commands run, then stop the lead's run.
	testutil.WaitFor(t, func() bool { return h.fake.InFlight() == 0 })
	time.Sleep(20 * time.Millisecond)
	if !h.lead.Stop("th_1") {
		t.Fatal("no run to stop")
	}
	evs := <-done
	if _, ok := last(evs).(event.Stopped); !ok {
		t.Fatalf("last = %#v", last(evs))
	}
	for range 3 {
		select {
		case <-cancelled:
		case <-time.After(5 * time.Second):
			t.Fatal("a subagent's command was not cancelled")
		}
	}
	statuses := map[string]string{}
	for _, te := range taskEvents(evs) {
		statuses[te.Description] = te.Status
	}
	if len(statuses) != 3 || statuses["one"] != event.TaskCancelled || statuses["two"] != event.TaskCancelled || statuses["three"] != event.TaskCancelled {
		t.Errorf("final statuses = %v", statuses)
	}
	var recs []*store.Task
	h.st.View(func(tx *store.Tx) error { recs, _ = tx.Tasks(h.runID("th_1")); return nil })
	for _, r := range recs {
		if r.Status != event.TaskCancelled {
			t.Errorf("record %s is %s", r.Description, r.Status)
		}
	}
}

func TestGlobalCapQueuesInOrder(t *testing.T) {
	h := newHarness(t, Options{MaxRunning: 1})
	var mu sync.Mutex
	var order []string
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if isLead(r) {
			if r.Last().Role == "tool" {
				return fakeopenai.Turn{Text: "both done"}
			}
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("first", "1", GeneralPurpose), taskCall("second", "2", GeneralPurpose), taskCall("third", "3", GeneralPurpose)}}
		}
		mu.Lock()
		order = append(order, firstUser(r))
		mu.Unlock()
		return fakeopenai.Turn{Text: "ok", Delay: 5 * time.Millisecond}
	})
	evs := h.run(context.Background(), "th_1", "go")
	if text(last(evs)) != "both done" {
		t.Fatalf("last = %+v", last(evs))
	}
	var pending []string
	for _, te := range taskEvents(evs) {
		if te.Status == event.TaskPending {
			pending = append(pending, fmt.Sprintf("%s:%d", te.Description, te.Ahead))
		}
	}
	// Whichever task got the slot first, the other two waited in line.
	if len(pending) != 2 || len(order) != 3 {
		t.Fatalf("pending events %v, model calls %v", pending, order)
	}
	first := pending[0][:strings.IndexByte(pending[0], ':')]
	second := pending[1][:strings.IndexByte(pending[1], ':')]
	if !strings.HasSuffix(pending[0], ":0") || !strings.HasSuffix(pending[1], ":1") {
		t.Errorf("ahead counts = %v", pending)
	}
	// FIFO: the tasks that waited ran in the order they queued.
	idx := func(p string) int {
		for i, o := range order {
			if o == map[string]string{"first": "1", "second": "2", "third": "3"}[p] {
				return i
			}
		}
		return -1
	}
	if idx(first) != 1 || idx(second) != 2 {
		t.Errorf("ran in order %v; queued %v", order, pending)
	}
}

func TestCustomTypeModelToolsAndTurns(t *testing.T) {
	h := newHarness(t, Options{Types: []Type{{
		Name: "reader", Description: "reads", SystemPrompt: "You read files.", Model: "small",
		Tools: []string{"ls", "read_file", "bash"}, DisallowedTools: []string{"bash"}, MaxTurns: 2,
	}}}, fakeTool("ls", false, nil), fakeTool("read_file", false, nil), fakeTool("bash", false, nil), fakeTool("grep", false, nil))
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if isLead(r) {
			if r.Last().Role == "tool" {
				return fakeopenai.Turn{Text: "done"}
			}
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Read it", "read", "reader")}}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{}`}}} // never finishes
	})
	evs := h.run(context.Background(), "th_1", "go")
	if text(last(evs)) != "done" {
		t.Fatalf("last = %+v", last(evs))
	}
	var sub []fakeopenai.Request
	var res []string
	for _, r := range h.fake.Requests() {
		if isLead(r) {
			res = toolResults(r)
		} else {
			sub = append(sub, r)
		}
	}
	if len(sub) != 2 {
		t.Fatalf("%d subagent requests, want 2 (max_turns)", len(sub))
	}
	if sub[0].Model != "small-model" || strings.Join(sub[0].ToolNames(), ",") != "ls,read_file" || !strings.Contains(sub[0].Messages[0].Content, "You read files.") {
		t.Errorf("subagent request: model %s tools %v prompt %q", sub[0].Model, sub[0].ToolNames(), sub[0].Messages[0].Content)
	}
	if len(res) != 1 || !strings.Contains(res[0], "Status: completed") || !strings.Contains(res[0], "used all of its 2 steps") {
		t.Errorf("result = %q", res)
	}
}

func TestSlotsFIFOAndCancel(t *testing.T) {
	s := newSlots(1)
	if err := s.acquire(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan struct{}, 3)
	for i := range 3 {
		c := context.Background()
		if i == 1 {
			c = ctx
		}
		go func() {
			if err := s.acquire(c, func(int) { queued <- struct{}{} }); err != nil {
				got <- -i
				return
			}
			got <- i
			s.release()
		}()
		<-queued // queue them in order
	}
	cancel()
	if g := <-got; g != -1 {
		t.Fatalf("first to return = %d, want the cancelled waiter", g)
	}
	s.release()
	if a, b := <-got, <-got; a != 0 || b != 2 {
		t.Errorf("served %d then %d, want 0 then 2", a, b)
	}
	testutil.WaitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.free == 1 && len(s.waiters) == 0
	})
}

func TestShutdownInterruptsTasks(t *testing.T) {
	h := newHarness(t, Options{})
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if isLead(r) {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{taskCall("Long job", "work", GeneralPurpose)}}
		}
		return fakeopenai.Turn{Hold: make(chan struct{})}
	})
	done := make(chan []event.Event)
	go func() { done <- h.run(context.Background(), "th_1", "go") }()
	h.fake.WaitRequests(2)
	h.lead.StopAll(context.Background(), errors.New("deerflow is shutting down"))
	evs := <-done
	tes := taskEvents(evs)
	if end := tes[len(tes)-1]; end.Status != event.TaskInterrupted || !strings.Contains(end.Result, "deerflow is shutting down") {
		t.Errorf("task_done = %+v", end)
	}
}
