package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/agent"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/memory"
	"github.com/deerflow/deerflow/store"
)

// Runs without a user_id get their thread's memory: what one API thread
// told the agent never reaches another, while one user_id shares its
// memory across threads.
func TestAPIMemoryIsThreadScopedWithoutUserID(t *testing.T) {
	var mem *memory.Manager
	h := newHarness(t, config{agent: func(o *agent.Options) {
		var err error
		mem, err = memory.New(memory.Options{Store: o.Store, Model: o.Models[0].Model, ModelID: "fake-model", Debounce: time.Hour, Logger: o.Logger})
		if err != nil {
			t.Fatal(err)
		}
		o.OnAnswer = func(tx *store.Tx, in *agent.Input, answer string) error {
			return mem.Record(tx, in.UserID, in.ChatKey, in.ThreadID, in.RunID, in.Text, answer)
		}
		o.TurnContext = func(_ context.Context, in *agent.Input) string { return mem.Block(in.UserID, in.ChatKey) }
	}})
	// The memory updater remembers each thing said as a fact.
	h.fake.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if !strings.Contains(r.Messages[0].Content, "long-term memory an assistant has") {
			return fakeopenai.Turn{Text: "ok"}
		}
		var facts []map[string]any
		for _, line := range strings.Split(r.Last().Content, "\n") {
			if text, ok := strings.CutPrefix(line, "User: "); ok {
				facts = append(facts, map[string]any{"content": "Said: " + text, "category": "context", "confidence": 0.9})
			}
		}
		out, _ := json.Marshal(map[string]any{"newFacts": facts})
		return fakeopenai.Turn{Text: string(out)}
	})
	say := func(thread, text, user string) {
		t.Helper()
		body := map[string]any{"input": msg(text)}
		if user != "" {
			body["user_id"] = user
		}
		h.waitStatus(thread, h.startRun(thread, body).RunID, "success")
	}
	seen := func(text string) string {
		t.Helper()
		for _, r := range h.fake.Requests() {
			if last := r.Last().Content; r.Messages[0].Role == string(llm.RoleSystem) && strings.HasSuffix(last, text) {
				return last
			}
		}
		t.Fatalf("no model request ends with %q", text)
		return ""
	}

	a, b := h.createThread(), h.createThread()
	c, d := h.createThread(), h.createThread()
	say(a, "I am vegetarian", "")
	say(c, "I live in Lyon", "ann")
	mem.Flush(t.Context())

	say(a, "what do I eat?", "")
	say(b, "suggest a dinner", "")
	say(d, "where do I live?", "ann")
	if got := seen("what do I eat?"); !strings.Contains(got, "Said: I am vegetarian") {
		t.Errorf("the same thread lost its memory:\n%s", got)
	}
	if got := seen("suggest a dinner"); strings.Contains(got, "vegetarian") || strings.Contains(got, "<memory>") {
		t.Errorf("another API thread without user_id saw thread %s's memory:\n%s", a, got)
	}
	if got := seen("where do I live?"); !strings.Contains(got, "Said: I live in Lyon") || strings.Contains(got, "vegetarian") {
		t.Errorf("user_id ann's memory in her second thread:\n%s", got)
	}
}
