package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
	"github.com/deerflow/deerflow/internal/testutil"
	"github.com/deerflow/deerflow/store"
)

// TestInjectedTextStaysData pushes the classic injection payloads through
// every way text reaches the lead model in the real wiring: a memory fact
// and summary of the sender, a custom skill's description (system prompt)
// and body (an activated message), and an uploaded file's name. The same
// conversations are run with harmless text in their place; what the fake
// model server received must have the same tags, in the same order, and
// still hold each payload's words.
func TestInjectedTextStaysData(t *testing.T) {
	names := make([]string, 0, len(testutil.Payloads))
	for name := range testutil.Payloads {
		names = append(names, name)
	}
	slices.Sort(names)
	harmless := make([]string, len(names))
	hostile := make([]string, len(names))
	for i, name := range names {
		harmless[i], hostile[i] = "nothing special", testutil.Payloads[name]
	}
	base, got := injectRun(t, harmless), injectRun(t, hostile)
	for i, name := range names {
		for j, what := range []string{"memory, skills and upload", "activated skill"} {
			testutil.AssertInert(t, name+" ("+what+")", base[i][j], got[i][j], hostile[i])
		}
	}
}

// injectRun starts deerflow with one custom skill per text and, for each,
// a person whose memory holds it; the person sends a file named after it,
// then activates its skill. It returns the two lead requests of each.
func injectRun(t *testing.T, texts []string) [][2]string {
	t.Helper()
	tg, model := newTelegram(t), fakeopenai.New(t)
	var mu sync.Mutex
	var lead []fakeopenai.Request
	model.Handle(func(r fakeopenai.Request) fakeopenai.Turn {
		if strings.Contains(r.Messages[0].Content, "long-term memory an assistant has") {
			return fakeopenai.Turn{Text: `{"newFacts":[]}`}
		}
		mu.Lock()
		lead = append(lead, r)
		mu.Unlock()
		return fakeopenai.Turn{Text: "ok"}
	})
	skillsDir := t.TempDir()
	for i, text := range texts {
		desc, body := fmt.Sprintf("%q", "Takes notes. "+text), "# Notes\n\nStep one. "+text
		injectSkill(t, skillsDir, fmt.Sprintf("inject-%02d", i), desc, body)
	}
	run := startTelegram(t, tg, model, t.TempDir(), withMemory(1), func(c *config.Config) { c.Skills.Path = skillsDir })
	lastLead := func() string {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for _, m := range lead[len(lead)-1].Messages {
			fmt.Fprintf(&b, "[%s]\n%s\n", m.Role, m.Content)
		}
		return b.String()
	}
	out := make([][2]string, len(texts))
	for i, text := range texts {
		user := faketelegram.User{ID: int64(5000 + i), FirstName: "U"}
		err := run.app.store.Update(func(tx *store.Tx) error {
			return tx.PutMemory(&store.Memory{Scope: fmt.Sprintf("telegram:%d", user.ID), TopOfMind: store.Summary{Text: "Trip. " + text},
				Facts: []store.Fact{{ID: "f1", Content: "Said: " + text, Category: "context", Confidence: 0.9}}, NextID: 2})
		})
		if err != nil {
			t.Fatal(err)
		}
		fileID := fmt.Sprintf("doc-%d", i)
		tg.AddFile(fileID, []byte("notes"))
		msg := faketelegram.Private(user, "")
		msg.Caption = "read this"
		msg.Document = &faketelegram.Document{FileID: fileID, FileUniqueID: "u" + fileID, FileName: "report " + text + ".pdf", FileSize: 5}
		tg.PushMessage(msg)
		run.waitFinal(tg, user.ID, "ok")
		out[i][0] = lastLead()
		n := len(tg.Messages(user.ID))
		tg.PushMessage(faketelegram.Private(user, fmt.Sprintf("/inject-%02d go", i)))
		tg.WaitFor(func() bool { return len(tg.Messages(user.ID)) > n })
		run.waitFinal(tg, user.ID, "ok")
		out[i][1] = lastLead()
		if !strings.Contains(out[i][1], "<active_skill") {
			t.Fatalf("the skill was not activated:\n%s", out[i][1])
		}
	}
	return out
}

func injectSkill(t *testing.T, dir, name, desc, body string) {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
