package research

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/store"
)

// /stop while the steps run cancels the research; nothing hangs.
func TestStopWhileRunning(t *testing.T) {
	h := newHarness(t, Options{})
	h.step = func(fakeopenai.Request, int, string) fakeopenai.Turn {
		return fakeopenai.Turn{Hold: make(chan struct{})} // until cancelled
	}
	r := h.start(Auto, "electric cars")
	running := 0
	r.until("both steps running", func(ev event.Event) bool {
		if ts, ok := ev.(event.TaskStarted); ok && ts.Task.Status == event.TaskRunning {
			running++
		}
		return running == 2
	})
	within(t, "both step requests", func() { h.fake.WaitRequests(3) }) // the planner and the two steps
	if !h.lead.Stop(thread) {
		t.Fatal("Stop found no active run")
	}
	evs := r.wait()
	final[event.Stopped](t, evs)
	within(t, "the step requests cancelled", func() { h.fake.WaitCancelled(2) })

	for _, te := range tasks[event.TaskDone](evs) {
		if te.Status != event.TaskCancelled || te.Result != "The task was cancelled before it finished." {
			t.Errorf("task %q ended %q: %q", te.Description, te.Status, te.Result)
		}
	}
	if n := len(tasks[event.TaskDone](evs)); n != 2 {
		t.Errorf("%d tasks done, want 2", n)
	}
	if len(h.reporterRequests()) != 0 || len(files(evs)) != 0 {
		t.Error("a stopped research wrote a report")
	}
	rec := h.stored()
	if rec.Phase != store.ResearchCancelled {
		t.Errorf("stored phase %q, want cancelled", rec.Phase)
	}
	for i, st := range rec.Steps {
		if st.Status != event.TaskCancelled {
			t.Errorf("stored step %d: %q", i+1, st.Status)
		}
	}
	if h.r.Resumable(thread) || h.r.Pending(thread) {
		t.Error("a cancelled research is resumable or pending")
	}
	if _, ok := h.lead.Active(thread); ok {
		t.Error("the thread still has an active run")
	}
	if st := h.r.Status(thread); !strings.HasPrefix(st, "Research: Electric cars in Europe — cancelled\n⏹ 1. Sales figures\n⏹ 2. Charging network") {
		t.Errorf("status:\n%s", st)
	}
}

// A research a shutdown interrupted stays unfinished; /retry runs only the
// steps that had not finished, and writes the report.
func TestResumeAfterInterruption(t *testing.T) {
	h := newHarness(t, Options{})
	var hold atomic.Bool
	hold.Store(true)
	held := make(chan struct{})
	var once sync.Once
	h.step = func(req fakeopenai.Request, k int, title string) fakeopenai.Turn {
		if k == 2 && hold.Load() {
			once.Do(func() { close(held) })
			return fakeopenai.Turn{Hold: make(chan struct{})}
		}
		return h.fetchThenAnswer(req, k, title)
	}
	r := h.start(Auto, "electric cars")
	r.until("step 1 done", func(ev event.Event) bool {
		td, ok := ev.(event.TaskDone)
		if !ok {
			return false
		}
		te := td.Task
		return te.Description == "Step 1: Sales figures" && te.Status == event.TaskCompleted
	})
	select {
	case <-held:
	case <-time.After(waitLimit):
		t.Fatal("step 2 never asked the model")
	}
	within(t, "StopAll", func() { h.lead.StopAll(context.Background(), errors.New("shutdown")) })
	evs := r.wait()
	final[event.Stopped](t, evs)

	rec := h.stored()
	if rec.Phase != store.ResearchRunning {
		t.Errorf("stored phase %q, want running", rec.Phase)
	}
	if rec.Steps[0].Status != event.TaskCompleted || rec.Steps[1].Status != event.TaskInterrupted {
		t.Errorf("stored steps: %q, %q", rec.Steps[0].Status, rec.Steps[1].Status)
	}
	if !h.r.Resumable(thread) || h.r.Pending(thread) {
		t.Errorf("resumable %v, pending %v; want resumable", h.r.Resumable(thread), h.r.Pending(thread))
	}
	if st := h.r.Status(thread); !strings.HasPrefix(st, "Research: Electric cars in Europe — interrupted with 1 of 2 steps done; /retry resumes it\n✅ 1. Sales figures\n⏹ 2. Charging network") {
		t.Errorf("status:\n%s", st)
	}

	hold.Store(false)
	step1, step2 := len(h.stepRequests("Sales figures")), len(h.stepRequests("Charging network"))
	evs = h.run(Resume, "/research auto electric cars")
	report := final[event.Answer](t, evs).Text
	if n := len(h.stepRequests("Sales figures")); n != step1 {
		t.Errorf("step 1 ran again: %d requests, had %d", n, step1)
	}
	if n := len(h.stepRequests("Charging network")); n != step2+2 {
		t.Errorf("step 2 made %d requests on resume, want 2", n-step2)
	}
	var started []string
	for _, te := range tasks[event.TaskStarted](evs) {
		started = append(started, te.Description)
	}
	if slices.Contains(started, "Step 1: Sales figures") {
		t.Errorf("resume started step 1 again: %q", started)
	}
	if got, want := references(t, report), []string{"1. [Source 1](" + h.pageURL(1) + ")", "2. [Source 2](" + h.pageURL(2) + ")"}; !slices.Equal(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
	if u := firstUser(h.reporterRequests()[0]); !strings.Contains(u, "Findings of step 1") || !strings.Contains(u, "Findings of step 2") {
		t.Errorf("the reporter lacks a step's findings:\n%s", u)
	}
	if rec := h.stored(); rec.Phase != store.ResearchDone {
		t.Errorf("stored phase %q, want done", rec.Phase)
	}
	if h.r.Resumable(thread) {
		t.Error("a finished research is resumable")
	}
}

// When every step fails there is no report; /retry runs the steps again.
func TestAllStepsFail(t *testing.T) {
	h := newHarness(t, Options{})
	var fail atomic.Bool
	fail.Store(true)
	h.step = func(req fakeopenai.Request, k int, title string) fakeopenai.Turn {
		if fail.Load() {
			return fakeopenai.Turn{Status: 400}
		}
		return h.fetchThenAnswer(req, k, title)
	}
	evs := h.run(Auto, "electric cars")
	ev := final[event.Error](t, evs)
	if !strings.HasPrefix(ev.Text, "None of the 2 research steps finished") {
		t.Errorf("error text: %q", ev.Text)
	}
	for _, te := range tasks[event.TaskDone](evs) {
		if te.Status != event.TaskFailed {
			t.Errorf("task %q ended %q", te.Description, te.Status)
		}
	}
	if len(h.reporterRequests()) != 0 {
		t.Error("the reporter was asked without findings")
	}
	if rec := h.stored(); rec.Phase != store.ResearchFailed || !h.r.Resumable(thread) {
		t.Fatalf("stored phase %q, resumable %v", rec.Phase, h.r.Resumable(thread))
	}

	fail.Store(false)
	report := final[event.Answer](t, h.run(Resume, "/research auto electric cars")).Text
	if got := references(t, report); len(got) != 2 {
		t.Errorf("references after resume: %q", got)
	}
	if rec := h.stored(); rec.Phase != store.ResearchDone || rec.Error != "" {
		t.Errorf("stored phase %q, error %q", rec.Phase, rec.Error)
	}
}

// A failed step leaves a gap the reporter is told of; the report is still
// written from the others.
func TestOneStepFails(t *testing.T) {
	h := newHarness(t, Options{})
	h.step = func(req fakeopenai.Request, k int, title string) fakeopenai.Turn {
		if k == 2 {
			return fakeopenai.Turn{Status: 400}
		}
		return h.fetchThenAnswer(req, k, title)
	}
	report := final[event.Answer](t, h.run(Auto, "electric cars")).Text
	if got, want := references(t, report), []string{"1. [Source 1](" + h.pageURL(1) + ")"}; !slices.Equal(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
	if u := firstUser(h.reporterRequests()[0]); !strings.Contains(u, "### Step 2: Charging network (research)\n(This step did not finish: failed.") {
		t.Errorf("the reporter is not told of the failed step:\n%s", u)
	}
	if st := h.r.Status(thread); !strings.Contains(st, "✅ 1. Sales figures\n❌ 2. Charging network") {
		t.Errorf("status:\n%s", st)
	}
}

// A report that fails keeps the steps' findings: /retry only writes the
// report again.
func TestReportFailsThenResume(t *testing.T) {
	h := newHarness(t, Options{})
	var empty atomic.Bool
	empty.Store(true)
	h.reporter = func(fakeopenai.Request) fakeopenai.Turn {
		if empty.Load() {
			return fakeopenai.Turn{Text: "  "}
		}
		return fakeopenai.Turn{Text: "# Report\n\nDone."}
	}
	ev := final[event.Error](t, h.run(Auto, "electric cars"))
	if !strings.HasPrefix(ev.Text, "The report came back empty.") || !strings.Contains(ev.Text, "/retry") {
		t.Errorf("error text: %q", ev.Text)
	}
	if rec := h.stored(); rec.Phase != store.ResearchFailed || !h.r.Resumable(thread) {
		t.Fatalf("stored phase %q, resumable %v", rec.Phase, h.r.Resumable(thread))
	}
	steps := len(h.stepRequests("Sales figures")) + len(h.stepRequests("Charging network"))

	empty.Store(false)
	evs := h.run(Resume, "/research auto electric cars")
	report := final[event.Answer](t, evs).Text
	if !strings.HasPrefix(report, "# Report\n\nDone.") {
		t.Errorf("the report:\n%s", report)
	}
	if n := len(h.stepRequests("Sales figures")) + len(h.stepRequests("Charging network")); n != steps {
		t.Errorf("resume ran steps again: %d step requests, had %d", n, steps)
	}
	if n := len(tasks[event.TaskStarted](evs)); n != 0 {
		t.Errorf("resume started %d tasks", n)
	}
	if len(h.reporterRequests()) != 2 {
		t.Errorf("%d reporter requests, want 2", len(h.reporterRequests()))
	}
}
