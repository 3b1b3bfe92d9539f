package research

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/sandbox"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents"
	"github.com/deerflow/deerflow/tools"
	"github.com/deerflow/deerflow/web"
)

// waitLimit bounds every wait of these tests, so that a bug makes a test
// fail rather than hang.
const waitLimit = 30 * time.Second

const thread = "th_research"

// harness is the real wiring of a research: the lead agent, the subagents
// with the real web_fetch, a Researcher saving reports into a sandbox's
// outputs, a fake model server and a small web site.
type harness struct {
	t    *testing.T
	fake *fakeopenai.Server
	st   *store.Store
	lead *agent.Agent
	subs *subagents.Manager
	sb   *sandbox.Manager
	r    *Researcher
	site *httptest.Server

	// The model's behaviour, by role; set before the run they serve.
	planner  func(req fakeopenai.Request, n int) fakeopenai.Turn // n counts planner requests from 1
	step     func(req fakeopenai.Request, k int, title string) fakeopenai.Turn
	reporter func(req fakeopenai.Request) fakeopenai.Turn

	mu       sync.Mutex
	planners []fakeopenai.Request
	steps    map[string][]fakeopenai.Request // by step title
	reports  []fakeopenai.Request
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, fake: fakeopenai.New(t), st: testutil.Store(t), steps: map[string][]fakeopenai.Request{}}
	h.site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := strings.TrimPrefix(r.URL.Path, "/page")
		if _, err := strconv.Atoi(n); err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>Source %s</title></head><body><main><h1>Source %s</h1><p>Fact number %s is on this page, with enough text to count as content.</p></main></body></html>", n, n, n)
	}))
	t.Cleanup(h.site.Close)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	models := []agent.ModelRef{{Name: "default", ID: "fake-model",
		Model: llm.New(llm.Options{BaseURL: h.fake.URL, APIKey: "k", Model: "fake-model", MaxRetries: -1})}}
	reg := tools.NewRegistry(web.FetchTool(web.FetchOptions{AllowPrivate: true}))
	var err error
	if h.subs, err = subagents.New(subagents.Options{Store: h.st, Models: models, Tools: reg, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if h.lead, err = agent.New(agent.Options{Store: h.st, Models: models, Tools: reg, Logger: log}); err != nil {
		t.Fatal(err)
	}
	if h.sb, err = sandbox.New(sandbox.Options{DataDir: t.TempDir(), DeferProbe: true}); err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Agent, opts.Subagents, opts.SaveReport, opts.Logger = h.st, h.lead, h.subs, h.sb.SaveOutput, log
	if h.r, err = New(opts); err != nil {
		t.Fatal(err)
	}

	h.planner = func(fakeopenai.Request, int) fakeopenai.Turn { return planTurn(testPlan) }
	h.step = h.fetchThenAnswer
	h.reporter = func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "# Report\n\n## Key points\n- Something was found."}
	}
	h.fake.Handle(h.answer)
	return h
}

var stepLine = regexp.MustCompile(`Your step, (\d+) of \d+: (.*)`)

// answer is the fake model: it tells the planner, the steps and the
// reporter apart by their prompts.
func (h *harness) answer(req fakeopenai.Request) fakeopenai.Turn {
	system := ""
	if len(req.Messages) > 0 && req.Messages[0].Role == "system" {
		system = req.Messages[0].Content
	}
	h.mu.Lock()
	switch {
	case strings.Contains(system, "You are the planner of a research team"):
		h.planners = append(h.planners, req)
		n, f := len(h.planners), h.planner
		h.mu.Unlock()
		return f(req, n)
	case strings.Contains(system, "You are the reporter of a research team"):
		h.reports = append(h.reports, req)
		f := h.reporter
		h.mu.Unlock()
		return f(req)
	}
	m := stepLine.FindStringSubmatch(firstUser(req))
	if m == nil {
		h.mu.Unlock()
		h.t.Errorf("unexpected model request: %.300s", system)
		return fakeopenai.Turn{Text: "?"}
	}
	k, _ := strconv.Atoi(m[1])
	h.steps[m[2]] = append(h.steps[m[2]], req)
	f := h.step
	h.mu.Unlock()
	return f(req, k, m[2])
}

// pageURL is the site's page n.
func (h *harness) pageURL(n int) string { return fmt.Sprintf("%s/page%d", h.site.URL, n) }

// fetchThenAnswer is a research step that reads page k, then reports its
// findings; a processing step just answers.
func (h *harness) fetchThenAnswer(req fakeopenai.Request, k int, title string) fakeopenai.Turn {
	if isProcessing(req) {
		return fakeopenai.Turn{Text: "Computed table for " + title + "."}
	}
	if req.Last().Role != "tool" {
		return fetchCall(h.pageURL(k))
	}
	return fakeopenai.Turn{Text: fmt.Sprintf("Findings of step %d: fact %d (%s).", k, k, h.pageURL(k))}
}

// isProcessing tells a processing step's subagent (bash, or
// general-purpose without bash) from a research step's.
func isProcessing(req fakeopenai.Request) bool {
	return !strings.Contains(req.Messages[0].Content, "You are a research subagent")
}

func fetchCall(url string) fakeopenai.Turn {
	args, _ := json.Marshal(map[string]string{"url": url})
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "web_fetch", Arguments: string(args)}}}
}

func firstUser(req fakeopenai.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// stepRequests returns the model requests of the step titled title.
func (h *harness) stepRequests(title string) []fakeopenai.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.steps[title])
}

func (h *harness) plannerRequests() []fakeopenai.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.planners)
}

func (h *harness) reporterRequests() []fakeopenai.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reports)
}

// plan is a plan as the planner writes it.
type plan struct {
	Title   string     `json:"title"`
	Thought string     `json:"thought"`
	Steps   []planStep `json:"steps"`
}

type planStep struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	StepType    string `json:"step_type"`
}

var testPlan = plan{
	Title:   "Electric cars in Europe",
	Thought: "Sales first, then the charging network.",
	Steps: []planStep{
		{Title: "Sales figures", Description: "Find the sales of the last three years.", StepType: "research"},
		{Title: "Charging network", Description: "Find the number of public chargers.", StepType: "research"},
	},
}

func planJSON(p plan) string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func planTurn(p plan) fakeopenai.Turn { return fakeopenai.Turn{Text: planJSON(p)} }

// run is a research run whose events the test reads as they come.
type run struct {
	t   *testing.T
	ch  chan event.Event
	evs []event.Event
}

// start runs one message of the research in the background.
func (h *harness) start(mode, text string) *run {
	// Buffered: the research must not wait for the test to read (StopAll
	// waits for it to end).
	r := &run{t: h.t, ch: make(chan event.Event, 10000)}
	in := agent.Input{ThreadID: thread, ChatKey: "test:chat", UserID: "test:u", Text: text}
	go func() {
		defer close(r.ch)
		for ev := range h.r.Run(context.Background(), mode, in) {
			r.ch <- ev
		}
	}()
	return r
}

// run runs one message of the research and returns its events.
func (h *harness) run(mode, text string) []event.Event {
	h.t.Helper()
	return h.start(mode, text).wait()
}

// until reads events until one satisfies pred, and returns it.
func (r *run) until(what string, pred func(event.Event) bool) event.Event {
	r.t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-r.ch:
			if !ok {
				r.t.Fatalf("the run ended before %s; events:\n%s", what, dump(r.evs))
			}
			r.evs = append(r.evs, ev)
			if pred(ev) {
				return ev
			}
		case <-timeout:
			r.t.Fatalf("no %s within %s; events:\n%s", what, waitLimit, dump(r.evs))
		}
	}
}

// wait reads the run's events to its end and returns them all.
func (r *run) wait() []event.Event {
	r.t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-r.ch:
			if !ok {
				return r.evs
			}
			r.evs = append(r.evs, ev)
		case <-timeout:
			r.t.Fatalf("the run did not end within %s; events:\n%s", waitLimit, dump(r.evs))
		}
	}
}

// within runs f, failing the test if it does not return in time.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not within %s", what, waitLimit)
	}
}

func dump(evs []event.Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&sb, "  %s %.200s\n", event.Name(ev), fmt.Sprintf("%+v", ev))
	}
	return sb.String()
}

// final is the event a run ended with, which must be a T.
func final[T event.Event](t *testing.T, evs []event.Event) T {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	ev, ok := evs[len(evs)-1].(T)
	if !ok {
		var want T
		t.Fatalf("the run ended with %s, want %s; events:\n%s", event.Name(evs[len(evs)-1]), event.Name(want), dump(evs))
	}
	return ev
}

// answers are the texts of the run's event.Answer events.
func answers(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		if a, ok := ev.(event.Answer); ok {
			out = append(out, a.Text)
		}
	}
	return out
}

// tasks returns the tasks of the run's task events of type T
// (event.TaskStarted, ...), in order.
func tasks[T event.Event](evs []event.Event) []event.Task {
	var out []event.Task
	for _, ev := range evs {
		if _, ok := ev.(T); !ok {
			continue
		}
		switch ev := ev.(type) {
		case event.TaskStarted:
			out = append(out, ev.Task)
		case event.TaskProgress:
			out = append(out, ev.Task)
		case event.TaskDone:
			out = append(out, ev.Task)
		}
	}
	return out
}

// files returns the files the run presented.
func files(evs []event.Event) []event.File {
	var out []event.File
	for _, ev := range evs {
		if f, ok := ev.(event.FilesPresented); ok {
			out = append(out, f.Files...)
		}
	}
	return out
}

func readFile(t *testing.T, f event.File) string {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stored is the thread's research as stored.
func (h *harness) stored() *store.Research {
	h.t.Helper()
	var rec *store.Research
	err := h.st.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Research(thread)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

// references are the entries of the report's References section.
func references(t *testing.T, report string) []string {
	t.Helper()
	_, refs, ok := strings.Cut(report, "\n## References\n")
	if !ok {
		t.Fatalf("no References section in:\n%s", report)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(refs), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
