package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// TestTelegramSubagentUsage: each subagent's threaded reply ends with its
// own tokens, cost and time, and /status sums the run's subagents.
func TestTelegramSubagentUsage(t *testing.T) {
	tg, model := newTelegram(t), fakeopenai.New(t)
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
		// Each subagent: 1,000 + 2,000 tokens in, 200 + 300 out.
		if r.Last().Role == "tool" {
			return fakeopenai.Turn{Text: "Counted.", Usage: &fakeopenai.Usage{PromptTokens: 2000, CompletionTokens: 300, TotalTokens: 2300}}
		}
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "ls", Arguments: `{"path":"/mnt/user-data"}`}},
			Usage: &fakeopenai.Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200}}
	})
	run := startTelegram(t, tg, model, t.TempDir(), func(c *config.Config) {
		c.Models[0].PriceIn, c.Models[0].PriceOut = 2.5, 10 // $0.0125 a subagent
	})
	tg.PushMessage(faketelegram.Private(ann, "count all the fruit"))
	run.waitFinal(tg, ann.ID, "Summary of all three counts.")

	for _, f := range fruits {
		m := waitMessage(t, tg, ann.ID, "✅ "+fruitTask(f)+" · done in")
		if !strings.Contains(m.PlainText, "Counted.\n\n— 3.5k tokens (3.0k in, 500 out), $0.0125, ") {
			t.Errorf("%s's reply ends as %q", f, m.PlainText)
		}
	}
	tg.PushMessage(faketelegram.Private(ann, "/status"))
	waitMessage(t, tg, ann.ID, "Subagents: 3 done, 10.5k tokens, $0.0375\n")
}
