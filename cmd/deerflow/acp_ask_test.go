package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// acpAsks is the fake ACP agent asking before it edits: permissions
// left to their default, ask.
func acpAsks(t *testing.T, marker string) func(*config.Config) {
	with := withFakeACP(t, marker)
	return func(c *config.Config) {
		with(c)
		c.ACP.Agents[0].Permissions = ""
	}
}

// coderEdits is a model that writes notes.txt, has the coder edit it and
// reports what the coder said.
func coderEdits(model *fakeopenai.Server) {
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		last := r.Last()
		switch {
		case last.Role == "user":
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: `{"description":"notes","path":"` + acpNotes + `","content":"one\ntwo\n"}`}}}
		case strings.HasPrefix(last.Content, "Wrote"):
			args, _ := json.Marshal(map[string]string{"agent": "coder", "prompt": "edit " + acpNotes})
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "invoke_acp_agent", Arguments: string(args)}}}
		}
		return fakeopenai.Turn{Text: "The coder says: " + last.Content}
	})
}

// notesIn is notes.txt as the workspace of the one thread under dir has it.
func notesIn(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "threads", "*", "user-data", "workspace", "notes.txt"))
	if len(files) != 1 {
		t.Fatalf("notes: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	return string(b)
}

const acpQuestion = "🔐 coder asks for permission: Editing " + acpNotes

// TestTelegramACPPermissionAskedInAGroup: the agent's permission request
// becomes a question with its options as buttons, which only the person
// whose message started the run may answer; their Allow lets the edit
// happen, and the question shows who allowed it.
func TestTelegramACPPermissionAskedInAGroup(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	coderEdits(model)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir, acpAsks(t, "acp-ask-group"), func(c *config.Config) {
		c.Channels.Telegram.AllowedUsers = []string{"@ann", "@bob"}
	})
	group := faketelegram.Chat{ID: -100335, Type: "supergroup", Title: "Code"}
	tg.PushMessage(faketelegram.Group(group, ann, "@deerflow_test_bot have the coder edit my notes"))

	q := waitMessage(t, tg, group.ID, acpQuestion)
	kb := tg.Keyboard(group.ID, q.MessageID)
	if diff := cmp.Diff([]string{"Allow", "Reject"}, buttonTexts(kb)); diff != "" {
		t.Fatalf("the question's buttons (-want +got):\n%s", diff)
	}
	if notice := pressAndWait(t, tg, bob, group.ID, q.MessageID, kb[0][0].CallbackData); notice != "Only the person who asked can answer this." {
		t.Errorf("bob's press was answered with %q", notice)
	}
	if got := notesIn(t, dir); got != "one\ntwo\n" {
		t.Fatalf("the file changed before an answer: %q", got)
	}
	if notice := pressAndWait(t, tg, ann, group.ID, q.MessageID, kb[0][0].CallbackData); notice != "" {
		t.Errorf("ann's press was answered with %q", notice)
	}
	answer := run.waitFinal(tg, group.ID, "The coder says:")
	if !strings.Contains(answer.PlainText, "Edited "+acpNotes) {
		t.Errorf("the answer: %s", answer.PlainText)
	}
	if got := notesIn(t, dir); got != "one\ntwo\nedited by fakeacp\n" {
		t.Errorf("notes.txt is %q", got)
	}
	tg.WaitFor(func() bool {
		m := message(tg, group.ID, q.MessageID)
		return strings.Contains(m.PlainText, "✅ Allow — chosen by ann") && tg.Keyboard(group.ID, q.MessageID) == nil
	})
	if notice := pressAndWait(t, tg, ann, group.ID, q.MessageID, kb[1][0].CallbackData); !strings.Contains(notice, "Already answered: Allow") {
		t.Errorf("a second press was answered with %q", notice)
	}
}

// TestTelegramACPPermissionRejectedByTyping: the asked person may type an
// option's name instead of pressing; a rejection leaves the file alone.
func TestTelegramACPPermissionRejectedByTyping(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	coderEdits(model)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir, acpAsks(t, "acp-ask-typed"))
	tg.PushMessage(faketelegram.Private(ann, "have the coder edit my notes"))
	q := waitMessage(t, tg, ann.ID, acpQuestion)
	tg.PushMessage(faketelegram.Private(ann, "reject"))
	answer := run.waitFinal(tg, ann.ID, "The coder says:")
	if !strings.Contains(answer.PlainText, "I was not allowed to edit") {
		t.Errorf("the answer: %s", answer.PlainText)
	}
	if got := notesIn(t, dir); got != "one\ntwo\n" {
		t.Errorf("notes.txt is %q", got)
	}
	tg.WaitFor(func() bool {
		return strings.Contains(message(tg, ann.ID, q.MessageID).PlainText, "✅ Reject — chosen by ann")
	})
	run.app.router.WaitIdle(t.Context())
	for _, r := range model.Requests() {
		for _, m := range r.Messages {
			if m.Role == "user" && m.Content == "reject" {
				t.Errorf("the typed answer reached the model as a message")
			}
		}
	}
}

// TestTelegramStopWhileACPPermissionWaits: /stop during the question ends
// the run, the agent, and the question.
func TestTelegramStopWhileACPPermissionWaits(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	coderEdits(model)
	marker := "acp-ask-stop-marker"
	run := startTelegram(t, tg, model, t.TempDir(), acpAsks(t, marker))
	tg.PushMessage(faketelegram.Private(ann, "have the coder edit my notes"))
	q := waitMessage(t, tg, ann.ID, acpQuestion)
	tg.PushMessage(faketelegram.Private(ann, "/stop"))
	run.waitFinal(tg, ann.ID, "Stopped.")
	tg.WaitFor(func() bool {
		m := message(tg, ann.ID, q.MessageID)
		return strings.Contains(m.PlainText, "⏹ Stopped before an answer.") && tg.Keyboard(ann.ID, q.MessageID) == nil
	})
	tg.WaitFor(func() bool { return processesWith(marker) == 0 })
	if n := processesWith(marker); n != 0 {
		t.Errorf("%d agent processes survived /stop", n)
	}
}

// TestChatACPPermissionTyped: in `deerflow chat` the question is a
// numbered list and the typed number answers it.
func TestChatACPPermissionTyped(t *testing.T) {
	needBwrap(t)
	model := fakeopenai.New(t)
	coderEdits(model)
	dir := t.TempDir()
	cfg := testConfig(t, model, dir)
	acpAsks(t, "acp-ask-chat")(cfg)
	s := startChat(t, cfg)
	s.say("have the coder edit my notes")
	s.screen.waitFor(t, "1. Allow\n2. Reject\n\nReply with a number.", 1)
	s.say("1")
	s.screen.waitFor(t, "The coder says:", 1)
	s.close()
	if got := notesIn(t, dir); got != "one\ntwo\nedited by fakeacp\n" {
		t.Errorf("notes.txt is %q", got)
	}
	if !strings.Contains(s.screen.String(), "✅ Allow — chosen by local") {
		t.Errorf("the screen:\n%s", s.screen.String())
	}
}

// TestButtonsACPPermission: on Slack and Lark the question's buttons
// answer it the same way.
func TestButtonsACPPermission(t *testing.T) {
	needBwrap(t)
	for _, pc := range buttonPlatforms {
		t.Run(pc.name, func(t *testing.T) {
			model := fakeopenai.New(t)
			coderEdits(model)
			p := pc.make()
			dir := t.TempDir()
			run := p.startWith(t, model, dir, acpAsks(t, "acp-ask-"+pc.name))
			p.say(0, "have the coder edit my notes")
			q := p.wait(t, 0, acpQuestion, 1)
			if diff := cmp.Diff([]string{"Allow", "Reject"}, p.labels(0, q)); diff != "" {
				t.Fatalf("the question's buttons (-want +got):\n%s", diff)
			}
			p.press(t, 0, q, "Allow")
			p.wait(t, 0, "Edited "+acpNotes, 1)
			answered(t, p, 0, q, "Allow")
			run.app.router.WaitIdle(t.Context())
			if got := notesIn(t, dir); got != "one\ntwo\nedited by fakeacp\n" {
				t.Errorf("notes.txt is %q", got)
			}
		})
	}
}
