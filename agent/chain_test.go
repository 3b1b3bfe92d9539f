package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/agent/loopdetect"
	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// fakeAgent is an agent on the fake OpenAI server, with opts applied.
func fakeAgent(t *testing.T, edit func(*Options), ts ...tools.Tool) (*Agent, *store.Store, *fakeopenai.Server) {
	t.Helper()
	fake := fakeopenai.New(t)
	st := testutil.Store(t)
	opts := Options{
		Store:  st,
		Models: []ModelRef{{Name: "default", ID: "fake-model", Model: llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "fake-model", MaxRetries: -1})}},
		Tools:  tools.NewRegistry(ts...),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if edit != nil {
		edit(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, st, fake
}

func TestLoopDetection(t *testing.T) {
	same := fakeopenai.ToolCall{Name: "echo", Arguments: `{"text":"again"}`}
	sameSpaced := fakeopenai.ToolCall{Name: "echo", Arguments: `{ "text" : "again" }`}
	other := func(i int) fakeopenai.ToolCall {
		return fakeopenai.ToolCall{Name: "echo", Arguments: fmt.Sprintf(`{"text":"step %d"}`, i)}
	}
	tests := []struct {
		name     string
		limits   loopdetect.Limits
		turns    []fakeopenai.ToolCall // one call per model response, then the model keeps going
		wantNote int                   // the request (index) that first carries a warning; -1 none
		wantStop string                // in the final answer; "" means the script's own answer
		wantReqs int                   // model requests made
	}{
		{"repeats warn at 3 then stop at 5", loopdetect.Limits{}, []fakeopenai.ToolCall{same, sameSpaced, same, same, same}, 3, "repeating the same step", 5},
		{"different calls are fine", loopdetect.Limits{}, []fakeopenai.ToolCall{other(1), other(2), other(3), other(4), other(5)}, -1, "", 6},
		{"per-tool warn and stop", loopdetect.Limits{ToolWarn: 2, ToolStop: 4, WarnRepeats: 3, StopRepeats: 5}, []fakeopenai.ToolCall{other(1), other(2), other(3), other(4)}, 2, "used echo 4 times", 4},
		{"repeats outside the window do not count", loopdetect.Limits{Window: 2, WarnRepeats: 2, StopRepeats: 3}, []fakeopenai.ToolCall{same, other(1), other(2), same, other(3)}, -1, "", 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, fake := fakeAgent(t, func(o *Options) { o.Middlewares = Chain(tt.limits) }, echoTool())
			var script []fakeopenai.Turn
			for _, c := range tt.turns {
				script = append(script, fakeopenai.Turn{Text: "trying", ToolCalls: []fakeopenai.ToolCall{c}})
			}
			script = append(script, fakeopenai.Turn{Text: "the script's own answer"})
			fake.Script(script...)
			evs, err := collect(a, context.Background(), Input{ThreadID: "th_1", Text: "go"})
			if err != nil {
				t.Fatal(err)
			}
			answer := evs[len(evs)-1]
			want := tt.wantStop
			if want == "" {
				want = "the script's own answer"
			}
			if !is[event.Answer](answer) || !strings.Contains(text(answer), want) {
				t.Fatalf("answer = %v %q, want %q", kind(answer), text(answer), want)
			}
			reqs := fake.Requests()
			if len(reqs) != tt.wantReqs {
				t.Errorf("%d model requests, want %d", len(reqs), tt.wantReqs)
			}
			first := -1
			for i, r := range reqs {
				if strings.Contains(r.Last().Content, "[Note from the system]") {
					first = i
					break
				}
			}
			if first != tt.wantNote {
				t.Errorf("first warning in request %d, want %d", first, tt.wantNote)
			}
			// The warning is hidden: it is never stored.
			for _, r := range reqs[1:] {
				for _, m := range r.Messages[1 : len(r.Messages)-1] {
					if strings.Contains(m.Content, "[Note from the system]") {
						t.Errorf("a warning stayed in the history")
					}
				}
			}
		})
	}
}

func TestSummarizationKeepsTheThreadCoherent(t *testing.T) {
	a, st, fake := fakeAgent(t, func(o *Options) {
		o.Summarize = &Summarize{TriggerTokens: 900, Keep: 4}
	}, echoTool())
	long := strings.Repeat("words about the garden ", 40) // ~230 tokens
	var summaries int
	fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Messages[0].Content, "You compress the earlier part") {
			summaries++
			return fakeopenai.Turn{Text: fmt.Sprintf("SUMMARY %d: the person is planning a garden.", summaries)}
		}
		if strings.HasPrefix(r.Last().Content, "use the tool") {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "echo", Arguments: `{"text":"` + strings.Repeat("x", 400) + `"}`}}}
		}
		return fakeopenai.Turn{Text: "noted: " + long}
	})
	for i := range 8 {
		text := fmt.Sprintf("message %d: %s", i, long)
		if i%3 == 1 {
			text = "use the tool " + text
		}
		evs, err := collect(a, context.Background(), Input{ThreadID: "th_1", Text: text})
		if err != nil || !is[event.Answer](evs[len(evs)-1]) {
			t.Fatalf("turn %d: %v %v", i, err, evs[len(evs)-1])
		}
	}
	if summaries == 0 {
		t.Fatal("the conversation was never summarized")
	}
	th, err := st.Thread("th_1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(th.Summary, "SUMMARY") || th.SummarySeq == 0 {
		t.Errorf("summary not stored: %q at %d", th.Summary, th.SummarySeq)
	}
	// Every request after the first summary starts with it, holds the
	// latest user request, stays under the threshold, and (the strict fake
	// checks) never has a tool result without its call.
	var sawSummary bool
	for _, r := range fake.Requests() {
		if strings.Contains(r.Messages[0].Content, "You compress") {
			continue
		}
		if strings.Contains(r.Messages[1].Content, "<conversation_summary>") {
			sawSummary = true
			n := 0
			for _, m := range r.Messages {
				n += llm.Tokens(m.Content) + 4
			}
			if n > 900+300 { // the estimate leaves out the tool specs; allow a margin
				t.Errorf("a request after summarizing is still %d tokens", n)
			}
		} else if sawSummary {
			t.Error("a request after the first summary lacks it")
		}
	}
	// A new agent (a restart) goes on from the stored summary.
	b, err := New(a.opts)
	if err != nil {
		t.Fatal(err)
	}
	collect(b, context.Background(), Input{ThreadID: "th_1", Text: "and now?"})
	last := fake.Requests()[len(fake.Requests())-1]
	if !strings.Contains(last.Messages[1].Content, th.Summary) && !strings.Contains(last.Messages[1].Content, "SUMMARY") {
		t.Errorf("after a restart the summary is missing: %q", last.Messages[1].Content)
	}
	if last.Last().Content != "and now?" {
		t.Errorf("the latest request is not last: %q", last.Last().Content)
	}
}

func TestEmptyAnswerAfterToolsIsRetriedOnce(t *testing.T) {
	a, _, fake := fakeAgent(t, nil, echoTool())
	call := fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "echo", Arguments: `{"text":"hi"}`}}}
	fake.Script(call, fakeopenai.Turn{}, fakeopenai.Turn{Text: "Here it is."})
	evs, _ := collect(a, context.Background(), Input{ThreadID: "th_1", Text: "go"})
	if got := evs[len(evs)-1]; !is[event.Answer](got) || text(got) != "Here it is." {
		t.Fatalf("answer = %v %q", kind(got), text(got))
	}
	if nudge := fake.Requests()[2].Last().Content; !strings.Contains(nudge, "Write your final answer") {
		t.Errorf("the retry did not ask for the answer: %q", nudge)
	}
	// Twice empty: a clear sentence instead of nothing.
	fake.Script(call, fakeopenai.Turn{}, fakeopenai.Turn{})
	evs, _ = collect(a, context.Background(), Input{ThreadID: "th_2", Text: "go"})
	if got := evs[len(evs)-1]; !is[event.Answer](got) || !strings.Contains(text(got), "gave no final answer") {
		t.Fatalf("answer = %v %q", kind(got), text(got))
	}
	if n := len(fake.Requests()); n != 6 {
		t.Errorf("%d requests, want 6 (one retry each)", n)
	}
}

func TestClarificationEndsTheRun(t *testing.T) {
	a, st, fake := fakeAgent(t, nil, tools.Clarify(), echoTool())
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ask_clarification", Arguments: `{"question":"Which city?","clarification_type":"missing_info","context":"The weather depends on it.","options":["Oslo","Bergen"]}`}}},
		fakeopenai.Turn{Text: "Sunny in Bergen."},
	)
	evs, _ := collect(a, context.Background(), Input{ThreadID: "th_1", Text: "weather?"})
	want := "❓ Which city?\n\nThe weather depends on it.\n\n1. Oslo\n2. Bergen\n\nReply with a number, or in your own words."
	if got := evs[len(evs)-1]; !is[event.Answer](got) || text(got) != want {
		t.Fatalf("answer = %v %q", kind(got), text(got))
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("the model was called %d times; the question must end the run", len(fake.Requests()))
	}
	var asked []event.Clarification
	for _, ev := range evs {
		if ev, ok := ev.(event.Clarification); ok {
			asked = append(asked, ev)
		}
	}
	if diff := cmp.Diff([]event.Clarification{{Question: "Which city?", Options: []string{"Oslo", "Bergen"}}}, asked); diff != "" {
		t.Errorf("clarification events (-want +got):\n%s", diff)
	}
	collect(a, context.Background(), Input{ThreadID: "th_1", Text: "2"})
	if got := fake.Requests()[1].Roles(); got != "system,user,assistant,tool,assistant,user" {
		t.Errorf("the answer's request = %s", got)
	}
	if got := storedRoles(t, st, "th_1"); got != "user,assistant,tool,assistant,user,assistant" {
		t.Errorf("stored = %s", got)
	}
	// A bad call is an error the model can fix; the run goes on.
	fake.Script(
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ask_clarification", Arguments: `{"question":"","clarification_type":"missing_info"}`}}},
		fakeopenai.Turn{Text: "Never mind."},
	)
	evs, _ = collect(a, context.Background(), Input{ThreadID: "th_2", Text: "hm"})
	if got := evs[len(evs)-1]; text(got) != "Never mind." {
		t.Errorf("after a bad clarification call: %q", text(got))
	}
}

func TestTitles(t *testing.T) {
	a, st, fake := fakeAgent(t, nil)
	fake.Script(fakeopenai.Turn{Text: "ok"}, fakeopenai.Turn{Text: "ok"})
	collect(a, context.Background(), Input{ThreadID: "th_1", Text: "<uploaded_files>\nx\n</uploaded_files>\n\nPlan a three-day trip to the Lofoten islands in early June, with hiking"})
	a.bg.Wait()
	th, _ := st.Thread("th_1")
	if th.Title != "Plan a three-day trip to the Lofoten islands in early June…" {
		t.Errorf("fallback title = %q", th.Title)
	}
	collect(a, context.Background(), Input{ThreadID: "th_1", Text: "and a packing list"})
	a.bg.Wait()
	if th2, _ := st.Thread("th_1"); th2.Title != th.Title {
		t.Errorf("the title changed to %q", th2.Title)
	}

	b, st2, fake2 := fakeAgent(t, func(o *Options) { o.TitleModel = &o.Models[0] })
	fake2.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Messages[0].Content, "Give this conversation a title") {
			return fakeopenai.Turn{Text: "\"Lofoten hiking trip.\""}
		}
		return fakeopenai.Turn{Text: "ok"}
	})
	collect(b, context.Background(), Input{ThreadID: "th_1", Text: "Plan a trip"})
	b.bg.Wait()
	if th, _ := st2.Thread("th_1"); th.Title != "Lofoten hiking trip" {
		t.Errorf("model title = %q", th.Title)
	}
}

// StopAll cuts a title's model call short: the thread is titled with its
// first message and StopAll returns once that is saved.
func TestStopAllCutsTitleShort(t *testing.T) {
	a, st, fake := fakeAgent(t, func(o *Options) { o.TitleModel = &o.Models[0] })
	hold := make(chan struct{})
	defer close(hold)
	fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Messages[0].Content, "Give this conversation a title") {
			return fakeopenai.Turn{Text: "A title", Hold: hold}
		}
		return fakeopenai.Turn{Text: "ok"}
	})
	collect(a, context.Background(), Input{ThreadID: "th_1", Text: "Plan a trip"})
	fake.WaitRequests(2) // the answer, then the title under way
	stopped := make(chan struct{})
	go func() {
		a.StopAll(context.Background(), errors.New("shutting down"))
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("StopAll waited for the title's model call")
	}
	if th, _ := st.Thread("th_1"); th.Title != "Plan a trip" {
		t.Errorf("title = %q, want the first message's", th.Title)
	}
}

func TestUsageAndDailyBudget(t *testing.T) {
	a, st, fake := fakeAgent(t, func(o *Options) { o.DailyTokenBudget = 50 })
	fake.Script(fakeopenai.Turn{Text: "ok", Usage: &fakeopenai.Usage{PromptTokens: 40, CompletionTokens: 20, TotalTokens: 60}})
	evs, _ := collect(a, context.Background(), Input{ThreadID: "th_1", ChatKey: "test:1", Text: "hi"})
	if !is[event.Answer](evs[len(evs)-1]) {
		t.Fatal("the first message was refused")
	}
	th, _ := st.Thread("th_1")
	if th.PromptTokens != 40 || th.CompletionTokens != 20 {
		t.Errorf("thread tokens = %d/%d", th.PromptTokens, th.CompletionTokens)
	}
	var today int64
	st.View(func(tx *store.Tx) error { today = tokens.Today(tx, "test:1", a.opts.Now()); return nil })
	if today != 60 {
		t.Errorf("today = %d", today)
	}
	consumed := false
	evs, _ = collect(a, context.Background(), Input{ThreadID: "th_1", ChatKey: "test:1", Text: "more", OnBegin: func(*store.Tx) error { consumed = true; return nil }})
	if got := evs[len(evs)-1]; !is[event.Error](got) || !strings.Contains(text(got), "used its 50 tokens for today") {
		t.Errorf("over budget: %v %q", kind(got), text(got))
	}
	if len(fake.Requests()) != 1 || !consumed {
		t.Errorf("over budget the model was called (%d) or the message was left queued (%v)", len(fake.Requests()), consumed)
	}
	// Another conversation has its own budget.
	fake.Script(fakeopenai.Turn{Text: "ok"})
	if evs, _ := collect(a, context.Background(), Input{ThreadID: "th_2", ChatKey: "test:2", Text: "hi"}); !is[event.Answer](evs[len(evs)-1]) {
		t.Error("another conversation was refused")
	}
}
