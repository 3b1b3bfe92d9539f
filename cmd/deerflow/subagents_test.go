package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakelark"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// fruits are the three tasks the lead delegates in these tests.
var fruits = []string{"apples", "pears", "plums"}

func fruitTask(fruit string) string { return "Count the " + fruit }

// delegate scripts the model: the lead delegates one general-purpose task
// per fruit; each subagent says what it does, lists a directory, then (once
// release is closed) answers; the lead then sums up.
func delegate(model *fakeopenai.Server, release chan struct{}) {
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if slices.Contains(r.ToolNames(), "task") { // the lead
			if r.Last().Role == "tool" {
				return fakeopenai.Turn{Text: "Summary of all three counts."}
			}
			var calls []fakeopenai.ToolCall
			for _, f := range fruits {
				args, _ := json.Marshal(map[string]string{"description": fruitTask(f), "prompt": "count the " + f, "subagent_type": "general-purpose"})
				calls = append(calls, fakeopenai.ToolCall{Name: "task", Arguments: string(args)})
			}
			return fakeopenai.Turn{ToolCalls: calls}
		}
		prompt := r.Messages[1].Content
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Text: "There are 3 " + strings.TrimPrefix(prompt, "count the ") + ".", Hold: release}
		}
		return fakeopenai.Turn{Text: "Checking the files.", ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{"path":"/mnt/user-data"}`}}}
	})
}

func TestTelegramSubagentProgressReplies(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	release := make(chan struct{})
	delegate(model, release)
	run := startTelegram(t, tg, model, t.TempDir())
	q := tg.PushMessage(faketelegram.Private(ann, "count all the fruit"))

	// Each subagent has its own reply to the question, showing its steps.
	replies := map[string]*faketelegram.SentMessage{}
	for _, f := range fruits {
		replies[f] = waitMessage(t, tg, ann.ID, "⏳ "+fruitTask(f)+" · working")
		waitMessage(t, tg, ann.ID, "› ls: /mnt/user-data") // edited in as it happens
	}
	tg.WaitFor(func() bool {
		n := 0
		for _, m := range tg.Messages(ann.ID) {
			if strings.Contains(m.PlainText, "› ls: /mnt/user-data") && strings.HasPrefix(m.PlainText, "⏳ Count the") {
				n++
			}
		}
		return n == 3
	})
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	st := waitMessage(t, tg, ann.ID, "Subagents: 3")
	for _, f := range fruits {
		if !strings.Contains(st.PlainText, "• "+fruitTask(f)+" (general-purpose) — running for") {
			t.Errorf("/status does not list %s:\n%s", f, st.PlainText)
		}
	}
	close(release)
	answer := run.waitFinal(tg, ann.ID, "Summary of all three counts.")

	for _, f := range fruits {
		var m *faketelegram.SentMessage
		for _, cur := range tg.Messages(ann.ID) {
			if cur.MessageID == replies[f].MessageID {
				m = cur
			}
		}
		if !strings.HasPrefix(m.PlainText, "✅ "+fruitTask(f)+" · done in") || !strings.Contains(m.PlainText, "There are 3 "+f+".") {
			t.Errorf("%s's reply ends as %q", f, m.PlainText)
		}
		if m.ReplyTo != q.Message.MessageID {
			t.Errorf("%s's reply answers message %d, want the question %d", f, m.ReplyTo, q.Message.MessageID)
		}
		if m.Edits < 1 {
			t.Errorf("%s's reply was never edited", f)
		}
		if m.MessageID == answer.MessageID {
			t.Errorf("the answer replaced a subagent's reply")
		}
	}
	// The answer comes after every subagent's final state.
	calls := tg.Calls()
	answerAt, lastTaskEdit := -1, -1
	for i, c := range calls {
		if strings.Contains(c.Params["text"], "Summary of all three") && answerAt < 0 {
			answerAt = i
		}
		if strings.Contains(c.Params["text"], "✅ Count the") {
			lastTaskEdit = i
		}
	}
	if answerAt < lastTaskEdit {
		t.Errorf("the answer (call %d) came before a subagent's final state (call %d)", answerAt, lastTaskEdit)
	}
	for _, c := range calls {
		if c.Status != 200 && c.Method != "getUpdates" {
			t.Errorf("Telegram refused %s: %s", c.Method, c.Error)
		}
	}
}

func TestSlackSubagentProgressReplies(t *testing.T) {
	sl, model := newSlack(t), fakeopenai.New(t)
	release := make(chan struct{})
	delegate(model, release)
	run := startSlack(t, sl, model, t.TempDir())
	sl.AddChannel("C1", "channel")
	ts := sl.Mention("C1", "U1", "<@U0BOT> count all the fruit", "")
	for _, f := range fruits {
		waitPosted(t, sl, "C1", "⏳ "+fruitTask(f)+" · working", false)
	}
	sl.WaitFor(func() bool {
		n := 0
		for _, p := range sl.Messages("C1") {
			if strings.HasPrefix(p.Text, "⏳ Count the") && strings.Contains(p.Text, "› ls: /mnt/user-data") {
				n++
			}
		}
		return n == 3
	})
	close(release)
	waitPosted(t, sl, "C1", "Summary of all three counts.", true)
	run.app.router.WaitIdle(t.Context())
	for _, f := range fruits {
		p := waitPosted(t, sl, "C1", "✅ "+fruitTask(f)+" · done in", true)
		if p.ThreadTS != ts {
			t.Errorf("%s's reply is in thread %q, want the question's %q", f, p.ThreadTS, ts)
		}
		if p.Updates < 1 {
			t.Errorf("%s's reply was never updated", f)
		}
		if !strings.Contains(markdownOf(p), "There are 3 "+f+".") {
			t.Errorf("%s's reply = %q", f, markdownOf(p))
		}
	}
	for _, c := range sl.Calls() {
		if c.Error != "" && c.Error != "already_reacted" { // a mention arrives twice
			t.Errorf("Slack refused %s: %s", c.Method, c.Error)
		}
	}
}

func TestLarkSubagentProgressReplies(t *testing.T) {
	lk, model := fakelark.New(t), fakeopenai.New(t)
	release := make(chan struct{})
	delegate(model, release)
	run := startLark(t, lk, model, t.TempDir())
	ev := lk.Send(fakelark.MessageEvent{ChatID: "oc_p2p", ChatType: "p2p", SenderOpenID: "ou_ann", MessageType: "text", Content: fakelark.Text("count all the fruit")})
	for _, f := range fruits {
		waitCard(t, lk, "oc_p2p", "⏳ "+fruitTask(f)+" · working")
	}
	close(release)
	waitCard(t, lk, "oc_p2p", "Summary of all three counts.")
	run.app.router.WaitIdle(t.Context())
	question := lk.EventMessageID(ev)
	for _, f := range fruits {
		m := waitCard(t, lk, "oc_p2p", "✅ "+fruitTask(f)+" · done in")
		if m.ReplyTo != question {
			t.Errorf("%s's card replies to %q, want the question %q", f, m.ReplyTo, question)
		}
		if m.Patches < 1 {
			t.Errorf("%s's card was never patched", f)
		}
		if !strings.Contains(cardText(m.Content), "There are 3 "+f+".") {
			t.Errorf("%s's card = %q", f, cardText(m.Content))
		}
	}
	for _, c := range lk.Calls() {
		if c.Code != 0 {
			t.Errorf("Lark refused %s %s: code %d", c.Method, c.Path, c.Code)
		}
	}
}

func TestConsolePrintsSubagentProgress(t *testing.T) {
	model := fakeopenai.New(t)
	release := make(chan struct{})
	close(release)
	delegate(model, release)
	s := startChat(t, testConfig(t, model, t.TempDir()))
	s.say("count all the fruit")
	s.screen.waitFor(t, "Summary of all three counts.", 1)
	out := s.screen.String()
	for _, f := range fruits {
		for _, want := range []string{
			"[" + fruitTask(f) + "] subagent started (general-purpose)",
			"[" + fruitTask(f) + "] › ls: /mnt/user-data",
			"[" + fruitTask(f) + "] ✅ done in",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the console does not show %q:\n%s", want, out)
			}
		}
	}
	if strings.Index(out, "Summary of all three") < strings.LastIndex(out, "✅ done in") {
		t.Errorf("the answer came before the subagents finished:\n%s", out)
	}
}

// TestStopCancelsSubagentsAndTheirCommands runs three bash subagents, each
// with a long command in the sandbox, and stops them with /stop.
func TestStopCancelsSubagentsAndTheirCommands(t *testing.T) {
	needBwrap(t)
	tg, model := newTelegram(t), fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if slices.Contains(r.ToolNames(), "task") {
			var calls []fakeopenai.ToolCall
			for i := range 3 {
				args, _ := json.Marshal(map[string]string{"description": fmt.Sprintf("Wait round %d", i), "prompt": "wait", "subagent_type": "bash"})
				calls = append(calls, fakeopenai.ToolCall{Name: "task", Arguments: string(args)})
			}
			return fakeopenai.Turn{ToolCalls: calls}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: `{"description":"wait","command":"sleep 876543"}`}}}
	})
	run := startTelegram(t, tg, model, t.TempDir())
	tg.PushMessage(faketelegram.Private(ann, "wait three times"))
	deadline := time.Now().Add(20 * time.Second)
	for processesWith("sleep 876543") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d commands started, want 3", processesWith("sleep 876543"))
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	tg.PushMessage(faketelegram.Private(ann, "/stop"))
	for processesWith("sleep 876543") > 0 {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the subagents' commands survived /stop")
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("/stop to all three commands gone: %v", time.Since(start))
	run.waitFinal(tg, ann.ID, "Stopped.")
	for i := range 3 {
		waitMessage(t, tg, ann.ID, fmt.Sprintf("⏹ Wait round %d · cancelled after", i))
	}
}

// TestRestartReportsInterruptedSubagents kills deerflow while two
// subagents work, starts it again and expects the conversation to learn
// which tasks were cut off.
func TestRestartReportsInterruptedSubagents(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var mu sync.Mutex
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(r.ToolNames(), "task") {
			var calls []fakeopenai.ToolCall
			for _, d := range []string{"Read the report", "Check the numbers"} {
				args, _ := json.Marshal(map[string]string{"description": d, "prompt": d, "subagent_type": "general-purpose"})
				calls = append(calls, fakeopenai.ToolCall{Name: "task", Arguments: string(args)})
			}
			return fakeopenai.Turn{ToolCalls: calls}
		}
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Hold: make(chan struct{})} // still working when killed
		}
		return fakeopenai.Turn{Text: "Starting.", ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{"path":"/mnt/user-data"}`}}}
	})
	dir := t.TempDir()
	cfgPath := telegramConfig(t, dir, model.URL, tg.Token, tg.URL)
	serve := func() *exec.Cmd { return startBinaryServe(t, dir, cfgPath) }
	cmd := serve()
	tg.PushMessage(faketelegram.Private(ann, "review the report"))
	a := waitMessage(t, tg, ann.ID, "⏳ Read the report")
	b := waitMessage(t, tg, ann.ID, "⏳ Check the numbers")
	model.WaitRequests(5) // the lead, then both subagents twice: they are mid-task
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()

	serve()
	notice := waitMessage(t, tg, ann.ID, "I was restarted before I could finish this reply")
	if !strings.Contains(notice.PlainText, "send /retry") {
		t.Errorf("the notice does not point to /retry: %+v", notice)
	}
	for _, d := range []string{"Read the report", "Check the numbers"} {
		if !strings.Contains(notice.PlainText, d) {
			t.Errorf("the notice does not name %q: %q", d, notice.PlainText)
		}
	}
	for _, m := range []*faketelegram.SentMessage{a, b} {
		tg.WaitFor(func() bool {
			for _, cur := range tg.Messages(ann.ID) {
				if cur.MessageID == m.MessageID && strings.Contains(cur.PlainText, "· interrupted by a restart") {
					return true
				}
			}
			return false
		})
	}
	tg.WaitFor(func() bool {
		for _, cur := range tg.Messages(ann.ID) {
			if cur.MessageID == a.MessageID {
				return strings.HasPrefix(cur.PlainText, "⚠️ Read the report · interrupted by a restart")
			}
		}
		return false
	})
}

// TestSubagentTypesFromConfig checks a custom type reaches the lead's task
// tool and runs with its own model and tools.
func TestSubagentTypesFromConfig(t *testing.T) {
	model := fakeopenai.New(t)
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if slices.Contains(r.ToolNames(), "task") {
			if r.Last().Role == "tool" {
				return fakeopenai.Turn{Text: "lead done: " + r.Last().Content}
			}
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "task", Arguments: `{"description":"Read notes","prompt":"read","subagent_type":"reader"}`}}}
		}
		return fakeopenai.Turn{Text: "reader on " + r.Model + " with " + strings.Join(r.ToolNames(), ",")}
	})
	cfg := testConfig(t, model, t.TempDir())
	cfg.Subagents.Types = []config.SubagentType{{Name: "reader", Description: "reads files", Model: "big", Tools: []string{"ls", "read_file", "bash"}, DisallowedTools: []string{"bash"}}}
	s := startChat(t, cfg)
	s.say("read my notes")
	s.screen.waitFor(t, "reader on fake-big with", 1)
	s.app.router.WaitIdle(t.Context())
	if out := s.screen.String(); !strings.Contains(out, "reader on fake-big with ls,read_file") {
		t.Errorf("the custom subagent did not run as configured:\n%s", out)
	}
	spec := model.Requests()[0]
	for _, tool := range spec.Tools {
		if tool.Name == "task" && !strings.Contains(tool.Description, "- reader: reads files") {
			t.Errorf("task tool description = %q", tool.Description)
		}
	}
	if !strings.Contains(spec.Messages[0].Content, "<subagents>") {
		t.Error("the lead's prompt has no subagents section")
	}
}
