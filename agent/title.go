package agent

import (
	"context"
	"strings"
	"time"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// maxTitle bounds a thread's title.
const maxTitle = 60

const titlePrompt = `Give this conversation a title of at most six words, in the language of the person's message: what it is about, no quotes, no final period. Answer with the title only.`

// title names a thread after its first exchange, in the background: with
// the title model when there is one, else with the start of the first
// message. A title set meanwhile is kept.
func (a *Agent) title(threadID, user, answer string) {
	a.mu.Lock()
	if a.stopping {
		a.mu.Unlock()
		return
	}
	a.bg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.bg.Done()
		t := fallbackTitle(user)
		if m := a.opts.TitleModel; m != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			text, err := llm.Complete(ctx, m.Model, &llm.Request{
				Model: m.ID,
				Messages: []llm.Message{
					{Role: llm.RoleSystem, Content: titlePrompt},
					{Role: llm.RoleUser, Content: titleRequest(user, answer)},
				},
				MaxTokens: 30,
			})
			cancel()
			if s := cleanTitle(text); err == nil && s != "" {
				t = s
			} else if err != nil {
				a.log.Debug("titling a thread with the model failed; using its first message", "thread", threadID, "err", err)
			}
		}
		if t == "" {
			return
		}
		err := a.opts.Store.Update(func(tx *store.Tx) error {
			th, err := tx.Thread(threadID)
			if err != nil || th.Title != "" {
				return err
			}
			th.Title = t
			return tx.PutThread(th)
		})
		if err != nil {
			a.log.Warn("saving a thread's title", "thread", threadID, "err", err)
		}
	}()
}

// titleRequest is the first exchange as the title model reads it, in a
// <conversation> section nothing in it can close.
func titleRequest(user, answer string) string {
	return "<conversation>\nPerson: " + folded(user, 1500) + "\n\nAgent: " + folded(answer, 1500) + "\n</conversation>"
}

// fallbackTitle is the first line of the first message, cut at a word.
func fallbackTitle(user string) string {
	line := strings.Join(strings.Fields(firstLine(stripBlocks(user))), " ")
	if len(line) <= maxTitle {
		return line
	}
	cut := tools.Clip(line, maxTitle)
	if i := strings.LastIndexByte(cut, ' '); i > maxTitle/2 {
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

func cleanTitle(s string) string {
	s = strings.TrimSpace(firstLine(strings.TrimSpace(s)))
	s = strings.Trim(s, "\"'`*# ")
	s = strings.TrimSuffix(s, ".")
	return tools.Clip(s, maxTitle)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
