package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/agent/tokens"
	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

// errBudget ends a run before it starts: the conversation has used its
// tokens for the day.
var errBudget = errors.New("agent: daily token budget used up")

func (r *run) overBudget() bool {
	b := r.a.opts.DailyTokenBudget
	return b > 0 && r.daily.Day == r.a.opts.Now().UTC().Format(time.DateOnly) && r.daily.Tokens >= b
}

func (r *run) budgetText() string {
	return fmt.Sprintf("This conversation has used its %d tokens for today, so I'm pausing until the budget resets at midnight UTC.", r.a.opts.DailyTokenBudget)
}

// account adds the run's tokens to its thread's totals and, with a daily
// budget, to the conversation's day. It runs in the run's final write.
func (r *run) account(tx *store.Tx, prompt, completion int) error {
	if prompt+completion == 0 {
		return nil
	}
	t, err := tx.Thread(r.in.ThreadID)
	if err != nil {
		return err
	}
	t.PromptTokens += int64(prompt)
	t.CompletionTokens += int64(completion)
	if err := tx.PutThread(t); err != nil {
		return err
	}
	if r.a.opts.DailyTokenBudget <= 0 {
		return nil
	}
	return tokens.AddToday(tx, r.in.ChatKey, r.a.opts.Now(), int64(prompt+completion))
}

// Price is what a model's tokens cost (see tokens.Price).
type Price = tokens.Price

// usageEvent is the Usage an Answer reports: u's tokens and, when the
// model's prices are known, what they cost.
func usageEvent(u llm.Usage, p Price) event.Usage {
	return event.Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		Cost:             p.Cost(int64(u.PromptTokens), int64(u.CompletionTokens)),
	}
}
