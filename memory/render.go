package memory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// PromptSection is the system prompt's memory section: how to treat the
// <memory> block that comes with a person's message. It never changes, so
// it keeps the prompt's prefix cacheable.
const PromptSection = `<memory_rules>
A message may start with a <memory> block: what you remember about its writer from earlier conversations, kept for them alone. Let it shape your answers (their preferences, their context) without reciting it or saying where it comes from. When they ask what you remember, or want something forgotten, point them to /memory (and /memory forget N, /memory clear, /memory off).
</memory_rules>`

// render is the <memory> block given to the model with a person's message:
// the summaries, then corrections, then the other facts by confidence, as
// many as fit in maxTokens. Empty when there is nothing to tell. Every
// summary and fact is what someone once said, so each is escaped onto one
// line: it cannot close the block, open another or pass for a heading.
func render(mem *store.Memory, maxTokens int) string {
	if mem.Work.Text == "" && mem.Personal.Text == "" && mem.TopOfMind.Text == "" && len(mem.Facts) == 0 {
		return ""
	}
	const head = "<memory>\nWhat you remember about the person writing this message, from earlier conversations. Use it where it helps; do not recite it.\n"
	const tail = "</memory>"
	var b strings.Builder
	b.WriteString(head)
	budget := maxTokens - tokens(head) - tokens(tail)
	add := func(line string) bool {
		if t := tokens(line); t <= budget {
			budget -= t
			b.WriteString(line)
			return true
		}
		return false
	}
	for _, s := range []struct {
		name string
		sum  store.Summary
	}{{"Work", mem.Work}, {"Personal", mem.Personal}, {"Top of mind", mem.TopOfMind}} {
		if s.sum.Text != "" {
			add(s.name + ": " + tools.EscapeLine(s.sum.Text) + "\n")
		}
	}
	facts := ordered(mem.Facts)
	if len(facts) > 0 && add("Facts:\n") {
		for _, f := range facts {
			line := "- " + tools.EscapeLine(f.Content) + "\n"
			if f.Category == "correction" {
				line = "- (correction) " + tools.EscapeLine(f.Content) + "\n"
			}
			if !add(line) {
				break
			}
		}
	}
	b.WriteString(tail)
	return b.String()
}

// ordered is facts as injected: corrections first, then by confidence,
// the newer first among equals.
func ordered(facts []store.Fact) []store.Fact {
	out := slices.Clone(facts)
	slices.SortStableFunc(out, func(a, b store.Fact) int {
		ac, bc := a.Category == "correction", b.Category == "correction"
		if ac != bc {
			if ac {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return b.Created.Compare(a.Created)
	})
	return out
}

func tokens(s string) int { return llm.Tokens(s) }

// listing is /memory's view: summaries and facts numbered in the order
// they were learnt (the numbers /memory forget takes).
func listing(mem *store.Memory, whose string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "What I remember about %s:\n", whose)
	for _, s := range []struct {
		name string
		sum  store.Summary
	}{{"Work", mem.Work}, {"Personal", mem.Personal}, {"Top of mind", mem.TopOfMind}} {
		if s.sum.Text != "" {
			fmt.Fprintf(&b, "%s: %s\n", s.name, s.sum.Text)
		}
	}
	if len(mem.Facts) > 0 {
		b.WriteString("\nFacts:\n")
		for i, f := range mem.Facts {
			fmt.Fprintf(&b, "%d. %s (%s)\n", i+1, f.Content, f.Category)
		}
	}
	b.WriteString("\n/memory forget N drops fact N · /memory clear forgets everything · /memory off stops remembering")
	return b.String()
}
