package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// Categories of facts.
var categories = []string{"preference", "knowledge", "context", "behavior", "goal", "correction"}

// updatePrompt is the updater's system prompt.
const updatePrompt = `You keep the long-term memory an assistant has of one person. You get the memory as it stands and the latest exchanges between them, and decide what the memory should hold from now on.

What to remember: durable facts about the person. Their preferences, what they know or do well, their situation and projects (context), how they like the assistant to work (behavior), their goals, and corrections they made to the assistant.
What not to remember: one-off requests, things true only for this conversation, what the assistant did, files they uploaded, and secrets (passwords, keys, tokens, account numbers).

Rules:
- One fact is one short sentence about the person, in the third person ("Prefers answers in metric units."), in the language the person writes in.
- confidence: 0.9 to 1.0 when they said it outright; 0.7 to 0.8 when it is strongly implied. Below 0.7 is not worth keeping. A correction of the assistant has category "correction" and confidence 0.95 or more.
- Never add a fact the memory already holds. When a new fact replaces or contradicts a remembered one, list the old fact's id in factsToRemove and add the new one.
- Summaries: workContext (their work and projects), personalContext (who they are: language, place, interests), topOfMind (what they are focused on these days). Rewrite one (two or three sentences, keeping what still holds) only when it should change, and then set shouldUpdate to true.

Answer with exactly one JSON object of this shape and nothing else:
{"newFacts":[{"content":"...","category":"preference|knowledge|context|behavior|goal|correction","confidence":0.9}],"factsToRemove":["<fact id>"],"user":{"workContext":{"summary":"...","shouldUpdate":false},"personalContext":{"summary":"...","shouldUpdate":false},"topOfMind":{"summary":"...","shouldUpdate":false}}}`

// maxExchangeText bounds each side of an exchange in the update prompt.
const maxExchangeText = 4000

// result is the updater model's answer.
type result struct {
	NewFacts []struct {
		Content    string  `json:"content"`
		Category   string  `json:"category"`
		Confidence float64 `json:"confidence"`
	} `json:"newFacts"`
	FactsToRemove []string `json:"factsToRemove"`
	User          struct {
		WorkContext     summaryUpdate `json:"workContext"`
		PersonalContext summaryUpdate `json:"personalContext"`
		TopOfMind       summaryUpdate `json:"topOfMind"`
	} `json:"user"`
}

type summaryUpdate struct {
	Summary      string `json:"summary"`
	ShouldUpdate bool   `json:"shouldUpdate"`
}

// errBadOutput marks a model answer that is not the JSON asked for.
var errBadOutput = errors.New("memory: the model's answer is not the JSON object asked for")

// update reads the scope's waiting exchanges into its memory with one model
// call. A failed call keeps the exchanges for a retry (and returns the
// error); an answer that is not the JSON asked for changes nothing and
// drops them.
func (m *Manager) update(ctx context.Context, scope string) error {
	var mem *store.Memory
	var exs []*store.Exchange
	err := m.opts.Store.View(func(tx *store.Tx) error {
		var err error
		if mem, err = tx.Memory(scope); err != nil {
			return err
		}
		exs, err = tx.Exchanges(scope)
		return err
	})
	if err != nil {
		m.log.Error("memory update: reading", "scope", scope, "err", err)
		return err
	}
	if len(exs) == 0 {
		return nil
	}
	runs := make([]string, len(exs))
	for i, e := range exs {
		runs[i] = e.RunID
	}
	if mem.Off {
		return m.opts.Store.Update(func(tx *store.Tx) error { return tx.DeleteExchanges(scope, runs) })
	}
	text, err := m.ask(ctx, mem, exs)
	if err != nil {
		m.log.Warn("memory update: the model call failed; will retry", "scope", scope, "err", err)
		return err
	}
	res, err := parseResult(text)
	if err != nil {
		m.log.Warn("memory update: ignoring the model's answer", "scope", scope, "err", err, "answer", tools.Clip(text, 300))
		return m.opts.Store.Update(func(tx *store.Tx) error { return tx.DeleteExchanges(scope, runs) })
	}
	source := exs[len(exs)-1].ThreadID
	err = m.opts.Store.Update(func(tx *store.Tx) error {
		cur, err := tx.Memory(scope) // it may have changed (/memory forget) meanwhile
		if err != nil {
			return err
		}
		if !cur.Off {
			m.apply(cur, res, source)
			if err := tx.PutMemory(cur); err != nil {
				return err
			}
		}
		return tx.DeleteExchanges(scope, runs)
	})
	if err != nil {
		m.log.Error("memory update: saving", "scope", scope, "err", err)
		return err
	}
	m.forget(scope)
	m.log.Debug("memory updated", "scope", scope, "exchanges", len(exs), "new_facts", len(res.NewFacts), "removed", len(res.FactsToRemove))
	return nil
}

// ask sends the update prompt and returns the model's text.
func (m *Manager) ask(ctx context.Context, mem *store.Memory, exs []*store.Exchange) (string, error) {
	zero := float32(0)
	req := &llm.Request{
		Model: m.opts.ModelID,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: updatePrompt},
			{Role: llm.RoleUser, Content: updateRequest(mem, exs)},
		},
		Temperature: &zero,
	}
	return llm.Complete(ctx, m.opts.Model, req)
}

// updateRequest is the updater's task: the memory and the exchanges, all
// escaped (see tools.Escape), so nothing said can close <conversation> or
// pass for the updater's instructions.
func updateRequest(mem *store.Memory, exs []*store.Exchange) string {
	var b strings.Builder
	b.WriteString("<current_memory>\n")
	b.WriteString(describe(mem))
	b.WriteString("</current_memory>\n\n<conversation>\n")
	for _, e := range exs {
		fmt.Fprintf(&b, "User: %s\nAssistant: %s\n\n", tools.Escape(tools.Clip(e.User, maxExchangeText)), tools.Escape(tools.Clip(e.Answer, maxExchangeText)))
	}
	b.WriteString("</conversation>\n\nAnswer with the JSON object only.")
	return b.String()
}

// describe is the memory as the updater reads it, with fact ids.
func describe(mem *store.Memory) string {
	var b strings.Builder
	for _, s := range []struct {
		name string
		sum  store.Summary
	}{{"Work context", mem.Work}, {"Personal context", mem.Personal}, {"Top of mind", mem.TopOfMind}} {
		if s.sum.Text != "" {
			fmt.Fprintf(&b, "%s: %s\n", s.name, tools.EscapeLine(s.sum.Text))
		}
	}
	if len(mem.Facts) == 0 {
		b.WriteString("Facts: none yet\n")
		return b.String()
	}
	b.WriteString("Facts:\n")
	for _, f := range mem.Facts {
		fmt.Fprintf(&b, "- [%s] (%s, %.2f) %s\n", f.ID, tools.EscapeLine(f.Category), f.Confidence, tools.EscapeLine(f.Content))
	}
	return b.String()
}

// parseResult reads the model's JSON, tolerating code fences and text
// around the object; unknown fields are ignored.
func parseResult(text string) (*result, error) {
	obj, ok := llm.JSONObject(text)
	if !ok {
		return nil, errBadOutput
	}
	res := new(result)
	if err := json.Unmarshal([]byte(obj), res); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadOutput, err)
	}
	return res, nil
}

// apply merges an update into mem: removals, then new facts (confident
// enough, not duplicates), then the fact limit (least confident first, the
// oldest among equals), then the summaries.
func (m *Manager) apply(mem *store.Memory, res *result, source string) {
	now := m.opts.Now()
	if len(res.FactsToRemove) > 0 {
		mem.Facts = slices.DeleteFunc(mem.Facts, func(f store.Fact) bool { return slices.Contains(res.FactsToRemove, f.ID) })
	}
	for _, nf := range res.NewFacts {
		content := strings.TrimSpace(nf.Content)
		if content == "" || nf.Confidence < m.opts.MinConfidence {
			continue
		}
		cat := strings.ToLower(strings.TrimSpace(nf.Category))
		if !slices.Contains(categories, cat) {
			cat = "context"
		}
		key := normalize(content)
		if slices.ContainsFunc(mem.Facts, func(f store.Fact) bool { return normalize(f.Content) == key }) {
			continue
		}
		mem.NextID++
		mem.Facts = append(mem.Facts, store.Fact{
			ID: fmt.Sprintf("f%d", mem.NextID), Content: content, Category: cat,
			Confidence: min(nf.Confidence, 1), Created: now, Updated: now, Source: source,
		})
	}
	if over := len(mem.Facts) - m.opts.MaxFacts; over > 0 {
		byValue := slices.Clone(mem.Facts)
		slices.SortStableFunc(byValue, func(a, b store.Fact) int {
			if a.Confidence != b.Confidence {
				if a.Confidence < b.Confidence {
					return -1
				}
				return 1
			}
			return a.Created.Compare(b.Created)
		})
		evict := map[string]bool{}
		for _, f := range byValue[:over] {
			evict[f.ID] = true
		}
		mem.Facts = slices.DeleteFunc(mem.Facts, func(f store.Fact) bool { return evict[f.ID] })
	}
	for _, s := range []struct {
		to *store.Summary
		up summaryUpdate
	}{{&mem.Work, res.User.WorkContext}, {&mem.Personal, res.User.PersonalContext}, {&mem.TopOfMind, res.User.TopOfMind}} {
		if t := strings.TrimSpace(s.up.Summary); s.up.ShouldUpdate && t != "" {
			*s.to = store.Summary{Text: t, Updated: now}
		}
	}
	mem.Updated = now
}

// normalize is a fact's text for duplicate checks: lower case, letters
// and digits only, single spaces.
func normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}
