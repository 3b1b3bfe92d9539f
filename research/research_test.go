package research

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/subagents"
)

// The whole conversation: the plan, a change, the revised plan, ok, the
// steps in parallel (a processing step after them), the report.
func TestPlanReviseRunReport(t *testing.T) {
	h := newHarness(t, Options{MaxPlanIterations: 2})
	revised := plan{
		Title:   "Electric cars in Europe",
		Thought: "Sales, then prices, then a table.",
		Steps: []planStep{
			{Title: "Sales figures", Description: "Find the sales of the last three years.", StepType: "research"},
			{Title: "Prices", Description: "Find the prices of the ten best-selling models.", StepType: "research"},
			{Title: "Growth table", Description: "Tabulate the yearly growth.", StepType: "processing"},
		},
	}
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		if strings.Contains(req.Last().Content, "The person replied to it:") {
			return planTurn(revised)
		}
		return planTurn(testPlan)
	}
	// Step 1's first request waits for step 2's: they must run at once.
	step2 := make(chan struct{})
	var once sync.Once
	var parallel atomic.Bool
	h.step = func(req fakeopenai.Request, k int, title string) fakeopenai.Turn {
		switch {
		case k == 2:
			once.Do(func() { close(step2) })
		case k == 1 && req.Last().Role != "tool":
			select {
			case <-step2:
				parallel.Store(true)
			case <-time.After(waitLimit):
			}
		}
		return h.fetchThenAnswer(req, k, title)
	}
	h.reporter = func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "# Electric cars in Europe\n\n## Key points\n- Sales grew ([Source 1](" + h.pageURL(1) + ")).\n- Prices fell ([Source 2](" + h.pageURL(2) + "))."}
	}

	// The plan.
	evs := h.run(Start, "electric cars in Europe")
	msg := final[event.Answer](t, evs).Text
	for _, want := range []string{"📋 **Research plan: Electric cars in Europe**", "Sales first, then the charging network.",
		"1. **Sales figures**\nFind the sales", "2. **Charging network**\nFind the number", "Reply **ok** to start"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the plan message lacks %q:\n%s", want, msg)
		}
	}
	if _, ok := evs[0].(event.Started); !ok {
		t.Errorf("the first event is %s, want run_started", event.Name(evs[0]))
	}
	if !h.r.Pending(thread) || h.stored().Phase != store.ResearchReviewing {
		t.Fatalf("after the plan: pending %v, phase %q", h.r.Pending(thread), h.stored().Phase)
	}
	first := h.plannerRequests()[0]
	if !strings.Contains(first.Messages[0].Content, "Use at most 5 steps") || !strings.Contains(firstUser(first), "Research topic: electric cars in Europe") {
		t.Errorf("the planner request: %+v", first.Messages)
	}

	// A change: the planner gets it with the current plan.
	evs = h.run(Reply, "make step 2 about prices instead")
	msg = final[event.Answer](t, evs).Text
	for _, want := range []string{"📋 **Revised research plan: Electric cars in Europe**", "2. **Prices**", "3. **Growth table** _(processing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the revised plan lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Charging network") {
		t.Errorf("the revised plan keeps the old step 2:\n%s", msg)
	}
	preqs := h.plannerRequests()
	if len(preqs) != 2 {
		t.Fatalf("%d planner requests, want 2", len(preqs))
	}
	rev := preqs[1].Last().Content
	if !strings.Contains(rev, "The person replied to it:\nmake step 2 about prices instead") || !strings.Contains(rev, `"Charging network"`) {
		t.Errorf("the revision request lacks the feedback or the current plan:\n%s", rev)
	}
	if !strings.Contains(preqs[1].Messages[0].Content, `{"accepted": true}`) {
		t.Error("the revision request does not let the planner accept the plan")
	}
	if rec := h.stored(); rec.Revisions != 1 || !slices.Equal(rec.Feedback, []string{"make step 2 about prices instead"}) {
		t.Errorf("stored revisions %d, feedback %q", rec.Revisions, rec.Feedback)
	}

	// ok: the steps, then the report.
	evs = h.run(Reply, "ok")
	report := final[event.Answer](t, evs).Text
	if n := len(h.plannerRequests()); n != 2 {
		t.Errorf("ok went to the planner: %d planner requests", n)
	}
	if !parallel.Load() {
		t.Error("step 1 did not run while step 2 was running")
	}
	if h.subs.Has(subagents.Bash) {
		t.Fatal("the harness has no bash tool, yet the bash type is there")
	}
	var started []string
	for _, te := range tasks[event.TaskStarted](evs) {
		if te.Status == event.TaskRunning {
			started = append(started, te.Description+" "+te.Type)
		}
	}
	slices.Sort(started)
	if want := []string{"Step 1: Sales figures researcher", "Step 2: Prices researcher", "Step 3: Growth table general-purpose"}; !slices.Equal(started, want) {
		t.Errorf("tasks started: %q, want %q", started, want)
	}
	var done []string
	for _, te := range tasks[event.TaskDone](evs) {
		done = append(done, te.Description+" "+te.Status)
	}
	slices.Sort(done)
	if want := []string{"Step 1: Sales figures completed", "Step 2: Prices completed", "Step 3: Growth table completed"}; !slices.Equal(done, want) {
		t.Errorf("tasks done: %q, want %q", done, want)
	}
	// The processing step came after the research steps, with their findings.
	brief := firstUser(h.stepRequests("Growth table")[0])
	for _, want := range []string{"The findings of the steps before yours", "### Step 1: Sales figures\nFindings of step 1", "### Step 2: Prices\nFindings of step 2"} {
		if !strings.Contains(brief, want) {
			t.Errorf("the processing step's brief lacks %q:\n%s", want, brief)
		}
	}

	fs := files(evs)
	if len(fs) != 1 || fs[0].Name != ReportName {
		t.Fatalf("files presented: %+v", fs)
	}
	if got := readFile(t, fs[0]); got != report {
		t.Errorf("report.md differs from the answer:\n%s\n---\n%s", got, report)
	}
	if !strings.HasPrefix(report, "# Electric cars in Europe\n") || !strings.Contains(report, "[Source 1]("+h.pageURL(1)+")") {
		t.Errorf("the report:\n%s", report)
	}
	if got, want := references(t, report), []string{"1. [Source 1](" + h.pageURL(1) + ")", "2. [Source 2](" + h.pageURL(2) + ")"}; !slices.Equal(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
	rreq := h.reporterRequests()
	if len(rreq) != 1 {
		t.Fatalf("%d reporter requests", len(rreq))
	}
	if want := "## Pages read\n1. Source 1 — " + h.pageURL(1) + "\n2. Source 2 — " + h.pageURL(2) + "\n"; !strings.Contains(firstUser(rreq[0]), want) {
		t.Errorf("the reporter request lacks %q:\n%s", want, firstUser(rreq[0]))
	}
	var panels int
	for _, ev := range evs {
		if st, ok := ev.(event.Status); ok && strings.HasPrefix(st.Panel, "🔎 Research: Electric cars in Europe\n") {
			panels++
		}
	}
	if panels == 0 {
		t.Error("no status panel while the plan ran")
	}

	rec := h.stored()
	if rec.Phase != store.ResearchDone || len(rec.Steps) != 3 {
		t.Fatalf("stored: phase %q, %d steps", rec.Phase, len(rec.Steps))
	}
	for i, st := range rec.Steps {
		if st.Status != event.TaskCompleted || st.TaskID == "" {
			t.Errorf("stored step %d: %+v", i+1, st)
		}
	}
	if want := []store.ResearchSource{{URL: h.pageURL(1), Title: "Source 1"}}; !slices.Equal(rec.Steps[0].Sources, want) {
		t.Errorf("step 1's sources %+v, want %+v", rec.Steps[0].Sources, want)
	}
	if h.r.Pending(thread) || h.r.Resumable(thread) {
		t.Error("a finished research is pending or resumable")
	}
	if got, want := h.r.Status(thread), "Research: Electric cars in Europe — done, the report was delivered\n✅ 1. Sales figures\n✅ 2. Prices\n✅ 3. Growth table (processing)"; got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}

	// The thread holds the conversation as the person had it.
	var msgs []*store.Message
	if err := h.st.View(func(tx *store.Tx) error {
		var err error
		msgs, err = tx.Messages(thread, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var conv []string
	for _, m := range msgs {
		conv = append(conv, m.Role+": "+oneLine(m.Content, 40))
	}
	want := []string{
		"user: /research electric cars in Europe",
		"assistant: " + oneLine("📋 **Research plan: Electric cars in Europe**", 40),
		"user: make step 2 about prices instead",
		"assistant: " + oneLine("📋 **Revised research plan: Electric cars in Europe**", 40),
		"user: ok",
		"assistant: " + oneLine(report, 40),
	}
	if !slices.Equal(conv, want) {
		t.Errorf("thread messages:\n%q\nwant:\n%q", conv, want)
	}
}

// A plan that is not valid JSON is asked for again, once, with what is
// wrong with it.
func TestInvalidPlanIsAskedAgain(t *testing.T) {
	h := newHarness(t, Options{})
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		if n == 1 {
			return fakeopenai.Turn{Text: "Sure! First I'd look at sales, then at chargers."}
		}
		return planTurn(testPlan)
	}
	msg := final[event.Answer](t, h.run(Start, "electric cars")).Text
	if !strings.Contains(msg, "Research plan: Electric cars in Europe") {
		t.Errorf("the answer is not the plan:\n%s", msg)
	}
	preqs := h.plannerRequests()
	if len(preqs) != 2 {
		t.Fatalf("%d planner requests, want 2", len(preqs))
	}
	again := preqs[1].Messages
	if n := len(again); n != 4 || again[2].Role != "assistant" || !strings.Contains(again[2].Content, "Sure! First") ||
		!strings.Contains(again[3].Content, "That answer is not a valid plan: it contains no JSON object") {
		t.Errorf("the second planner request: %+v", again)
	}
}

// A plan invalid twice fails the research; /retry plans again.
func TestInvalidPlanTwiceFails(t *testing.T) {
	h := newHarness(t, Options{})
	noType := "```json\n{\"title\": \"Cars\", \"thought\": \"\", \"steps\": [{\"title\": \"Sales\", \"description\": \"Find sales.\"}]}\n```"
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		if n <= 2 {
			return fakeopenai.Turn{Text: noType}
		}
		return planTurn(testPlan)
	}
	evs := h.run(Start, "electric cars")
	ev := final[event.Error](t, evs)
	if !strings.HasPrefix(ev.Text, "I couldn't make a research plan") || !strings.Contains(ev.Text, "/retry") {
		t.Errorf("error text: %q", ev.Text)
	}
	if ev.Err == nil {
		t.Error("the error event has no error")
	}
	preqs := h.plannerRequests()
	if len(preqs) != 2 {
		t.Fatalf("%d planner requests, want 2", len(preqs))
	}
	if complaint := preqs[1].Last().Content; !strings.Contains(complaint, `step 1 has step_type ""; it must be "research" or "processing"`) {
		t.Errorf("the complaint: %q", complaint)
	}
	rec := h.stored()
	if rec.Phase != store.ResearchFailed || rec.Error == "" {
		t.Errorf("stored phase %q, error %q", rec.Phase, rec.Error)
	}
	if h.r.Pending(thread) || !h.r.Resumable(thread) {
		t.Errorf("pending %v, resumable %v; want a resumable research", h.r.Pending(thread), h.r.Resumable(thread))
	}
	if st := h.r.Status(thread); !strings.Contains(st, "failed (") || !strings.Contains(st, "/retry tries again") {
		t.Errorf("status: %q", st)
	}

	msg := final[event.Answer](t, h.run(Resume, "/research electric cars")).Text
	if !strings.Contains(msg, "Research plan: Electric cars in Europe") {
		t.Errorf("resume did not plan again:\n%s", msg)
	}
	if n := len(h.plannerRequests()); n != 3 {
		t.Errorf("%d planner requests, want 3", n)
	}
	if rec := h.stored(); rec.Phase != store.ResearchReviewing || rec.Error != "" {
		t.Errorf("after resume: phase %q, error %q", rec.Phase, rec.Error)
	}
}

// A plan in a code fence, with a sentence before it, is taken as it is.
func TestFencedPlanAccepted(t *testing.T) {
	h := newHarness(t, Options{})
	h.planner = func(fakeopenai.Request, int) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "Here is the plan:\n```json\n" + planJSON(testPlan) + "\n```"}
	}
	msg := final[event.Answer](t, h.run(Start, "electric cars")).Text
	if !strings.Contains(msg, "1. **Sales figures**") {
		t.Errorf("the plan message:\n%s", msg)
	}
	if n := len(h.plannerRequests()); n != 1 {
		t.Errorf("%d planner requests, want 1", n)
	}
}

// Auto: plan, steps and report in one run, without a review.
func TestAuto(t *testing.T) {
	h := newHarness(t, Options{MaxClarifications: 1})
	evs := h.run(Auto, "electric cars")
	ans := answers(evs)
	if len(ans) != 1 {
		t.Fatalf("%d answers, want only the report: %q", len(ans), ans)
	}
	report := final[event.Answer](t, evs).Text
	if !strings.HasPrefix(report, "# Report") || strings.Contains(report, "Reply **ok**") {
		t.Errorf("the answer:\n%s", report)
	}
	if sys := h.plannerRequests()[0].Messages[0].Content; strings.Contains(sys, `{"question"`) {
		t.Error("auto mode lets the planner ask a question")
	}
	if n := len(tasks[event.TaskDone](evs)); n != 2 {
		t.Errorf("%d tasks done, want 2", n)
	}
	if got := references(t, report); len(got) != 2 {
		t.Errorf("references: %q", got)
	}
	if fs := files(evs); len(fs) != 1 || readFile(t, fs[0]) != report {
		t.Errorf("files: %+v", fs)
	}
	rec := h.stored()
	if !rec.Auto || rec.Phase != store.ResearchDone {
		t.Errorf("stored: auto %v, phase %q", rec.Auto, rec.Phase)
	}
}

// A clarifying question, its answer, then the plan; no second question.
func TestClarification(t *testing.T) {
	h := newHarness(t, Options{MaxClarifications: 1})
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		if strings.Contains(req.Messages[0].Content, `{"question"`) {
			return fakeopenai.Turn{Text: `{"question": "Which countries?"}`}
		}
		return planTurn(testPlan)
	}
	if got := final[event.Answer](t, h.run(Start, "electric cars")).Text; !strings.Contains(got, "Which countries?") || strings.Contains(got, "Research plan") {
		t.Errorf("the answer is %q, want the question", got)
	}
	rec := h.stored()
	if rec.Phase != store.ResearchClarifying || len(rec.Questions) != 1 || !h.r.Pending(thread) {
		t.Fatalf("stored: phase %q, questions %+v", rec.Phase, rec.Questions)
	}
	if st := h.r.Status(thread); st != "Research: electric cars — waiting for your answer to my question" {
		t.Errorf("status: %q", st)
	}

	msg := final[event.Answer](t, h.run(Reply, "Germany and France")).Text
	if !strings.Contains(msg, "Research plan: Electric cars in Europe") {
		t.Errorf("the answer is not the plan:\n%s", msg)
	}
	preqs := h.plannerRequests()
	if len(preqs) != 2 {
		t.Fatalf("%d planner requests, want 2", len(preqs))
	}
	if strings.Contains(preqs[1].Messages[0].Content, `{"question"`) {
		t.Error("the planner may ask a second question")
	}
	if u := firstUser(preqs[1]); !strings.Contains(u, "You asked: Which countries?\nThe person answered: Germany and France") {
		t.Errorf("the planner request lacks the answer:\n%s", u)
	}
	if q := h.stored().Questions; len(q) != 1 || q[0].Answer != "Germany and France" {
		t.Errorf("stored questions %+v", q)
	}

	final[event.Answer](t, h.run(Reply, "OK!"))
	if brief := firstUser(h.stepRequests("Sales figures")[0]); !strings.Contains(brief, "(Asked: Which countries? Answer: Germany and France)") {
		t.Errorf("the step's brief lacks the clarification:\n%s", brief)
	}
}

// The report's links and references name only pages the steps read.
func TestReportReferencesOnlyFetchedPages(t *testing.T) {
	h := newHarness(t, Options{})
	h.reporter = func(fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "# Cars\n\n## Key points\n" +
			"- Sales grew ([Source 1](" + h.pageURL(1) + ")), as [a blog](" + h.pageURL(9) + ") says.\n" +
			"- Chargers doubled ([Source 2](" + h.pageURL(2) + "#table)); see https://bare.example/data.\n\n" +
			"## Sources\n- [Made up](https://made-up.example/a)\n- https://made-up.example/b\n"}
	}
	report := final[event.Answer](t, h.run(Auto, "electric cars")).Text
	for _, want := range []string{"[Source 1](" + h.pageURL(1) + ")", "as a blog says", "[Source 2](" + h.pageURL(2) + "#table)", "; see."} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	for _, gone := range []string{"/page9", "bare.example", "made-up.example", "## Sources", "Made up"} {
		if strings.Contains(report, gone) {
			t.Errorf("the report keeps %q:\n%s", gone, report)
		}
	}
	if got, want := references(t, report), []string{"1. [Source 1](" + h.pageURL(1) + ")", "2. [Source 2](" + h.pageURL(2) + ")"}; !slices.Equal(got, want) {
		t.Errorf("references %q, want %q", got, want)
	}
}

// Pending, Status and Cancel as /status and /stop use them.
func TestPendingStatusCancel(t *testing.T) {
	h := newHarness(t, Options{})
	if h.r.Pending(thread) || h.r.Resumable(thread) || h.r.Status(thread) != "" || h.r.Cancel(thread) {
		t.Fatal("a thread without a research has one")
	}

	// While the planner works, the research is live, not interrupted.
	release := make(chan struct{})
	h.planner = func(fakeopenai.Request, int) fakeopenai.Turn {
		return fakeopenai.Turn{Text: planJSON(testPlan), Hold: release}
	}
	r := h.start(Start, "electric cars")
	within(t, "the planner request", func() { h.fake.WaitRequests(1) })
	if st := h.r.Status(thread); st != "Research: electric cars — planning" {
		t.Errorf("status while planning: %q", st)
	}
	if h.r.Resumable(thread) || h.r.Pending(thread) {
		t.Error("a research being planned is resumable or pending")
	}
	if h.r.Cancel(thread) {
		t.Error("Cancel dropped a running research")
	}
	busy := final[event.Error](t, h.run(Reply, "ok"))
	if !errors.Is(busy.Err, agent.ErrThreadBusy) {
		t.Errorf("a second run on the thread: %v", busy.Err)
	}
	close(release)
	final[event.Answer](t, r.wait())

	if !h.r.Pending(thread) || h.r.Resumable(thread) {
		t.Errorf("reviewing: pending %v, resumable %v", h.r.Pending(thread), h.r.Resumable(thread))
	}
	if got, want := h.r.Status(thread), "Research: Electric cars in Europe — the plan waits for your ok or changes\n▫️ 1. Sales figures\n▫️ 2. Charging network"; got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}
	if !h.r.Cancel(thread) {
		t.Fatal("Cancel did not drop the plan under review")
	}
	if h.r.Cancel(thread) {
		t.Error("Cancel dropped it twice")
	}
	if h.r.Pending(thread) || h.stored().Phase != store.ResearchCancelled {
		t.Errorf("after Cancel: pending %v, phase %q", h.r.Pending(thread), h.stored().Phase)
	}
	if st := h.r.Status(thread); !strings.HasPrefix(st, "Research: Electric cars in Europe — cancelled\n") {
		t.Errorf("status: %q", st)
	}
	ev := final[event.Error](t, h.run(Reply, "ok"))
	if !strings.HasPrefix(ev.Text, "This research has ended") {
		t.Errorf("a reply to a dropped plan: %q", ev.Text)
	}
	if len(h.stepRequests("Sales figures")) != 0 {
		t.Error("a dropped plan ran")
	}
}

// With no plan revisions allowed, a change is refused and the plan stands.
func TestNoRevisions(t *testing.T) {
	h := newHarness(t, Options{})
	final[event.Answer](t, h.run(Start, "electric cars"))
	msg := final[event.Answer](t, h.run(Reply, "add a step on batteries")).Text
	if !strings.Contains(msg, "Plans are not revised") {
		t.Errorf("the answer: %q", msg)
	}
	if n := len(h.plannerRequests()); n != 1 {
		t.Errorf("%d planner requests, want 1", n)
	}
	if !h.r.Pending(thread) {
		t.Error("the plan no longer waits")
	}
}

// A change the planner reads as an ok starts the plan.
func TestPlannerAccepts(t *testing.T) {
	h := newHarness(t, Options{MaxPlanIterations: 1})
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		if n == 2 {
			return fakeopenai.Turn{Text: `{"accepted": true}`}
		}
		return planTurn(testPlan)
	}
	final[event.Answer](t, h.run(Start, "electric cars"))
	report := final[event.Answer](t, h.run(Reply, "that looks right to me, go on")).Text
	if !strings.HasPrefix(report, "# Report") {
		t.Errorf("the answer is not the report:\n%s", report)
	}
	if rec := h.stored(); rec.Phase != store.ResearchDone || rec.Revisions != 0 {
		t.Errorf("stored: phase %q, revisions %d", rec.Phase, rec.Revisions)
	}
}

// A revision that fails leaves the plan standing; after the last revision
// a change is refused.
func TestRevisionLimits(t *testing.T) {
	h := newHarness(t, Options{MaxPlanIterations: 1})
	revised := testPlan
	revised.Steps = []planStep{testPlan.Steps[0], {Title: "Prices", Description: "Find prices.", StepType: "research"}}
	h.planner = func(req fakeopenai.Request, n int) fakeopenai.Turn {
		switch n {
		case 1:
			return planTurn(testPlan)
		case 2:
			return fakeopenai.Turn{Status: 400}
		}
		return planTurn(revised)
	}
	final[event.Answer](t, h.run(Start, "electric cars"))

	ev := final[event.Error](t, h.run(Reply, "prices instead of chargers"))
	if !strings.Contains(ev.Text, "The plan above still stands") {
		t.Errorf("error text: %q", ev.Text)
	}
	if rec := h.stored(); rec.Phase != store.ResearchReviewing || rec.Revisions != 0 || !h.r.Pending(thread) {
		t.Fatalf("after a failed revision: phase %q, revisions %d", rec.Phase, rec.Revisions)
	}

	msg := final[event.Answer](t, h.run(Reply, "prices instead of chargers")).Text
	if !strings.Contains(msg, "Revised research plan") || !strings.Contains(msg, "This is the last revision I make") {
		t.Errorf("the revised plan:\n%s", msg)
	}
	if got, want := h.r.Status(thread), "Research: Electric cars in Europe — revised plan 1 of 1 waits for your ok or changes\n▫️ 1. Sales figures\n▫️ 2. Prices"; got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}

	msg = final[event.Answer](t, h.run(Reply, "and add batteries")).Text
	if !strings.Contains(msg, "Reply ok to start it as it stands") {
		t.Errorf("a change after the last revision: %q", msg)
	}
	if n := len(h.plannerRequests()); n != 3 {
		t.Errorf("%d planner requests, want 3", n)
	}
	report := final[event.Answer](t, h.run(Reply, "ok")).Text
	if len(h.stepRequests("Prices")) == 0 || len(h.stepRequests("Charging network")) != 0 {
		t.Error("ok did not run the revised plan")
	}
	if !strings.HasPrefix(report, "# Report") {
		t.Errorf("the report:\n%s", report)
	}
}
