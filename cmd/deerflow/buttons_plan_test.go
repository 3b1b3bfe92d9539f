package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/fakeslack"
	"github.com/deerflow/deerflow/store"
)

// buttonPlatform is a chat platform with buttons, as one person (the
// only one pressing) sees it. A conversation is numbered from 0: a DM
// thread on Slack, a p2p chat on Lark. Message ids are the platform's.
type buttonPlatform interface {
	start(t *testing.T, model *fakeopenai.Server) *serveRun
	// startWith starts with data in dir and the config edited.
	startWith(t *testing.T, model *fakeopenai.Server, dir string, edit ...func(*config.Config)) *serveRun
	say(conv int, text string)
	// wait waits for the bot's n-th message (from 1) in conv showing want.
	wait(t *testing.T, conv int, want string, n int) string
	text(conv int, id string) string
	// count is how many of the bot's messages in conv show want now.
	count(conv int, want string) int
	// notices are the notices a press was answered with that only the
	// person sees (Slack's ephemeral messages; Lark's toasts are checked
	// by press).
	notices() []string
	labels(conv int, id string) []string
	// press presses the button labelled label, as the person, and waits
	// until the platform has its answer (no notice expected).
	press(t *testing.T, conv int, id, label string)
	waitFor(cond func() bool) bool
	chatKey(conv int) string
	who() string // how an answered question names the person
}

type slackButtons struct {
	sl      *fakeslack.Server
	threads map[int]string
}

func (s *slackButtons) start(t *testing.T, model *fakeopenai.Server) *serveRun {
	return s.startWith(t, model, t.TempDir(), researchConfig)
}

func (s *slackButtons) startWith(t *testing.T, model *fakeopenai.Server, dir string, edit ...func(*config.Config)) *serveRun {
	s.sl, s.threads = newSlack(t), map[int]string{}
	return startSlack(t, s.sl, model, dir, edit...)
}

func (s *slackButtons) say(conv int, text string) {
	ts := s.sl.Message("D1", "im", "U1", text, s.threads[conv])
	if s.threads[conv] == "" {
		s.threads[conv] = ts
	}
}

func (s *slackButtons) wait(t *testing.T, conv int, want string, n int) string {
	t.Helper()
	var id string
	s.sl.WaitFor(func() bool {
		seen := 0
		for _, p := range s.sl.Messages("D1") {
			if p.ThreadTS == s.threads[conv] && !p.Ephemeral && strings.Contains(markdownOf(p), want) {
				if seen++; seen == n {
					id = p.TS
					return true
				}
			}
		}
		return false
	})
	if id == "" {
		var b strings.Builder
		for _, p := range s.sl.Messages("D1") {
			fmt.Fprintf(&b, "\n  [%s] %s", p.ThreadTS, markdownOf(p))
		}
		t.Fatalf("thread %d never showed %q (%d):%s", conv, want, n, b.String())
	}
	return id
}

func (s *slackButtons) count(conv int, want string) int {
	n := 0
	for _, p := range s.sl.Messages("D1") {
		if p.ThreadTS == s.threads[conv] && !p.Ephemeral && strings.Contains(markdownOf(p), want) {
			n++
		}
	}
	return n
}

func (s *slackButtons) notices() []string {
	var out []string
	for _, p := range s.sl.Messages("D1") {
		if p.Ephemeral {
			out = append(out, p.Text)
		}
	}
	return out
}

func (s *slackButtons) text(_ int, id string) string { return markdownOf(posted(s.sl, "D1", id)) }

func (s *slackButtons) labels(_ int, id string) []string {
	var out []string
	for _, b := range s.sl.Buttons("D1", id) {
		out = append(out, b.Text)
	}
	return out
}

func (s *slackButtons) press(t *testing.T, _ int, id, label string) {
	t.Helper()
	for _, b := range s.sl.Buttons("D1", id) {
		if b.Text == label {
			env := s.sl.Press("D1", id, "U1", b.ActionID)
			if !s.sl.WaitFor(func() bool { return s.sl.Acked(env) }) {
				t.Fatalf("the press of %q was never acknowledged", label)
			}
			return
		}
	}
	t.Fatalf("message %s shows no button %q", id, label)
}

func (s *slackButtons) waitFor(cond func() bool) bool { return s.sl.WaitFor(cond) }
func (s *slackButtons) chatKey(conv int) string       { return "slack:D1:" + s.threads[conv] }
func (s *slackButtons) who() string                   { return "user-U1" }

type larkButtons struct{ lk *fakelark.Server }

func (l *larkButtons) start(t *testing.T, model *fakeopenai.Server) *serveRun {
	return l.startWith(t, model, t.TempDir(), researchConfig)
}

func (l *larkButtons) startWith(t *testing.T, model *fakeopenai.Server, dir string, edit ...func(*config.Config)) *serveRun {
	l.lk = fakelark.New(t)
	return startLark(t, l.lk, model, dir, edit...)
}

func larkChat(conv int) string { return fmt.Sprintf("oc_p2p_%d", conv) }

func (l *larkButtons) say(conv int, text string) {
	l.lk.Send(fakelark.MessageEvent{ChatID: larkChat(conv), ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text(text)})
}

func (l *larkButtons) wait(t *testing.T, conv int, want string, n int) string {
	t.Helper()
	var id string
	l.lk.WaitFor(func() bool {
		seen := 0
		for _, m := range l.lk.Messages(larkChat(conv)) {
			if m.MsgType == "interactive" && strings.Contains(cardText(m.Content), want) {
				if seen++; seen == n {
					id = m.MessageID
					return true
				}
			}
		}
		return false
	})
	if id == "" {
		var b strings.Builder
		for _, m := range l.lk.Messages(larkChat(conv)) {
			b.WriteString("\n  [" + m.MsgType + "] " + cardText(m.Content))
		}
		t.Fatalf("%s never showed %q (%d):%s", larkChat(conv), want, n, b.String())
	}
	return id
}

func (l *larkButtons) count(conv int, want string) int {
	n := 0
	for _, m := range l.lk.Messages(larkChat(conv)) {
		if m.MsgType == "interactive" && strings.Contains(cardText(m.Content), want) {
			n++
		}
	}
	return n
}

func (l *larkButtons) notices() []string { return nil }

func (l *larkButtons) text(_ int, id string) string { return cardText(l.lk.Message(id).Content) }

func (l *larkButtons) labels(_ int, id string) []string {
	var out []string
	for _, b := range l.lk.Buttons(id) {
		out = append(out, b.Text)
	}
	return out
}

func (l *larkButtons) press(t *testing.T, _ int, id, label string) {
	t.Helper()
	for _, b := range l.lk.Buttons(id) {
		if b.Text == label {
			if toast := pressCard(t, l.lk, id, "ou_ann", b); toast != "" {
				t.Errorf("the press of %q was answered with %q", label, toast)
			}
			return
		}
	}
	t.Fatalf("card %s shows no button %q", id, label)
}

func (l *larkButtons) waitFor(cond func() bool) bool { return l.lk.WaitFor(cond) }
func (l *larkButtons) chatKey(conv int) string       { return "lark:" + larkChat(conv) }
func (l *larkButtons) who() string                   { return "<at id=ou_ann></at>" }

// buttonPlatforms are the platforms under test, made fresh per subtest.
var buttonPlatforms = []struct {
	name string
	make func() buttonPlatform
}{
	{"slack", func() buttonPlatform { return &slackButtons{} }},
	{"lark", func() buttonPlatform { return &larkButtons{} }},
}

// researchCalls names the model's requests: the planner, step k/n with
// its title, the reporter, or the last user message of anything else.
func researchCalls(reqs []fakeopenai.Request) []string {
	var out []string
	for _, r := range reqs {
		k, n, title, isStep := stepOf(r)
		switch {
		case systemHas(r, plannerMark):
			out = append(out, "planner")
		case systemHas(r, reporterMark):
			out = append(out, "reporter")
		case isStep:
			out = append(out, fmt.Sprintf("step %d/%d: %s", k, n, title))
		default:
			out = append(out, "other: "+r.Last().Content)
		}
	}
	return out
}

// answered waits until message id shows the choice of label by the
// person, and no buttons.
func answered(t *testing.T, p buttonPlatform, conv int, id, label string) {
	t.Helper()
	want := "✅ " + label + " — chosen by " + p.who()
	if !p.waitFor(func() bool { return strings.Contains(p.text(conv, id), want) && p.labels(conv, id) == nil }) {
		t.Fatalf("message %s never showed %q without buttons; it shows %q with %q", id, want, p.text(conv, id), p.labels(conv, id))
	}
}

func TestButtonsResearchPlanStartAndCancel(t *testing.T) {
	for _, pc := range buttonPlatforms {
		t.Run(pc.name, func(t *testing.T) { researchPlanButtons(t, pc.make()) })
	}
}

func researchPlanButtons(t *testing.T, p buttonPlatform) {
	model := fakeopenai.New(t)
	researchModel(model)
	run := p.start(t, model)

	p.say(0, "/research ferries")
	plan := p.wait(t, 0, planAsk, 1)
	run.app.router.WaitIdle(t.Context())
	if diff := cmp.Diff([]string{"▶ Start the research", "✖ Cancel"}, p.labels(0, plan)); diff != "" {
		t.Fatalf("plan buttons (-want +got):\n%s", diff)
	}
	if txt := p.text(0, plan); !strings.Contains(txt, "1. **Fleet size**") {
		t.Errorf("the plan does not list its step:\n%s", txt)
	}
	if diff := cmp.Diff([]string{"planner"}, researchCalls(model.Requests())); diff != "" {
		t.Fatalf("model requests before the press (-want +got):\n%s", diff)
	}

	p.press(t, 0, plan, "▶ Start the research")
	p.wait(t, 0, "Key points", 1)
	answered(t, p, 0, plan, "▶ Start the research")
	run.app.router.WaitIdle(t.Context())
	if txt := p.text(0, plan); !strings.Contains(txt, "1. **Fleet size**") {
		t.Errorf("the answered plan lost its steps:\n%s", txt)
	}
	want := []string{"planner", "step 1/1: Fleet size", "reporter"}
	if diff := cmp.Diff(want, researchCalls(model.Requests())); diff != "" {
		t.Errorf("model requests after Start (-want +got):\n%s", diff)
	}
	if !p.waitFor(func() bool { return researchOf(t, run, p.chatKey(0)).Phase == store.ResearchDone }) {
		t.Errorf("the started research is %v, want done", researchOf(t, run, p.chatKey(0)).Phase)
	}

	// A second conversation: its plan cancelled with the button.
	p.say(1, "/research ferries again")
	second := p.wait(t, 1, planAsk, 1)
	run.app.router.WaitIdle(t.Context())
	p.press(t, 1, second, "✖ Cancel")
	p.wait(t, 1, "Dropped the research.", 1)
	answered(t, p, 1, second, "✖ Cancel")
	if !p.waitFor(func() bool { return researchOf(t, run, p.chatKey(1)).Phase == store.ResearchCancelled }) {
		t.Errorf("the research is %v, want cancelled", researchOf(t, run, p.chatKey(1)).Phase)
	}
	run.app.router.WaitIdle(t.Context())
	if diff := cmp.Diff(append(want, "planner"), researchCalls(model.Requests())); diff != "" {
		t.Errorf("model requests after Cancel (-want +got):\n%s", diff)
	}
	if n0, n1 := p.count(0, "Key points"), p.count(1, "Key points"); n0 != 1 || n1 != 0 {
		t.Errorf("the report shows %d times in the started conversation and %d in the cancelled one", n0, n1)
	}
	if got := p.notices(); got != nil {
		t.Errorf("the presses were answered with notices %q", got)
	}
}

func TestButtonsNewDuringARun(t *testing.T) {
	for _, pc := range buttonPlatforms {
		for _, confirm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/confirm=%v", pc.name, confirm), func(t *testing.T) { newDuringARun(t, pc.make(), confirm) })
		}
	}
}

// userTurns lists a request's messages past the system prompt.
func userTurns(r fakeopenai.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "system" {
			out = append(out, m.Role+": "+m.Content)
		}
	}
	return out
}

func newDuringARun(t *testing.T, p buttonPlatform, confirm bool) {
	model := fakeopenai.New(t)
	hold := make(chan struct{})
	model.Script(fakeopenai.Turn{Text: "long answer", Hold: hold})
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "reply to " + r.Last().Content}
	})
	run := p.start(t, model)

	p.say(0, "think hard")
	model.WaitRequests(1)
	p.say(0, "/new")
	ask := p.wait(t, 0, "Start a new conversation anyway?", 1)
	if diff := cmp.Diff([]string{"Start a new conversation", "Keep this one"}, p.labels(0, ask)); diff != "" {
		t.Fatalf("/new buttons (-want +got):\n%s", diff)
	}
	before, _ := run.app.store.ChatThread(p.chatKey(0))
	label := map[bool]string{true: "Start a new conversation", false: "Keep this one"}[confirm]
	p.press(t, 0, ask, label)
	if confirm {
		p.wait(t, 0, "Started a new conversation.", 1)
	}
	answered(t, p, 0, ask, label)
	close(hold)
	p.wait(t, 0, "long answer", 1)
	run.app.router.WaitIdle(t.Context())
	if after, _ := run.app.store.ChatThread(p.chatKey(0)); (after != before) != confirm {
		t.Errorf("confirm=%v: the thread went from %q to %q", confirm, before, after)
	}

	p.say(0, "and now?")
	p.wait(t, 0, "reply to and now?", 1)
	run.app.router.WaitIdle(t.Context())
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	want := []string{"user: and now?"}
	if !confirm {
		want = []string{"user: think hard", "assistant: long answer", "user: and now?"}
	}
	if diff := cmp.Diff(want, userTurns(reqs[1])); diff != "" {
		t.Errorf("the next message's history (-want +got):\n%s", diff)
	}
	if n := p.count(0, "Started a new conversation."); n != map[bool]int{true: 1, false: 0}[confirm] {
		t.Errorf("confirm=%v: %d messages say a new conversation started", confirm, n)
	}
	if got := p.notices(); got != nil {
		t.Errorf("the press was answered with notices %q", got)
	}
}

// planAsk is how a plan waiting for review ends (in Markdown).
const planAsk = "to start, or tell me what to change"
