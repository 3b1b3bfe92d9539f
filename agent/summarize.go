package agent

import (
	"errors"

	"github.com/deerflow/deerflow/agent/summary"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
)

// Summarize configures how long conversations are folded: when the next
// request would pass the threshold, the older messages become one summary
// (stored with the thread) and only the latest ones are sent as they are.
type Summarize struct {
	TriggerTokens int       // a request over this many tokens is folded first; 0 → 32,000
	Fraction      float64   // or this share of the model's context window, if lower; 0 → 0.8
	Keep          int       // messages kept as they are; 0 → 10
	Model         *ModelRef // writes the summaries; nil → the run's model
}

// requestTokens estimates the size of the next request.
func (r *run) requestTokens() int {
	return r.keptTokens(0) + llm.Tokens(r.summary)
}

// keptTokens estimates a request holding the history from index from on:
// system prompt, turn context and those messages.
func (r *run) keptTokens(from int) int {
	n := llm.Tokens(r.systemPrompt()) + llm.Tokens(r.turnCtx)
	for _, m := range r.history[from:] {
		n += 4 + llm.Tokens(m.Content)
		for _, tc := range m.ToolCalls {
			n += llm.Tokens(tc.Name) + llm.Tokens(tc.Arguments)
		}
	}
	return n
}

// compact folds older messages into the thread's summary when the next
// request would be too large. It is an explicit, persisted step of the
// loop: the summary and the point it covers are stored with the thread.
func (r *run) compact() error {
	s := r.a.opts.Summarize
	if s == nil || r.a.opts.Ephemeral {
		return nil
	}
	limit := summary.Threshold(s.TriggerTokens, s.Fraction, r.model.ContextWindow)
	if r.requestTokens() <= limit {
		return nil
	}
	cut := summary.Cut(r.history, s.Keep, r.userIdx, limit, r.keptTokens)
	if cut == 0 {
		return nil
	}
	folded := r.history[:cut]
	last := folded[len(folded)-1].Seq
	if last == 0 {
		return errors.New("agent: summarize: a folded message has no sequence number")
	}
	model := r.model
	if s.Model != nil {
		model = *s.Model
	}
	text, err := summary.Write(r.ctx, model.Model, model.ID, r.summary, folded)
	if err != nil {
		return err
	}
	id := r.in.ThreadID
	r.write(func(tx *store.Tx) error {
		t, err := tx.Thread(id)
		if err != nil {
			return err
		}
		t.Summary, t.SummarySeq = text, last
		return tx.PutThread(t)
	})
	if err := r.wait(); err != nil {
		return err
	}
	r.summary = text
	r.history = append([]*store.Message(nil), r.history[cut:]...)
	r.userIdx -= cut
	r.a.log.InfoContext(r.ctx, "summarized the conversation", "thread", id, "folded", cut, "through_seq", last, "limit", limit)
	return nil
}
