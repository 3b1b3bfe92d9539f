package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/store"
)

// The markers by which the fake model tells the research's requests apart.
const (
	plannerMark  = "You are the planner of a research team"
	reviseMark   = "The person replied to it:"
	stepperMark  = "You are a research subagent"
	reporterMark = "You are the reporter of a research team"
)

// unreadURL is a page no step fetched; the reporter cites it anyway.
const unreadURL = "https://unread.example.com/claims"

var stepLine = regexp.MustCompile(`Your step, (\d+) of (\d+): ([^\n]*)`)

// systemHas reports whether a system message of r contains s.
func systemHas(r fakeopenai.Request, s string) bool {
	for _, m := range r.Messages {
		if m.Role == "system" && strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// firstUser is r's first user message.
func firstUser(r fakeopenai.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// stepOf says which plan step r works on: k of n, with its title.
func stepOf(r fakeopenai.Request) (k, n int, title string, ok bool) {
	sub := stepLine.FindStringSubmatch(firstUser(r))
	if sub == nil || systemHas(r, plannerMark) || systemHas(r, reporterMark) {
		return 0, 0, "", false
	}
	k, _ = strconv.Atoi(sub[1])
	n, _ = strconv.Atoi(sub[2])
	return k, n, strings.TrimSpace(sub[3]), true
}

type planStep struct{ title, kind string }

// planJSON is a planner's answer.
func planJSON(title string, steps ...planStep) string {
	type st struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		StepType    string `json:"step_type"`
	}
	var out struct {
		Title   string `json:"title"`
		Thought string `json:"thought"`
		Steps   []st   `json:"steps"`
	}
	out.Title, out.Thought = title, "Facts first, then the numbers."
	for _, s := range steps {
		kind := s.kind
		if kind == "" {
			kind = "research"
		}
		out.Steps = append(out.Steps, st{Title: s.title, Description: "Find out about " + strings.ToLower(s.title) + ".", StepType: kind})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// fetchTurn has a research step read page with web_fetch, then (once the
// page is in) answer findings.
func fetchTurn(r fakeopenai.Request, page, findings string) fakeopenai.Turn {
	if r.Last().Role == "tool" {
		return fakeopenai.Turn{Text: findings}
	}
	return fakeopenai.Turn{Text: "Reading the page.", ToolCalls: []fakeopenai.ToolCall{{Name: "web_fetch", Arguments: `{"url":"` + page + `"}`}}}
}

// researchSite serves the pages the steps read.
func researchSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/article":
			fmt.Fprint(w, `<html><head><title>Ferries</title></head><body><article><h1>Electric ferries</h1><p>Norway runs more than 80 electric ferries.</p></article></body></html>`)
		case "/prices":
			fmt.Fprint(w, `<html><head><title>Ferry prices</title></head><body><article><h1>Prices</h1><p>A crossing costs 120 NOK on an electric ferry.</p></article></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// researchConfig lets web_fetch read the local site.
func researchConfig(c *config.Config) { c.Tools.WebFetch.AllowPrivateAddresses = true }

// current is the message's latest state.
func current(tg *faketelegram.Server, chat int64, m *faketelegram.SentMessage) *faketelegram.SentMessage {
	for _, cur := range tg.Messages(chat) {
		if cur.MessageID == m.MessageID {
			return cur
		}
	}
	return m
}

// waitMessageState waits until message m shows want.
func waitMessageState(t *testing.T, tg *faketelegram.Server, chat int64, m *faketelegram.SentMessage, want string) *faketelegram.SentMessage {
	t.Helper()
	var cur *faketelegram.SentMessage
	tg.WaitFor(func() bool {
		cur = current(tg, chat, m)
		return strings.Contains(cur.PlainText, want)
	})
	if !strings.Contains(cur.PlainText, want) {
		t.Fatalf("message %d never showed %q; it shows %q", m.MessageID, want, cur.PlainText)
	}
	return cur
}

// showing counts the bot's messages in chat that show s.
func showing(tg *faketelegram.Server, chat int64, s string) int {
	n := 0
	for _, m := range tg.Messages(chat) {
		if strings.Contains(m.PlainText, s) {
			n++
		}
	}
	return n
}

// waitDocument waits for a document called name in chat.
func waitDocument(t *testing.T, tg *faketelegram.Server, chat int64, name string) *faketelegram.SentFile {
	t.Helper()
	var doc *faketelegram.SentFile
	tg.WaitFor(func() bool {
		for _, m := range tg.Messages(chat) {
			if m.Document != nil && m.Document.Filename == name {
				doc = m.Document
				return true
			}
		}
		return false
	})
	if doc == nil {
		t.Fatalf("no document %s was sent; messages:%s", name, dump(tg.Messages(chat)))
	}
	return doc
}

// lastAnswer is the thread's last assistant message, as stored.
func lastAnswer(t *testing.T, run *serveRun, chatKey string) string {
	t.Helper()
	id, err := run.app.store.ChatThread(chatKey)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := run.app.store.Messages(id, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return msgs[i].Content
		}
	}
	t.Fatal("the thread has no answer")
	return ""
}

// researchOf is the thread's research record.
func researchOf(t *testing.T, run *serveRun, chatKey string) *store.Research {
	t.Helper()
	id, err := run.app.store.ChatThread(chatKey)
	if err != nil {
		t.Fatal(err)
	}
	var rec *store.Research
	if err := run.app.store.View(func(tx *store.Tx) error {
		var err error
		rec, err = tx.Research(id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rec
}

func refusedCalls(t *testing.T, tg *faketelegram.Server) {
	t.Helper()
	for _, c := range tg.Calls() {
		if c.Status != 200 && c.Method != "getUpdates" {
			t.Errorf("Telegram refused %s: %s", c.Method, c.Error)
		}
	}
}

// TestTelegramResearchPlanEditOkReport: /research → the plan; the person
// changes a step → the revised plan; "ok" → one threaded progress reply
// per step → the report, whose references are exactly the pages read, in
// the chat and as report.md.
func TestTelegramResearchPlanEditOkReport(t *testing.T) {
	tg, model, site := newTelegram(t), fakeopenai.New(t), researchSite(t)
	article, prices := site.URL+"/article", site.URL+"/prices"
	const title = "Electric ferries in Norway"
	first := planJSON(title, planStep{title: "Fleet size"}, planStep{title: "Charging infrastructure"}, planStep{title: "Cost table", kind: "processing"})
	revised := planJSON(title, planStep{title: "Fleet size"}, planStep{title: "Price comparison"}, planStep{title: "Cost table", kind: "processing"})
	report := "# " + title + "\n\n## Key points\n\n- Norway runs more than 80 electric ferries ([Ferries](" + article + ")).\n" +
		"- A crossing costs 120 NOK ([prices](" + prices + ")).\n- Some say more ([a claim](" + unreadURL + ")).\n\n" +
		"## Overview\n\nThe fleet is large and cheap to ride; see also " + unreadURL + "/more for nothing.\n\n" +
		"## Sources\n\n- " + unreadURL + "\n- " + article + "\n"
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch {
		case systemHas(r, plannerMark):
			if strings.Contains(r.Last().Content, reviseMark) {
				return fakeopenai.Turn{Text: revised}
			}
			return fakeopenai.Turn{Text: first}
		case systemHas(r, reporterMark):
			return fakeopenai.Turn{Text: report}
		}
		if k, _, _, ok := stepOf(r); ok {
			switch k {
			case 1:
				return fetchTurn(r, article, "FINDING-1: Norway runs more than 80 electric ferries. "+article)
			case 2:
				return fetchTurn(r, prices, "FINDING-2: A crossing costs 120 NOK. "+prices)
			}
			return fakeopenai.Turn{Text: "FINDING-3: the cost table."}
		}
		return fakeopenai.Turn{Text: "lead answer to: " + r.Last().Content}
	})
	run := startTelegram(t, tg, model, t.TempDir(), researchConfig)

	tg.PushMessage(faketelegram.Private(ann, "/research electric ferries in Norway"))
	plan := waitMessage(t, tg, ann.ID, "Reply ok to start")
	run.app.router.WaitIdle(t.Context())
	plan = current(tg, ann.ID, plan)
	for _, want := range []string{"Research plan: " + title, "1. Fleet size", "2. Charging infrastructure", "3. Cost table", "tell me what to change"} {
		if !strings.Contains(plan.PlainText, want) {
			t.Errorf("the plan does not show %q:\n%s", want, plan.PlainText)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 1 || !systemHas(reqs[0], plannerMark) || !strings.Contains(reqs[0].Last().Content, "electric ferries in Norway") {
		t.Fatalf("want one planner request with the topic; got %d requests", len(reqs))
	}

	tg.PushMessage(faketelegram.Private(ann, "/status"))
	st := waitMessage(t, tg, ann.ID, "Research: "+title+" — the plan waits for your ok or changes")
	if !strings.Contains(st.PlainText, "1. Fleet size") || !strings.Contains(st.PlainText, "2. Charging infrastructure") {
		t.Errorf("/status does not list the plan:\n%s", st.PlainText)
	}

	tg.PushMessage(faketelegram.Private(ann, "replace step 2 with a price comparison"))
	rev := waitMessage(t, tg, ann.ID, "Revised research plan: "+title)
	run.app.router.WaitIdle(t.Context())
	rev = current(tg, ann.ID, rev)
	if !strings.Contains(rev.PlainText, "2. Price comparison") || strings.Contains(rev.PlainText, "Charging infrastructure") || !strings.Contains(rev.PlainText, "Reply ok to start") {
		t.Errorf("the revised plan shows:\n%s", rev.PlainText)
	}
	reqs = model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests after the change, want 2", len(reqs))
	}
	if u := reqs[1].Last().Content; !systemHas(reqs[1], plannerMark) || !strings.Contains(u, reviseMark) ||
		!strings.Contains(u, "replace step 2 with a price comparison") || !strings.Contains(u, "Charging infrastructure") {
		t.Errorf("the revision request is not a planner request with the plan and the change:\n%s", u)
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Research: "+title+" — revised plan 1 of 3 waits for your ok or changes")

	ok := tg.PushMessage(faketelegram.Private(ann, "ok"))
	final := run.waitFinal(tg, ann.ID, "Key points")

	// One reply per step, threaded to "ok", ending done.
	steps := []string{"Step 1: Fleet size", "Step 2: Price comparison", "Step 3: Cost table"}
	for _, s := range steps {
		if n := showing(tg, ann.ID, s+" ·"); n != 1 {
			t.Errorf("%d messages show %q, want one reply per step:%s", n, s, dump(tg.Messages(ann.ID)))
		}
		m := waitMessage(t, tg, ann.ID, s+" ·")
		if !strings.HasPrefix(m.PlainText, "✅ "+s+" · done in") {
			t.Errorf("the reply of %q ends as %q", s, m.PlainText)
		}
		if m.ReplyTo != ok.Message.MessageID {
			t.Errorf("the reply of %q answers message %d, want the ok %d", s, m.ReplyTo, ok.Message.MessageID)
		}
		if m.MessageID == final.MessageID {
			t.Errorf("the report replaced the reply of %q", s)
		}
	}
	if showing(tg, ann.ID, "Charging infrastructure ·") != 0 {
		t.Error("the replaced step ran")
	}
	planners := 0
	for _, r := range model.Requests() {
		if systemHas(r, plannerMark) {
			planners++
		}
	}
	if planners != 2 {
		t.Errorf("the planner was asked %d times, want 2 (the plan and its revision; ok starts it without the model)", planners)
	}

	// The report: the model's text with its own sources dropped, the link
	// to an unread page unlinked, and the pages read as references.
	for _, want := range []string{title, "Key points", "Norway runs more than 80 electric ferries", "References", "1. Ferries", "2. Ferry prices"} {
		if !strings.Contains(final.PlainText, want) {
			t.Errorf("the report does not show %q:\n%s", want, final.PlainText)
		}
	}
	if !strings.Contains(final.Text, `href="`+article+`"`) || !strings.Contains(final.Text, `href="`+prices+`"`) {
		t.Errorf("the report does not link the pages read:\n%s", final.Text)
	}
	if strings.Contains(final.PlainText, "Sources") {
		t.Errorf("the model's own sources section was delivered:\n%s", final.PlainText)
	}
	for _, m := range tg.Messages(ann.ID) {
		if strings.Contains(m.Text, "unread.example.com") || strings.Contains(m.PlainText, "unread.example.com") {
			t.Errorf("a message shows the page no step read:\n%s", m.Text)
		}
	}
	saved := lastAnswer(t, run, "telegram:1001")
	refs := saved[strings.Index(saved, "## References"):]
	if want := "## References\n\n1. [Ferries](" + article + ")\n2. [Ferry prices](" + prices + ")\n"; refs != want {
		t.Errorf("the references are\n%q\nwant\n%q", refs, want)
	}

	doc := waitDocument(t, tg, ann.ID, "report.md")
	if string(doc.Data) != saved {
		t.Errorf("report.md differs from the report posted:\n%s\n---\n%s", doc.Data, saved)
	}
	if strings.Contains(string(doc.Data), "unread.example.com") || !strings.Contains(string(doc.Data), "## Key points") {
		t.Errorf("report.md =\n%s", doc.Data)
	}

	// What the model was asked.
	var research, processing, reporter []fakeopenai.Request
	for _, r := range model.Requests() {
		if k, _, _, ok := stepOf(r); ok {
			if k == 3 {
				processing = append(processing, r)
			} else {
				research = append(research, r)
				if !systemHas(r, stepperMark) {
					t.Errorf("research step %d did not run as a research subagent", k)
				}
			}
		}
		if systemHas(r, reporterMark) {
			reporter = append(reporter, r)
		}
	}
	if len(research) != 4 || len(processing) != 1 || len(reporter) != 1 {
		t.Fatalf("%d research step requests (want 4), %d processing (want 1), %d reporter (want 1)", len(research), len(processing), len(reporter))
	}
	if p := firstUser(processing[0]); !strings.Contains(p, "FINDING-1") || !strings.Contains(p, "FINDING-2") {
		t.Errorf("the processing step ran without the findings before it:\n%s", p)
	}
	rq := reporter[0].Last().Content
	for _, want := range []string{"FINDING-1", "FINDING-2", "FINDING-3", article, prices} {
		if !strings.Contains(rq, want) {
			t.Errorf("the reporter was not given %q:\n%s", want, rq)
		}
	}

	tg.PushMessage(faketelegram.Private(ann, "/status"))
	st = waitMessage(t, tg, ann.ID, "Research: "+title+" — done, the report was delivered")
	for _, want := range []string{"✅ 1. Fleet size", "✅ 2. Price comparison", "✅ 3. Cost table (processing)"} {
		if !strings.Contains(st.PlainText, want) {
			t.Errorf("/status after the report does not show %q:\n%s", want, st.PlainText)
		}
	}
	refusedCalls(t, tg)
}

// TestTelegramResearchAutoAndStop: /research auto runs the plan without a
// review; /stop while the steps work cancels them and the research, and
// the next message goes to the lead.
func TestTelegramResearchAutoAndStop(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	block := make(chan struct{}) // never closed: the steps work until stopped
	const title = "Tidal power"
	var mu sync.Mutex
	stepReqs := 0
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch {
		case systemHas(r, plannerMark):
			return fakeopenai.Turn{Text: planJSON(title, planStep{title: "Sites"}, planStep{title: "Output"})}
		case systemHas(r, reporterMark):
			return fakeopenai.Turn{Text: "# unexpected report"}
		}
		if _, _, _, ok := stepOf(r); ok {
			mu.Lock()
			stepReqs++
			mu.Unlock()
			return fakeopenai.Turn{Text: "never finished", Hold: block}
		}
		return fakeopenai.Turn{Text: "lead answer to: " + r.Last().Content}
	})
	run := startTelegram(t, tg, model, t.TempDir())

	q := tg.PushMessage(faketelegram.Private(ann, "/research auto tidal power in Europe"))
	a := waitMessage(t, tg, ann.ID, "⏳ Step 1: Sites · working")
	b := waitMessage(t, tg, ann.ID, "⏳ Step 2: Output · working")
	for _, m := range []*faketelegram.SentMessage{a, b} {
		if m.ReplyTo != q.Message.MessageID {
			t.Errorf("a step's reply answers message %d, want the /research message %d", m.ReplyTo, q.Message.MessageID)
		}
	}
	model.WaitRequests(3) // the planner, then both steps: they are mid-answer
	// The progress message shows the plan with both steps running.
	panel := waitMessage(t, tg, ann.ID, "Research: "+title)
	waitMessageState(t, tg, ann.ID, panel, "⏳ 1. Sites\n⏳ 2. Output")
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	st := waitMessage(t, tg, ann.ID, "Research: "+title+" — running, 0 of 2 steps done")
	// Known bug (research/execute.go): a step's start is not saved, and
	// /status reads the stored research, so running steps show ▫️.
	if !strings.Contains(st.PlainText, "⏳ 1. Sites") || !strings.Contains(st.PlainText, "⏳ 2. Output") {
		t.Errorf("/status does not show the running steps as running:\n%s", st.PlainText)
	}

	tg.PushMessage(faketelegram.Private(ann, "/stop"))
	stopped := run.waitFinal(tg, ann.ID, "Stopped.")
	if stopped.MessageID != panel.MessageID {
		t.Errorf("Stopped. is message %d, want the progress message %d", stopped.MessageID, panel.MessageID)
	}
	for i, m := range []*faketelegram.SentMessage{a, b} {
		name := []string{"Step 1: Sites", "Step 2: Output"}[i]
		waitMessageState(t, tg, ann.ID, m, "⏹ "+name+" · cancelled after")
	}
	model.WaitCancelled(2)
	if n := model.Cancelled(); n != 2 {
		t.Errorf("the model saw %d requests cancelled, want the 2 steps", n)
	}
	if showing(tg, ann.ID, "Reply ok to start") != 0 {
		t.Error("/research auto asked for a review")
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Research: "+title+" — cancelled")

	// The research no longer takes the person's messages.
	tg.PushMessage(faketelegram.Private(ann, "what about wind?"))
	run.waitFinal(tg, ann.ID, "lead answer to: what about wind?")
	last := model.Requests()[len(model.Requests())-1]
	if systemHas(last, plannerMark) || systemHas(last, reporterMark) {
		t.Error("the message after /stop went to the research")
	}
	mu.Lock()
	defer mu.Unlock()
	if stepReqs != 2 {
		t.Errorf("the steps asked the model %d times, want 2", stepReqs)
	}
	for _, r := range model.Requests() {
		if systemHas(r, reporterMark) {
			t.Error("a stopped research wrote a report")
		}
	}
	refusedCalls(t, tg)
}

// TestTelegramResearchInvalidPlanReasked: a planner answer that is not a
// plan is sent back with the complaint; the person sees only the plan.
// /stop then drops the plan waiting for review.
func TestTelegramResearchInvalidPlanReasked(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	const title = "Heat pumps"
	var mu sync.Mutex
	planners := 0
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if systemHas(r, plannerMark) {
			mu.Lock()
			defer mu.Unlock()
			planners++
			if planners == 1 {
				return fakeopenai.Turn{Text: "Sure! First I'd look at efficiency, then at prices."}
			}
			return fakeopenai.Turn{Text: "```json\n" + planJSON(title, planStep{title: "Efficiency"}, planStep{title: "Prices"}) + "\n```"}
		}
		return fakeopenai.Turn{Text: "lead answer to: " + r.Last().Content}
	})
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "/research heat pumps"))
	plan := run.waitFinal(tg, ann.ID, "Reply ok to start")
	if !strings.Contains(plan.PlainText, "Research plan: "+title) || !strings.Contains(plan.PlainText, "1. Efficiency") || !strings.Contains(plan.PlainText, "2. Prices") {
		t.Errorf("the plan shows:\n%s", plan.PlainText)
	}
	for _, m := range tg.Messages(ann.ID) {
		if strings.Contains(m.PlainText, "valid") || strings.Contains(m.PlainText, "couldn't") || strings.Contains(m.PlainText, "Sure!") {
			t.Errorf("the person saw the planner's trouble: %q", m.PlainText)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want the planner twice", len(reqs))
	}
	if got := reqs[1].Roles(); got != "system,user,assistant,user" {
		t.Errorf("the second planner request is %s, want the bad answer and the complaint after the task", got)
	}
	if c := reqs[1].Last().Content; !strings.Contains(c, "not a valid plan") || !strings.Contains(c, "no JSON object") {
		t.Errorf("the complaint = %q", c)
	}

	tg.PushMessage(faketelegram.Private(ann, "/stop"))
	waitMessage(t, tg, ann.ID, "Dropped the research.")
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Research: "+title+" — cancelled")
	tg.PushMessage(faketelegram.Private(ann, "ok"))
	run.waitFinal(tg, ann.ID, "lead answer to: ok")
	if n := len(model.Requests()); n != 3 {
		t.Errorf("%d model requests, want the lead's answer after the two planner ones", n)
	}
	refusedCalls(t, tg)
}

// TestTelegramResearchResumesAfterRestart: deerflow stops while one step
// is done and another works; after the restart /retry runs only the
// unfinished step, and the report cites the pages of both.
func TestTelegramResearchResumesAfterRestart(t *testing.T) {
	tg, model, site := newTelegram(t), fakeopenai.New(t), researchSite(t)
	article, prices := site.URL+"/article", site.URL+"/prices"
	const title = "Ferry economics"
	var mu sync.Mutex
	restarted := false
	stepRuns := map[int]int{} // step → first requests (one per run of the step)
	step2Started := make(chan struct{})
	var once sync.Once
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch {
		case systemHas(r, plannerMark):
			return fakeopenai.Turn{Text: planJSON(title, planStep{title: "Fleet"}, planStep{title: "Prices"})}
		case systemHas(r, reporterMark):
			return fakeopenai.Turn{Text: "# " + title + "\n\n## Key points\n\n- RESUMED-REPORT: 80 ferries, 120 NOK."}
		}
		if k, _, _, ok := stepOf(r); ok {
			mu.Lock()
			defer mu.Unlock()
			if r.Last().Role != "tool" {
				stepRuns[k]++
			}
			if k == 1 {
				return fetchTurn(r, article, "FLEET-FINDINGS: more than 80 electric ferries. "+article)
			}
			if !restarted {
				once.Do(func() { close(step2Started) })
				return fakeopenai.Turn{Hold: make(chan struct{})} // still working at the stop
			}
			return fetchTurn(r, prices, "PRICE-FINDINGS: 120 NOK a crossing. "+prices)
		}
		return fakeopenai.Turn{Text: "lead answer to: " + r.Last().Content}
	})
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir, researchConfig)
	tg.PushMessage(faketelegram.Private(ann, "/research auto the economics of electric ferries"))
	waitMessage(t, tg, ann.ID, "✅ Step 1: Fleet · done in")
	select {
	case <-step2Started:
	case <-time.After(time.Minute): // not a timed assertion: a hang guard
		t.Fatal("step 2 never asked the model")
	}
	run.stop()
	waitMessage(t, tg, ann.ID, "send /retry")

	mu.Lock()
	restarted = true
	mu.Unlock()
	run = startTelegram(t, tg, model, dir, researchConfig)
	if rec := researchOf(t, run, "telegram:1001"); rec.Phase != store.ResearchRunning || len(rec.Steps) != 2 || rec.Steps[0].Status != "completed" || rec.Steps[1].Status == "completed" {
		t.Fatalf("after the stop the research is %s with steps %+v", rec.Phase, rec.Steps)
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Research: "+title+" — interrupted with 1 of 2 steps done; /retry resumes it")
	tg.PushMessage(faketelegram.Private(ann, "/retry"))
	final := run.waitFinal(tg, ann.ID, "RESUMED-REPORT")
	if !strings.Contains(final.PlainText, "1. Ferries") || !strings.Contains(final.PlainText, "2. Ferry prices") {
		t.Errorf("the resumed report's references:\n%s", final.PlainText)
	}
	mu.Lock()
	if stepRuns[1] != 1 || stepRuns[2] != 2 {
		t.Errorf("runs per step = %v, want step 1 once and step 2 again after the restart", stepRuns)
	}
	mu.Unlock()
	var reporter []fakeopenai.Request
	for _, r := range model.Requests() {
		if systemHas(r, reporterMark) {
			reporter = append(reporter, r)
		}
	}
	if len(reporter) != 1 {
		t.Fatalf("%d reporter requests, want 1", len(reporter))
	}
	if c := reporter[0].Last().Content; !strings.Contains(c, "FLEET-FINDINGS") || !strings.Contains(c, "PRICE-FINDINGS") {
		t.Errorf("the reporter was not given both steps' findings:\n%s", c)
	}
	doc := waitDocument(t, tg, ann.ID, "report.md")
	if !strings.Contains(string(doc.Data), "RESUMED-REPORT") || !strings.Contains(string(doc.Data), "1. [Ferries]("+article+")") {
		t.Errorf("report.md =\n%s", doc.Data)
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Research: "+title+" — done, the report was delivered")
}

// TestSlackSlashResearchGetsAThread: "/deerflow research …" (Slack takes
// unregistered slash commands itself) posts a message everyone sees, and
// its thread is the research: the plan is there, an "ok" in the thread
// starts it, and the report and report.md arrive there. Nothing of it is
// ephemeral.
func TestSlackSlashResearchGetsAThread(t *testing.T) {
	site := researchSite(t)
	sl, model := newSlack(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		switch {
		case systemHas(r, plannerMark):
			return fakeopenai.Turn{Text: planJSON("Electric ferries", planStep{title: "Fleet"})}
		case systemHas(r, reporterMark):
			return fakeopenai.Turn{Text: "# Electric ferries\n\n## Key points\n- Norway runs 80 of them ([Ferries](" + site.URL + "/article))."}
		}
		if _, _, _, ok := stepOf(r); ok {
			return fetchTurn(r, site.URL+"/article", "Norway runs more than 80 electric ferries ("+site.URL+"/article).")
		}
		return fakeopenai.Turn{Text: "lead here"}
	})
	run := startSlack(t, sl, model, t.TempDir(), researchConfig)
	sl.AddChannel("C1", "channel")
	sl.SlashCommand("C1", "U1", "/deerflow", "research electric ferries")

	root := waitPosted(t, sl, "C1", "<@U1> /research electric ferries", false)
	if root.Ephemeral || root.ThreadTS != "" {
		t.Fatalf("the research's own message: ephemeral %v, in thread %q", root.Ephemeral, root.ThreadTS)
	}
	plan := waitPosted(t, sl, "C1", "Research plan: Electric ferries", true)
	if plan.ThreadTS != root.TS || plan.Ephemeral {
		t.Fatalf("the plan went to thread %q (ephemeral %v), want the research's thread %q", plan.ThreadTS, plan.Ephemeral, root.TS)
	}
	sl.Message("C1", "channel", "U1", "ok", root.TS)
	report := waitPosted(t, sl, "C1", "Norway runs 80 of them", true)
	if report.ThreadTS != root.TS {
		t.Errorf("the report went to thread %q, want %q", report.ThreadTS, root.TS)
	}
	if md := markdownOf(report); !strings.Contains(md, "References") || !strings.Contains(md, site.URL+"/article") {
		t.Errorf("the report lacks its references:\n%s", md)
	}
	run.app.router.WaitIdle(t.Context())
	var doc *fakeslack.UploadedFile
	sl.WaitFor(func() bool {
		for _, p := range sl.Messages("C1") {
			for i := range p.Files {
				if p.Files[i].Name == "report.md" && p.ThreadTS == root.TS {
					doc = &p.Files[i]
					return true
				}
			}
		}
		return false
	})
	if doc == nil || !strings.Contains(string(doc.Data), "Norway runs 80 of them") {
		t.Fatalf("report.md was not uploaded into the research's thread: %+v", doc)
	}
	for _, p := range sl.Messages("C1") {
		if p.Ephemeral {
			t.Errorf("an ephemeral message: %q", p.Text)
		}
	}
}
