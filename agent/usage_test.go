package agent

import (
	"testing"

	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
)

// A run's Usage costs prompt tokens at price_in and completion tokens at
// price_out, per million; unknown prices cost nothing.
func TestUsageEventCost(t *testing.T) {
	u := llm.Usage{PromptTokens: 12_000, CompletionTokens: 3_000}
	got := usageEvent(u, Price{In: 2.5, Out: 10})
	want := event.Usage{PromptTokens: 12_000, CompletionTokens: 3_000, Cost: 0.06}
	if got.PromptTokens != want.PromptTokens || got.CompletionTokens != want.CompletionTokens || tokens.CostText(got.Cost) != "$0.0600" {
		t.Errorf("usageEvent = %+v, want %+v", got, want)
	}
	if c := usageEvent(u, Price{}).Cost; c != 0 {
		t.Errorf("cost without prices = %g, want 0", c)
	}
}
