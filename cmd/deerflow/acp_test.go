package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/internal/testutil"
)

const acpNotes = "/mnt/user-data/workspace/notes.txt"

// withFakeACP configures the fake ACP agent as "coder", its command
// line carrying marker.
func withFakeACP(t *testing.T, marker string) func(*config.Config) {
	bin := testutil.GoBuild(t, "github.com/deerflow/deerflow/internal/fakeacp")
	return func(c *config.Config) {
		c.ACP.Agents = []config.ACPAgent{{Name: "coder", Description: "a fake coder", Command: bin, Args: []string{marker},
			Env: map[string]string{"FAKEACP_GREETING": "hi-there"}, Permissions: "allow"}}
	}
}

// TestTelegramACPAgentEditsWorkspace: the lead writes a file, hands it to
// the ACP agent, which edits it from inside the sandbox while its steps
// show as a threaded reply; the agent's answer reaches the model.
func TestTelegramACPAgentEditsWorkspace(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	coderEdits(model)
	dir := t.TempDir()
	run := startTelegram(t, tg, model, dir, withFakeACP(t, "acp-e2e-edit"))
	q := tg.PushMessage(faketelegram.Private(ann, "please have the coder edit my notes"))

	reply := waitMessage(t, tg, ann.ID, "coder: edit "+acpNotes)
	answer := run.waitFinal(tg, ann.ID, "The coder says:")
	for _, want := range []string{"Status: completed", "Edited " + acpNotes + " (it had 2 lines)", "pwd=/mnt/user-data/workspace", "greeting=hi-there"} {
		if !strings.Contains(answer.PlainText, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer.PlainText)
		}
	}
	var final *faketelegram.SentMessage
	for _, m := range tg.Messages(ann.ID) {
		if m.MessageID == reply.MessageID {
			final = m
		}
	}
	if !strings.HasPrefix(final.PlainText, "✅ coder: edit") || final.ReplyTo != q.Message.MessageID || final.MessageID == answer.MessageID {
		t.Errorf("the agent's reply ends as %q (replying to %d)", final.PlainText, final.ReplyTo)
	}
	edited, _ := filepath.Glob(filepath.Join(dir, "threads", "*", "user-data", "workspace", "notes.txt"))
	if len(edited) != 1 {
		t.Fatalf("notes: %v", edited)
	}
	if b, _ := os.ReadFile(edited[0]); string(b) != "one\ntwo\nedited by fakeacp\n" {
		t.Errorf("notes.txt is %q", b)
	}
	if !slices.Contains(model.Requests()[0].ToolNames(), "invoke_acp_agent") {
		t.Errorf("offered %v", model.Requests()[0].ToolNames())
	}
}

// TestTelegramStopEndsACPAgent: /stop while the agent hangs cancels the
// session and kills the agent's process.
func TestTelegramStopEndsACPAgent(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if r.Last().Role == "user" {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "invoke_acp_agent", Arguments: `{"agent":"coder","prompt":"hang on"}`}}}
		}
		return fakeopenai.Turn{Text: "unexpected: " + r.Last().Content}
	})
	marker := "acp-e2e-hang-marker"
	run := startTelegram(t, tg, model, t.TempDir(), withFakeACP(t, marker))
	tg.PushMessage(faketelegram.Private(ann, "wait for the coder"))
	waitMessage(t, tg, ann.ID, "› Thinking very hard")
	if processesWith(marker) == 0 {
		t.Fatal("the agent is not running")
	}
	start := time.Now()
	tg.PushMessage(faketelegram.Private(ann, "/stop"))
	for processesWith(marker) > 0 {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the agent survived /stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("/stop to agent gone: %v", time.Since(start))
	run.waitFinal(tg, ann.ID, "Stopped.")
	waitMessage(t, tg, ann.ID, "⏹ coder: hang on · cancelled after")
}
