// Package title names a thread after its first exchange: with a model
// when there is one, else with the start of the first message. The agent
// decides when and stores the title. It must not import agent.
package title

import (
	"context"
	"strings"

	"github.com/deerflow/deerflow/agent/summary"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/tools"
)

// maxLen bounds a thread's title.
const maxLen = 60

const prompt = `Give this conversation a title of at most six words, in the language of the person's message: what it is about, no quotes, no final period. Answer with the title only.`

// Write asks model m (id) for a title of the exchange of user and answer.
// It returns "" with no error when the model's answer holds no title.
func Write(ctx context.Context, m llm.Model, id, user, answer string) (string, error) {
	text, err := llm.Complete(ctx, m, &llm.Request{
		Model: id,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: prompt},
			{Role: llm.RoleUser, Content: request(user, answer)},
		},
		MaxTokens: 30,
	})
	return clean(text), err
}

// request is the first exchange as the title model reads it, in a
// <conversation> section nothing in it can close.
func request(user, answer string) string {
	return "<conversation>\nPerson: " + summary.Folded(user, 1500) + "\n\nAgent: " + summary.Folded(answer, 1500) + "\n</conversation>"
}

// Fallback is the first line of the first message, cut at a word.
func Fallback(user string) string {
	line := strings.Join(strings.Fields(firstLine(stripBlocks(user))), " ")
	if len(line) <= maxLen {
		return line
	}
	cut := tools.Clip(line, maxLen)
	if i := strings.LastIndexByte(cut, ' '); i > maxLen/2 {
		cut = strings.TrimRight(cut[:i], ",;:-") + "…"
	}
	return cut
}

// stripBlocks drops leading <tag>…</tag> blocks (an upload note) from a
// message.
func stripBlocks(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, "<") {
		end := strings.Index(s, ">")
		if end < 0 {
			break
		}
		closing := "</" + s[1:end] + ">"
		j := strings.Index(s, closing)
		if j < 0 {
			break
		}
		s = strings.TrimSpace(s[j+len(closing):])
	}
	return s
}

func clean(s string) string {
	s = strings.TrimSpace(firstLine(strings.TrimSpace(s)))
	s = strings.Trim(s, "\"'`*# ")
	s = strings.TrimSuffix(s, ".")
	return tools.Clip(s, maxLen)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
