package main

import (
	"testing"

	"github.com/deerflow/deerflow/internal/fakeopenai"
)

// With price_in and price_out set, /status says what the conversation's
// tokens cost at the model's prices.
func TestChatStatusShowsCost(t *testing.T) {
	fake := fakeopenai.New(t)
	fake.Script(
		fakeopenai.Turn{Text: "Priced answer.", Usage: &fakeopenai.Usage{PromptTokens: 12_000, CompletionTokens: 3_000, TotalTokens: 15_000}},
		fakeopenai.Turn{Text: "Free answer.", Usage: &fakeopenai.Usage{}},
	)
	cfg := testConfig(t, fake, t.TempDir())
	cfg.Models[0].PriceIn, cfg.Models[0].PriceOut = 2.5, 10
	s := startChat(t, cfg)
	s.say("hello")
	s.screen.waitFor(t, "Priced answer.", 1)
	// The second run starts once the first is recorded.
	s.say("again")
	s.screen.waitFor(t, "Free answer.", 1)
	s.say("/status")
	s.screen.waitFor(t, "Cost: about $0.0600 at default's prices", 1)
}
