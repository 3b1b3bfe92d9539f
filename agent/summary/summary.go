// Package summary folds the older part of a long conversation into one
// summary the agent reads as its own memory: where to cut, the
// summarizer's prompt and transcript, and how the summary is shown to the
// model. The agent decides when to fold and stores the result. It must
// not import agent.
package summary

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// prompt is the summarizer's system prompt.
const prompt = `You compress the earlier part of a conversation between a person and an AI agent, so the agent can go on without the full transcript. Write a summary the agent will read as its own memory of the conversation:
- what the person wants, in their words where it matters, and any constraints or preferences they stated;
- decisions made and answers given, with the specific facts, numbers, names and file paths involved;
- work done with tools and its results (files written, commands run, what was found), briefly;
- what is still open or was promised.
Keep it factual and compact (at most about 400 words), in the language of the conversation. If a previous summary is given, merge it in. Answer with the summary only.`

// maxFoldedText caps each message's text in the summarizer's input.
const maxFoldedText = 2000

// room is what a summary is expected to take, in tokens.
const room = 600

// Threshold is the request size, in tokens, that triggers a summary:
// trigger (0 → 32,000), or fraction (0 → 0.8) of the model's context
// window when that is known and lower.
func Threshold(trigger int, fraction float64, contextWindow int) int {
	limit := trigger
	if limit <= 0 {
		limit = 32_000
	}
	if contextWindow > 0 {
		f := fraction
		if f <= 0 || f >= 1 {
			f = 0.8
		}
		limit = min(limit, int(float64(contextWindow)*f))
	}
	return limit
}

// Cut is where the kept messages of h begin when a request must fit in
// limit tokens: the last keep messages (0 → 10), or fewer when the latest
// ones alone would still be too many tokens (with room for the summary),
// down to the run's own, which begin at userIdx. kept estimates a request
// holding the history from an index on. 0 means nothing can be folded.
func Cut(h []*store.Message, keep, userIdx, limit int, kept func(from int) int) int {
	if keep <= 0 {
		keep = 10
	}
	cut := foldPoint(h, keep, userIdx)
	for k := keep - 1; k >= 0 && cut < userIdx && kept(cut)+room > limit; k-- {
		cut = max(cut, foldPoint(h, k, userIdx))
	}
	return cut
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

// Write asks model m (id) to fold msgs into the previous summary, and
// returns the new one.
func Write(ctx context.Context, m llm.Model, id, previous string, msgs []*store.Message) (string, error) {
	text, err := llm.Complete(ctx, m, &llm.Request{
		Model: id,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: prompt},
			{Role: llm.RoleUser, Content: transcript(previous, msgs)},
		},
	})
	if err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errors.New("agent: summarize: the model returned an empty summary")
	}
	return text, nil
}

// Message is the thread's summary as the model reads it, before the
// messages it did not fold. The summary is the model's own writing, but
// about what people and tools said: it is escaped so that nothing in it
// can close the section.
func Message(summary string) string {
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
			fmt.Fprintf(&b, "Person: %s\n", Folded(m.Content, maxFoldedText))
		case "assistant":
			if m.Content != "" {
				fmt.Fprintf(&b, "Agent: %s\n", Folded(m.Content, maxFoldedText))
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "Agent called %s(%s)\n", tools.EscapeLine(tc.Name), Folded(tc.Arguments, 300))
			}
		case "tool":
			fmt.Fprintf(&b, "Result of %s: %s\n", tools.EscapeLine(m.Name), Folded(m.Content, maxFoldedText))
		}
	}
	b.WriteString("</conversation>")
	return b.String()
}

// Folded is one message's text as a model reads it in a transcript:
// clipped to n bytes, then escaped.
func Folded(s string, n int) string { return tools.Escape(tools.Clip(s, n)) }
