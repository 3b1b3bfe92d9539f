package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
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

// summaryPrompt is the summarizer's system prompt.
const summaryPrompt = `You compress the earlier part of a conversation between a person and an AI agent, so the agent can go on without the full transcript. Write a summary the agent will read as its own memory of the conversation:
- what the person wants, in their words where it matters, and any constraints or preferences they stated;
- decisions made and answers given, with the specific facts, numbers, names and file paths involved;
- work done with tools and its results (files written, commands run, what was found), briefly;
- what is still open or was promised.
Keep it factual and compact (at most about 400 words), in the language of the conversation. If a previous summary is given, merge it in. Answer with the summary only.`

// maxFoldedText caps each message's text in the summarizer's input.
const maxFoldedText = 2000

// threshold is the request size, in tokens, that triggers a summary.
func (s *Summarize) threshold(model ModelRef) int {
	limit := s.TriggerTokens
	if limit <= 0 {
		limit = 32_000
	}
	if model.ContextWindow > 0 {
		f := s.Fraction
		if f <= 0 || f >= 1 {
			f = 0.8
		}
		limit = min(limit, int(float64(model.ContextWindow)*f))
	}
	return limit
}

// summaryRoom is what a summary is expected to take, in tokens.
const summaryRoom = 600

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

// foldPoint is where the kept messages begin: the last keep messages, but
// always the run's own user message and what follows it, and never a tool
// result without the call it answers. 0 means nothing can be folded.
func foldPoint(h []*store.Message, keep, userIdx int) int {
	cut := min(len(h)-keep, userIdx)
	for cut > 0 && h[cut].Role == "tool" {
		cut--
	}
	return max(cut, 0)
}

// compact folds older messages into the thread's summary when the next
// request would be too large. It is an explicit, persisted step of the
// loop: the summary and the point it covers are stored with the thread.
func (r *run) compact() error {
	s := r.a.opts.Summarize
	if s == nil || r.a.opts.Ephemeral {
		return nil
	}
	limit := s.threshold(r.model)
	if r.requestTokens() <= limit {
		return nil
	}
	keep := s.Keep
	if keep <= 0 {
		keep = 10
	}
	// Keep fewer messages when the latest ones alone would still be too
	// many tokens (with room for the summary), down to the run's own.
	cut := foldPoint(r.history, keep, r.userIdx)
	for k := keep - 1; k >= 0 && cut < r.userIdx && r.keptTokens(cut)+summaryRoom > limit; k-- {
		cut = max(cut, foldPoint(r.history, k, r.userIdx))
	}
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
	text, err := llm.Complete(r.ctx, model.Model, &llm.Request{
		Model: model.ID,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: summaryPrompt},
			{Role: llm.RoleUser, Content: transcript(r.summary, folded)},
		},
	})
	if err != nil {
		return err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return errors.New("agent: summarize: the model returned an empty summary")
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

// summaryMessage is the thread's summary as the model reads it, before the
// messages it did not fold. The summary is the model's own writing, but
// about what people and tools said: it is escaped so that nothing in it
// can close the section.
func summaryMessage(summary string) string {
	return "<conversation_summary>\nThe earlier part of this conversation, summarized:\n" + tools.Escape(summary) + "\n</conversation_summary>"
}

// transcript is the folded messages as the summarizer reads them, each
// escaped (see tools.Escape): a message cannot end the conversation early
// or add a section of its own.
func transcript(previous string, msgs []*store.Message) string {
	var b strings.Builder
	if previous != "" {
		b.WriteString("<previous_summary>\n" + tools.Escape(previous) + "\n</previous_summary>\n\n")
	}
	b.WriteString("<conversation>\n")
	for _, m := range msgs {
		switch m.Role {
		case "user":
			fmt.Fprintf(&b, "Person: %s\n", folded(m.Content, maxFoldedText))
		case "assistant":
			if m.Content != "" {
				fmt.Fprintf(&b, "Agent: %s\n", folded(m.Content, maxFoldedText))
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "Agent called %s(%s)\n", tools.EscapeLine(tc.Name), folded(tc.Arguments, 300))
			}
		case "tool":
			fmt.Fprintf(&b, "Result of %s: %s\n", tools.EscapeLine(m.Name), folded(m.Content, maxFoldedText))
		}
	}
	b.WriteString("</conversation>")
	return b.String()
}

// folded is one message's text in a transcript: clipped, then escaped.
func folded(s string, n int) string { return tools.Escape(tools.Clip(s, n)) }
