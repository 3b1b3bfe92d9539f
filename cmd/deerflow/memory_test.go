package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// memoryModel is a fake model for memory tests: the memory updater's
// requests (told apart by their system prompt) get a fact per exchange,
// "Said: <the user's text>"; everything else is answered "ok: <text>".
type memoryModel struct {
	*fakeopenai.Server
	mu      sync.Mutex
	updates []fakeopenai.Request
	lead    []fakeopenai.Request
}

func newMemoryModel(t *testing.T) *memoryModel {
	m := &memoryModel{Server: fakeopenai.New(t)}
	m.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		m.mu.Lock()
		defer m.mu.Unlock()
		if strings.Contains(r.Messages[0].Content, "long-term memory an assistant has") {
			m.updates = append(m.updates, r)
			var facts []map[string]any
			for _, line := range strings.Split(r.Last().Content, "\n") {
				if text, ok := strings.CutPrefix(line, "User: "); ok {
					facts = append(facts, map[string]any{"content": "Said: " + text, "category": "context", "confidence": 0.9})
				}
			}
			out, _ := json.Marshal(map[string]any{"newFacts": facts})
			return fakeopenai.Turn{Text: "```json\n" + string(out) + "\n```"}
		}
		m.lead = append(m.lead, r)
		text := r.Last().Content
		if i := strings.LastIndex(text, "</memory>\n\n"); i >= 0 {
			text = text[i+len("</memory>\n\n"):]
		}
		return fakeopenai.Turn{Text: "ok: " + text}
	})
	return m
}

func (m *memoryModel) lastLead() fakeopenai.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lead[len(m.lead)-1]
}

func (m *memoryModel) updateCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.updates)
}

func withMemory(debounce int) func(*config.Config) {
	return func(c *config.Config) {
		c.Memory = config.Memory{Enabled: true, Scope: "user", DebounceSeconds: debounce}
	}
}

// learnt waits until the updater has run n times and the bot is idle.
func learnt(t *testing.T, run *serveRun, model *memoryModel, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for model.updateCount() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the memory updater ran %d times, want %d", model.updateCount(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	model.WaitIdle()
	// The update is saved right after the model answers.
	for run.app.memory.Busy() {
		time.Sleep(time.Millisecond)
	}
	run.app.router.WaitIdle(t.Context())
}

func TestTelegramMemoryAcrossConversations(t *testing.T) {
	tg, model := newTelegram(t), newMemoryModel(t)
	run := startTelegram(t, tg, model.Server, t.TempDir(), withMemory(1))
	tg.PushMessage(faketelegram.Private(ann, "I am vegetarian"))
	run.waitFinal(tg, ann.ID, "ok: I am vegetarian")
	learnt(t, run, model, 1)

	tg.PushMessage(faketelegram.Private(ann, "/new"))
	waitMessage(t, tg, ann.ID, "Started a new conversation")
	tg.PushMessage(faketelegram.Private(ann, "suggest a dinner"))
	run.waitFinal(tg, ann.ID, "ok: suggest a dinner")
	req := model.lastLead()
	if got := req.Roles(); got != "system,user" {
		t.Fatalf("the new conversation saw %s", got)
	}
	user := req.Last().Content
	if !strings.HasPrefix(user, "<memory>") || !strings.Contains(user, "- Said: I am vegetarian") || !strings.HasSuffix(user, "</memory>\n\nsuggest a dinner") {
		t.Errorf("the model's view of the message = %q", user)
	}
	if strings.Contains(req.Messages[0].Content, "vegetarian") {
		t.Error("memory went into the system prompt, which must stay a stable prefix")
	}

	tg.PushMessage(faketelegram.Private(ann, "/memory"))
	m := waitMessage(t, tg, ann.ID, "What I remember about you")
	if !strings.Contains(m.PlainText, "1. Said: I am vegetarian (context)") {
		t.Errorf("/memory = %q", m.PlainText)
	}
	tg.PushMessage(faketelegram.Private(ann, "/memory forget 1"))
	waitMessage(t, tg, ann.ID, "Forgotten: Said: I am vegetarian")
	learnt(t, run, model, 2) // "suggest a dinner" was learnt meanwhile
	tg.PushMessage(faketelegram.Private(ann, "/memory off"))
	waitMessage(t, tg, ann.ID, "Memory is off for you")
	tg.PushMessage(faketelegram.Private(ann, "what now"))
	run.waitFinal(tg, ann.ID, "ok: what now")
	if strings.Contains(model.lastLead().Last().Content, "<memory>") {
		t.Error("memory is off but was injected")
	}
}

func TestTelegramGroupMemoryIsPerSpeaker(t *testing.T) {
	tg, model := newTelegram(t), newMemoryModel(t)
	run := startTelegram(t, tg, model.Server, t.TempDir(), withMemory(1))
	group := faketelegram.Chat{ID: -100777, Type: "supergroup", Title: "Kitchen"}
	tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot I am allergic to nuts"))
	run.waitFinal(tg, group.ID, "ok: I am allergic to nuts")
	learnt(t, run, model, 1)

	tg.PushMessage(faketelegram.Group(group, bob, "@deerflow_test_bot what should I cook"))
	run.waitFinal(tg, group.ID, "ok: what should I cook")
	if got := model.lastLead().Last().Content; strings.Contains(got, "allergic") || strings.Contains(got, "<memory>") {
		t.Errorf("Bob's prompt holds Ann's memory: %q", got)
	}
	tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot and for me"))
	run.waitFinal(tg, group.ID, "ok: and for me")
	if got := model.lastLead().Last().Content; !strings.Contains(got, "Said: I am allergic to nuts") {
		t.Errorf("Ann's prompt lacks her memory: %q", got)
	}
	// In the group, /memory does not read Ann's memory out to everyone.
	tg.PushMessage(faketelegram.Group(group, ann, "/memory"))
	m := waitMessage(t, tg, group.ID, "I don't show it here")
	if strings.Contains(m.PlainText, "allergic") {
		t.Errorf("/memory in the group shows %q", m.PlainText)
	}
}

func TestMemoryFlushedOnShutdown(t *testing.T) {
	tg, model := newTelegram(t), newMemoryModel(t)
	dir := t.TempDir()
	run := startTelegram(t, tg, model.Server, dir, withMemory(3600))
	tg.PushMessage(faketelegram.Private(ann, "my name is Ann"))
	run.waitFinal(tg, ann.ID, "ok: my name is Ann")
	if n := model.updateCount(); n != 0 {
		t.Fatalf("%d updates before the debounce", n)
	}
	run.stop() // graceful: the waiting update runs now
	if n := model.updateCount(); n != 1 {
		t.Fatalf("%d updates at shutdown, want 1", n)
	}
	run = startTelegram(t, tg, model.Server, dir, withMemory(3600))
	tg.PushMessage(faketelegram.Private(ann, "/memory"))
	if m := waitMessage(t, tg, ann.ID, "What I remember about you"); !strings.Contains(m.PlainText, "Said: my name is Ann") {
		t.Errorf("/memory after restart = %q", m.PlainText)
	}
}

// TestOwnMemoryAgent: an agent with its own memory neither sees nor
// changes the person's shared facts, and the shared agent never sees the
// own agent's; /memory shows the facts of the conversation's agent.
func TestOwnMemoryAgent(t *testing.T) {
	tg, model := newTelegram(t), newMemoryModel(t)
	run := startTelegram(t, tg, model.Server, t.TempDir(), withMemory(1), func(c *config.Config) {
		c.Agents = []config.AgentDef{
			{Name: "coder", Soul: "You are Coder.", Memory: "own"},
			{Name: "helper", Soul: "You are Helper.", Memory: "shared"},
		}
		c.Channels.Telegram.Agent = "helper"
	})
	say := func(text string) string {
		t.Helper()
		tg.PushMessage(faketelegram.Private(ann, text))
		run.waitFinal(tg, ann.ID, "ok: "+text)
		return model.lastLead().Last().Content
	}
	switchTo := func(name, says string) {
		t.Helper()
		tg.PushMessage(faketelegram.Private(ann, "/agent "+name))
		waitMessage(t, tg, ann.ID, says)
	}
	say("I am vegetarian")
	learnt(t, run, model, 1)
	switchTo("coder", "now answered by coder")
	if seen := say("I like Go"); strings.Contains(seen, "vegetarian") {
		t.Errorf("the own-memory agent saw the shared facts: %q", seen)
	}
	learnt(t, run, model, 2)
	switchTo("default", "back with helper")
	seen := say("suggest a dinner")
	if !strings.Contains(seen, "Said: I am vegetarian") || strings.Contains(seen, "I like Go") {
		t.Errorf("the shared agent saw: %q", seen)
	}
	learnt(t, run, model, 3)
	switchTo("coder", "now answered by coder")
	seen = say("next")
	if !strings.Contains(seen, "Said: I like Go") || strings.Contains(seen, "vegetarian") || strings.Contains(seen, "dinner") {
		t.Errorf("the own-memory agent saw: %q", seen)
	}
	tg.PushMessage(faketelegram.Private(ann, "/memory"))
	m := waitMessage(t, tg, ann.ID, "What I remember about you")
	if !strings.Contains(m.PlainText, "Said: I like Go") || strings.Contains(m.PlainText, "vegetarian") {
		t.Errorf("/memory with coder = %q", m.PlainText)
	}
}
