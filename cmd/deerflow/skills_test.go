package main

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

func TestTelegramSkills(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
	var mu sync.Mutex
	var reqs []fakeopenai.Request
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		reqs = append(reqs, r)
		mu.Unlock()
		last := r.Last()
		switch {
		case last.Role == "tool":
			if strings.Contains(last.Content, "name: data-analysis") {
				return fakeopenai.Turn{Text: "READ FILE SAID: " + strconv.Itoa(len(last.Content)) + " bytes"}
			}
			return fakeopenai.Turn{Text: "GREP SAID: " + strconv.Itoa(len(last.Content)) + " bytes"}
		case strings.HasSuffix(last.Content, "read the skill"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "read_file", Arguments: `{"path":"/mnt/skills/public/data-analysis/SKILL.md"}`}}}
		case strings.HasSuffix(last.Content, "sum the numbers"):
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "grep", Arguments: `{"pattern":"x"}`}}}
		}
		return fakeopenai.Turn{Text: "plain answer to " + last.Content}
	})
	run := startTelegram(t, tg, model, t.TempDir())
	lastReq := func() fakeopenai.Request {
		mu.Lock()
		defer mu.Unlock()
		return reqs[len(reqs)-1]
	}

	tg.PushMessage(faketelegram.Private(ann, "/skills"))
	list := waitMessage(t, tg, ann.ID, "Skills:")
	for _, s := range []string{"data-analysis", "deep-research", "report-writing", "skill-creator"} {
		if !strings.Contains(list.PlainText, "✅ "+s+" (public)") {
			t.Errorf("/skills lacks %s:\n%s", s, list.PlainText)
		}
	}

	// Progressive loading: the prompt names the skills; the agent reads a
	// SKILL.md from the sandbox when it needs it.
	tg.PushMessage(faketelegram.Private(ann, "please read the skill"))
	run.waitFinal(tg, ann.ID, "READ FILE SAID:")
	sys := lastReq().Messages[0].Content
	if !strings.Contains(sys, "- data-analysis: ") || !strings.Contains(sys, "(/mnt/skills/public/data-analysis/SKILL.md)") {
		t.Errorf("the system prompt does not list the skills:\n%s", sys)
	}
	if strings.Contains(sys, "# Data analysis") {
		t.Error("the system prompt holds a skill's body")
	}
	if got := lastReq().Last().Content; !strings.Contains(got, "name: data-analysis") || !strings.Contains(got, "# Data analysis") {
		t.Errorf("read_file of the skill gave %q", got)
	}

	// Activation: the body comes with the message; only its tools are
	// offered, and others are refused.
	tg.PushMessage(faketelegram.Private(ann, "/data-analysis sum the numbers"))
	run.waitFinal(tg, ann.ID, "GREP SAID:")
	var first fakeopenai.Request
	mu.Lock()
	for _, r := range reqs {
		if strings.HasSuffix(r.Last().Content, "sum the numbers") {
			first = r
		}
	}
	mu.Unlock()
	user := first.Last().Content
	if !strings.HasPrefix(user, `<active_skill name="data-analysis">`) || !strings.Contains(user, "# Data analysis") || !strings.HasSuffix(user, "</active_skill>\n\nsum the numbers") {
		t.Errorf("the activated message = %.300q", user)
	}
	allowed := []string{"bash", "read_file", "write_file", "str_replace", "ls", "glob", "present_files"}
	for _, name := range first.ToolNames() {
		if !slices.Contains(allowed, name) {
			t.Errorf("%s is offered while data-analysis is active (offered %v)", name, first.ToolNames())
		}
	}
	if got := lastReq().Last().Content; !strings.Contains(got, "grep is not available while the data-analysis skill is active") {
		t.Errorf("grep's result = %q", got)
	}
	// The skill is for one turn: the next message has every tool again
	// and the stored message is just the task.
	tg.PushMessage(faketelegram.Private(ann, "thanks"))
	run.waitFinal(tg, ann.ID, "plain answer to thanks")
	next := lastReq()
	if !slices.Contains(next.ToolNames(), "grep") || !slices.Contains(next.ToolNames(), "task") {
		t.Errorf("the next turn offers %v", next.ToolNames())
	}
	for _, m := range next.Messages[1:] {
		if strings.Contains(m.Content, "<active_skill") {
			t.Error("the skill's body stayed in the history")
		}
	}

	// Switched off, the skill is neither listed nor activated.
	tg.PushMessage(faketelegram.Private(ann, "/skills disable data-analysis"))
	waitMessage(t, tg, ann.ID, "Skill data-analysis is off")
	tg.PushMessage(faketelegram.Private(ann, "/data-analysis sum the numbers again"))
	waitMessage(t, tg, ann.ID, "Unknown command /data-analysis")
	tg.PushMessage(faketelegram.Private(ann, "hello"))
	run.waitFinal(tg, ann.ID, "plain answer to hello")
	if strings.Contains(lastReq().Messages[0].Content, "data-analysis") {
		t.Error("a disabled skill is still in the prompt")
	}
}
