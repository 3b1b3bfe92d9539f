package memory

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

type harness struct {
	t    testing.TB
	fake *fakeopenai.Server
	st   *store.Store
	m    *Manager
	log  *logBuffer
}

// logBuffer collects log lines, for tests that check what was logged.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	fake := fakeopenai.New(t)
	st := testutil.Store(t)
	lb := &logBuffer{}
	opts.Store = st
	opts.Model = llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "mem-model", MaxRetries: -1})
	opts.ModelID = "mem-model"
	opts.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(lb, io.Discard), nil))
	if opts.Debounce == 0 {
		opts.Debounce = time.Hour // tests flush by hand unless they test the debounce
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Flush(context.Background()) })
	return &harness{t: t, fake: fake, st: st, m: m, log: lb}
}

// record stores one exchange of user in chat as a run's answer does.
func (h *harness) record(user, chat, runID, text, answer string) {
	h.t.Helper()
	err := h.st.Update(func(tx *store.Tx) error {
		return h.m.Record(tx, user, chat, "th_"+chat, runID, text, answer)
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) memory(scope string) *store.Memory {
	h.t.Helper()
	var mem *store.Memory
	if err := h.st.View(func(tx *store.Tx) error {
		var err error
		mem, err = tx.Memory(scope)
		return err
	}); err != nil {
		h.t.Fatal(err)
	}
	return mem
}

func (h *harness) pending(scope string) int {
	var n int
	h.st.View(func(tx *store.Tx) error {
		exs, err := tx.Exchanges(scope)
		n = len(exs)
		return err
	})
	return n
}

func facts(mem *store.Memory) []string {
	var out []string
	for _, f := range mem.Facts {
		out = append(out, fmt.Sprintf("%s|%s|%.2f", f.Content, f.Category, f.Confidence))
	}
	return out
}

func TestUpdateExtractsFactsAndSummaries(t *testing.T) {
	h := newHarness(t, Options{})
	h.fake.Script(fakeopenai.Turn{Text: "Here you go:\n```json\n" + `{
		"newFacts": [
			{"content": "Is vegetarian.", "category": "preference", "confidence": 0.95},
			{"content": "Might like jazz.", "category": "preference", "confidence": 0.5},
			{"content": "Works at a bakery.", "category": "job", "confidence": 0.8},
			{"content": "  ", "category": "goal", "confidence": 0.9}
		],
		"factsToRemove": [],
		"user": {
			"workContext": {"summary": "Runs the ovens at a bakery.", "shouldUpdate": true},
			"personalContext": {"summary": "ignored", "shouldUpdate": false},
			"topOfMind": {"summary": "", "shouldUpdate": true}
		},
		"somethingNew": {"ignored": true}
	}` + "\n```"})
	h.record("telegram:1", "telegram:1", "run_1", "<uploaded_files>\n- /mnt/user-data/uploads/a.pdf\n</uploaded_files>\n\nI'm vegetarian and I work at a bakery", "Noted!")
	h.m.Flush(context.Background())

	reqs := h.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	prompt := reqs[0].Last().Content
	if !strings.Contains(prompt, "User: I'm vegetarian and I work at a bakery\nAssistant: Noted!") || strings.Contains(prompt, "uploaded_files") {
		t.Errorf("update prompt = %q", prompt)
	}
	if reqs[0].Model != "mem-model" || !strings.Contains(reqs[0].Messages[0].Content, `"newFacts"`) {
		t.Errorf("system prompt or model wrong: %s", reqs[0].Model)
	}
	mem := h.memory("telegram:1")
	got := strings.Join(facts(mem), "; ")
	if got != "Is vegetarian.|preference|0.95; Works at a bakery.|context|0.80" {
		t.Errorf("facts = %s", got)
	}
	if mem.Work.Text != "Runs the ovens at a bakery." || mem.Personal.Text != "" || mem.TopOfMind.Text != "" {
		t.Errorf("summaries = %+v", mem)
	}
	if mem.Facts[0].Source != "th_telegram:1" || mem.Facts[0].ID != "f1" || mem.Facts[0].Created.IsZero() {
		t.Errorf("fact = %+v", mem.Facts[0])
	}
	if h.pending("telegram:1") != 0 {
		t.Error("the exchange is still waiting")
	}
}

func TestDedupRemovalAndEviction(t *testing.T) {
	h := newHarness(t, Options{MaxFacts: 3})
	h.fake.Script(
		fakeopenai.Turn{Text: `{"newFacts":[{"content":"Likes tea.","category":"preference","confidence":0.8},{"content":"Lives in Oslo.","category":"context","confidence":0.9},{"content":"Speaks Norwegian.","category":"knowledge","confidence":0.9}]}`},
		// A duplicate (other case and punctuation), a replacement, and two
		// more facts than fit.
		fakeopenai.Turn{Text: `{"newFacts":[{"content":"likes TEA","category":"preference","confidence":0.99},{"content":"Lives in Bergen.","category":"context","confidence":0.95},{"content":"Has a cat.","category":"context","confidence":0.85},{"content":"Prefers short answers.","category":"correction","confidence":0.97}],"factsToRemove":["f2"]}`},
	)
	h.record("u:1", "c:1", "run_1", "hi", "hello")
	h.m.Flush(context.Background())
	h.m = mustNew(t, h) // Flush closes a manager; a new one continues
	h.record("u:1", "c:1", "run_2", "I moved to Bergen", "ok")
	h.m.Flush(context.Background())

	got := facts(h.memory("u:1"))
	// Likes tea (0.8) and Has a cat (0.85) are the least confident: evicted.
	want := []string{"Speaks Norwegian.|knowledge|0.90", "Lives in Bergen.|context|0.95", "Prefers short answers.|correction|0.97"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("facts = %q, want %q", got, want)
	}
	if !strings.Contains(h.fake.Requests()[1].Last().Content, "- [f2] (context, 0.90) Lives in Oslo.") {
		t.Errorf("the updater did not see the fact ids: %q", h.fake.Requests()[1].Last().Content)
	}
}

func mustNew(t *testing.T, h *harness) *Manager {
	m, err := New(h.m.opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMalformedJSONChangesNothing(t *testing.T) {
	h := newHarness(t, Options{})
	h.fake.Script(
		fakeopenai.Turn{Text: `{"newFacts":[{"content":"Is a pilot.","category":"context","confidence":0.9}]}`},
		fakeopenai.Turn{Text: `Sure! I noted that they like {cats`},
	)
	h.record("u:1", "c:1", "run_1", "I fly planes", "cool")
	h.m.Flush(context.Background())
	h.m = mustNew(t, h)
	h.record("u:1", "c:1", "run_2", "I like cats", "nice")
	h.m.Flush(context.Background())
	if got := facts(h.memory("u:1")); len(got) != 1 || got[0] != "Is a pilot.|context|0.90" {
		t.Errorf("facts = %q", got)
	}
	if h.pending("u:1") != 0 {
		t.Error("a malformed answer left the exchange queued (it would be retried forever)")
	}
	if !strings.Contains(h.log.String(), "ignoring the model's answer") {
		t.Errorf("nothing logged:\n%s", h.log.String())
	}
}

func TestModelFailureKeepsTheExchanges(t *testing.T) {
	h := newHarness(t, Options{})
	h.fake.Script(fakeopenai.Turn{Status: 500})
	h.record("u:1", "c:1", "run_1", "I fly planes", "cool")
	h.m.Flush(context.Background())
	if h.pending("u:1") != 1 {
		t.Fatal("a failed update lost the exchange")
	}
	// The next start picks it up.
	h.fake.Script(fakeopenai.Turn{Text: `{"newFacts":[{"content":"Is a pilot.","category":"context","confidence":0.9}]}`})
	h.m = mustNew(t, h)
	h.m.opts.Debounce = 10 * time.Millisecond
	if err := h.m.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return len(h.memory("u:1").Facts) == 1 })
}

func TestDebounceCoalesces(t *testing.T) {
	h := newHarness(t, Options{Debounce: 200 * time.Millisecond})
	h.fake.Script(fakeopenai.Turn{Text: `{"newFacts":[]}`})
	for i := range 3 {
		h.record("u:1", "c:1", fmt.Sprintf("run_%d", i), fmt.Sprintf("message %d", i), "ok")
	}
	h.fake.WaitRequests(1)
	testutil.WaitFor(t, func() bool { return h.pending("u:1") == 0 })
	reqs := h.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls for 3 quick exchanges, want 1", len(reqs))
	}
	for i := range 3 {
		if !strings.Contains(reqs[0].Last().Content, fmt.Sprintf("User: message %d", i)) {
			t.Errorf("exchange %d missing from the update", i)
		}
	}
}

func TestFlushOnShutdownRunsWaitingUpdates(t *testing.T) {
	h := newHarness(t, Options{}) // an hour's debounce
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: `{"newFacts":[{"content":"Said: ` + strings.Fields(r.Last().Content[strings.Index(r.Last().Content, "User: ")+6:])[0] + `","category":"context","confidence":0.9}]}`}
	})
	h.record("u:1", "c:1", "run_1", "alpha", "ok")
	h.record("u:2", "c:1", "run_2", "beta", "ok")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.m.Flush(ctx)
	if f := facts(h.memory("u:1")); len(f) != 1 || !strings.HasPrefix(f[0], "Said: alpha") {
		t.Errorf("u:1 facts = %q", f)
	}
	if f := facts(h.memory("u:2")); len(f) != 1 || !strings.HasPrefix(f[0], "Said: beta") {
		t.Errorf("u:2 facts = %q", f)
	}
	// After the flush, nothing more is scheduled.
	h.record("u:1", "c:1", "run_3", "gamma", "ok")
	time.Sleep(20 * time.Millisecond)
	if n := len(h.fake.Requests()); n != 2 {
		t.Errorf("%d model calls after close", n)
	}
}

func TestFlushGivesUpAtItsDeadline(t *testing.T) {
	h := newHarness(t, Options{})
	h.fake.Script(fakeopenai.Turn{Hold: make(chan struct{})})
	h.record("u:1", "c:1", "run_1", "alpha", "ok")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	h.m.Flush(ctx)
	if h.pending("u:1") != 1 {
		t.Error("an unfinished update lost its exchange")
	}
}

func TestBlockOrderBudgetAndScope(t *testing.T) {
	h := newHarness(t, Options{MaxTokens: 120})
	now := time.Now()
	h.st.Update(func(tx *store.Tx) error {
		return tx.PutMemory(&store.Memory{Scope: "telegram:1", Work: store.Summary{Text: "Bakes bread."}, Facts: []store.Fact{
			{ID: "f1", Content: "Likes rye.", Category: "preference", Confidence: 0.8, Created: now},
			{ID: "f2", Content: "Call me Annie, not Ann.", Category: "correction", Confidence: 0.95, Created: now},
			{ID: "f3", Content: "Is vegetarian.", Category: "preference", Confidence: 0.99, Created: now},
			{ID: "f4", Content: strings.Repeat("Has a very long story to tell. ", 20), Category: "context", Confidence: 0.7, Created: now},
		}})
	})
	b := h.m.Block("telegram:1", "telegram:-100:m5")
	for _, want := range []string{"<memory>", "Work: Bakes bread.", "- (correction) Call me Annie, not Ann.\n- Is vegetarian.\n- Likes rye.\n", "</memory>"} {
		if !strings.Contains(b, want) {
			t.Errorf("block lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(b, "long story") || tokens(b) > 120 {
		t.Errorf("the block exceeds its budget (%d tokens):\n%s", tokens(b), b)
	}
	if other := h.m.Block("telegram:2", "telegram:-100:m5"); other != "" {
		t.Errorf("another person in the same chat gets %q", other)
	}
	// Switched off: no block.
	h.m.Command("telegram:1", "telegram:1", false, "off")
	if b := h.m.Block("telegram:1", "telegram:-100:m5"); b != "" {
		t.Errorf("memory off still injects %q", b)
	}
}

func TestChatScope(t *testing.T) {
	h := newHarness(t, Options{Scope: "chat"})
	if s := h.m.ScopeOf("telegram:1", "telegram:-100:t7"); s != "chat:telegram:-100" {
		t.Errorf("scope = %q", s)
	}
	h.fake.Script(fakeopenai.Turn{Text: `{"newFacts":[{"content":"The team ships on Fridays.","category":"context","confidence":0.9}]}`})
	h.record("telegram:1", "telegram:-100:m5", "run_1", "we ship on fridays", "ok")
	h.m.Flush(context.Background())
	if b := h.m.Block("telegram:2", "telegram:-100:m9"); !strings.Contains(b, "The team ships on Fridays.") {
		t.Errorf("a chat memory is not shared in the chat: %q", b)
	}
	if got := h.m.Command("telegram:2", "telegram:-100:m9", true, ""); !strings.Contains(got, "1. The team ships on Fridays.") {
		t.Errorf("/memory in the chat = %q", got)
	}
}

func TestCommands(t *testing.T) {
	h := newHarness(t, Options{})
	cmd := func(group bool, args string) string { return h.m.Command("telegram:1", "telegram:1", group, args) }
	if got := cmd(false, ""); !strings.Contains(got, "I don't remember anything about you yet") {
		t.Errorf("empty = %q", got)
	}
	h.fake.Script(fakeopenai.Turn{Text: `{"newFacts":[{"content":"Is vegetarian.","category":"preference","confidence":0.95},{"content":"Lives in Oslo.","category":"context","confidence":0.9}],"user":{"topOfMind":{"summary":"Planning a trip.","shouldUpdate":true}}}`})
	h.record("telegram:1", "telegram:1", "run_1", "hi", "hello")
	h.m.Flush(context.Background())

	got := cmd(false, "")
	for _, want := range []string{"What I remember about you:", "Top of mind: Planning a trip.", "1. Is vegetarian. (preference)", "2. Lives in Oslo. (context)", "/memory forget N"} {
		if !strings.Contains(got, want) {
			t.Errorf("/memory lacks %q:\n%s", want, got)
		}
	}
	if got := cmd(true, ""); strings.Contains(got, "vegetarian") || !strings.Contains(got, "direct message") {
		t.Errorf("/memory in a group shows the memory: %q", got)
	}
	if got := cmd(false, "forget 3"); !strings.Contains(got, "There is no fact 3") {
		t.Errorf("forget 3 = %q", got)
	}
	if got := cmd(true, "forget 1"); got != "Forgotten: fact 1." {
		t.Errorf("forget in a group = %q", got)
	}
	if got := facts(h.memory("telegram:1")); len(got) != 1 || !strings.HasPrefix(got[0], "Lives in Oslo.") {
		t.Errorf("after forget: %q", got)
	}
	if got := cmd(false, "clear confirm"); !strings.Contains(got, "Send /memory clear first") {
		t.Errorf("unrequested confirm = %q", got)
	}
	if got := cmd(false, "clear"); !strings.Contains(got, "/memory clear confirm") {
		t.Errorf("clear = %q", got)
	}
	if len(h.memory("telegram:1").Facts) != 1 {
		t.Error("clear deleted before the confirmation")
	}
	if got := cmd(false, "clear confirm"); !strings.Contains(got, "forgotten everything") {
		t.Errorf("confirm = %q", got)
	}
	if m := h.memory("telegram:1"); len(m.Facts) != 0 || m.TopOfMind.Text != "" {
		t.Errorf("after clear: %+v", m)
	}
	if got := cmd(false, "off"); !strings.Contains(got, "Memory is off for you") {
		t.Errorf("off = %q", got)
	}
	// While off, nothing is queued or learnt.
	h.m.Block("telegram:1", "telegram:1")
	h.record("telegram:1", "telegram:1", "run_2", "I like jazz", "ok")
	if n := h.pending("telegram:1"); n != 0 {
		t.Errorf("%d exchanges queued while memory is off", n)
	}
	if got := cmd(false, ""); !strings.Contains(got, "Memory is off") {
		t.Errorf("show while off = %q", got)
	}
	if got := cmd(false, "on"); !strings.Contains(got, "on for you again") || h.memory("telegram:1").Off {
		t.Errorf("on = %q", got)
	}
	if got := cmd(false, "sing"); !strings.HasPrefix(got, "Usage: /memory") {
		t.Errorf("unknown = %q", got)
	}
}

func TestStripUploads(t *testing.T) {
	in := "<uploaded_files>\na\n</uploaded_files>\n\nsummarise <uploaded_files>b</uploaded_files>this"
	if got := stripUploads(in); got != "summarise this" {
		t.Errorf("stripUploads = %q", got)
	}
}

// A scheduled update under way when Flush's deadline passes is cut short:
// its model call is cancelled and Flush returns, the exchange kept.
func TestFlushCutsShortAnUpdateUnderWay(t *testing.T) {
	h := newHarness(t, Options{Debounce: time.Millisecond, Timeout: time.Minute})
	hold := make(chan struct{})
	defer close(hold)
	h.fake.Script(fakeopenai.Turn{Hold: hold})
	h.record("u:1", "c:1", "run_1", "alpha", "ok")
	h.fake.WaitRequests(1) // the scheduled update is under way
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	flushed := make(chan struct{})
	go func() {
		h.m.Flush(ctx)
		close(flushed)
	}()
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("Flush waited past its deadline for an update under way")
	}
	h.fake.WaitCancelled(1)
	if h.pending("u:1") != 1 {
		t.Error("the cut-short update lost its exchange")
	}
}
