package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/store"
)

// errBudget ends a run before it starts: the conversation has used its
// tokens for the day.
var errBudget = errors.New("agent: daily token budget used up")

// dailyUsage is one conversation's tokens on one UTC day.
type dailyUsage struct {
	Day    string `json:"day"` // 2006-01-02, UTC
	Tokens int64  `json:"tokens"`
}

func dailyKey(chatKey string) string { return "tokens:" + chatKey }

func readDaily(tx *store.Tx, chatKey string) (dailyUsage, error) {
	var d dailyUsage
	v, err := tx.State(dailyKey(chatKey))
	if errors.Is(err, store.ErrNotFound) || (err == nil && v == nil) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(v, &d); err != nil {
		return dailyUsage{}, nil // unreadable: start the day afresh
	}
	return d, nil
}

// DailyTokens returns the tokens the conversation used today (UTC).
func DailyTokens(tx *store.Tx, chatKey string, now time.Time) int64 {
	d, err := readDaily(tx, chatKey)
	if err != nil || d.Day != now.UTC().Format(time.DateOnly) {
		return 0
	}
	return d.Tokens
}

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
	d, err := readDaily(tx, r.in.ChatKey)
	if err != nil {
		return err
	}
	if today := r.a.opts.Now().UTC().Format(time.DateOnly); d.Day != today {
		d = dailyUsage{Day: today}
	}
	d.Tokens += int64(prompt + completion)
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return tx.PutState(dailyKey(r.in.ChatKey), v)
}
