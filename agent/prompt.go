package agent

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Section is one part of the system prompt. Text returns "" to leave the
// section out for this run.
type Section struct {
	Name string
	Text func(ctx context.Context, in *Input) string
}

// Prompt assembles the system prompt from sections, in order. Later issues
// fill the named slots (memory, skills, subagents) with SetSection.
type Prompt struct {
	sections []Section
}

// Slot names in the default prompt.
const (
	SectionRole         = "role"
	SectionSoul         = "soul"
	SectionMemory       = "memory"
	SectionSkills       = "skills"
	SectionSubagents    = "subagents"
	SectionWorkingDir   = "working_directory"
	SectionResponse     = "response_style"
	SectionCurrentDate  = "current_date"
	defaultWorkingRules = `You have no file system or shell in this conversation. Answer from your own knowledge and the tools listed to you; if a request needs files or commands, say so plainly.`
)

// DefaultPrompt returns the lead agent's prompt with empty slots for
// memory, skills and subagents.
func DefaultPrompt(name string) *Prompt {
	return NewPrompt([]Section{
		{Name: SectionRole, Text: static(fmt.Sprintf(`<role>
You are %s, an agent that works for the people who message you in a chat. You answer questions, do research, write and run code in your workspace, and delegate parts of larger jobs. Work carefully and finish what you start.
</role>`, name))},
		{Name: SectionSoul},
		{Name: SectionMemory},
		{Name: SectionSkills},
		{Name: SectionSubagents},
		{Name: SectionWorkingDir, Text: static("<working_directory>\n" + defaultWorkingRules + "\n</working_directory>")},
		{Name: SectionResponse, Text: static(`<response_style>
- You are in a chat: be direct and concise; lead with the answer.
- Use Markdown sparingly: short paragraphs, lists and code blocks where they help.
- Reply in the language the user writes in.
- Call independent tools in parallel in one response; never call a tool just to narrate.
- If a tool fails, read its error and adapt instead of repeating the same call.
</response_style>`)},
	}...)
}

// NewPrompt returns a prompt of sections followed by the current date. The
// date comes last so the sections before it stay a stable, cacheable
// prefix.
func NewPrompt(sections ...Section) *Prompt {
	p := &Prompt{sections: make([]Section, 0, len(sections)+1)}
	p.sections = append(p.sections, sections...)
	p.sections = append(p.sections, Section{Name: SectionCurrentDate, Text: func(context.Context, *Input) string {
		return "<current_date>" + time.Now().Format("2006-01-02, Monday") + "</current_date>"
	}})
	return p
}

// Static is a section text that never changes.
func Static(s string) func(context.Context, *Input) string { return static(s) }

func static(s string) func(context.Context, *Input) string {
	return func(context.Context, *Input) string { return s }
}

// SetSection replaces the text of the named section, adding it before the
// current date when no section has that name.
func (p *Prompt) SetSection(name string, text func(ctx context.Context, in *Input) string) {
	for i := range p.sections {
		if p.sections[i].Name == name {
			p.sections[i].Text = text
			return
		}
	}
	s := Section{Name: name, Text: text}
	n := len(p.sections)
	if n > 0 && p.sections[n-1].Name == SectionCurrentDate {
		p.sections = append(p.sections[:n-1], s, p.sections[n-1])
		return
	}
	p.sections = append(p.sections, s)
}

// Build returns the system prompt for one run. A run's persona with a
// soul has it in the soul section, in place of the section's own text.
func (p *Prompt) Build(ctx context.Context, in *Input) string {
	var b strings.Builder
	for _, s := range p.sections {
		text := s.Text
		if s.Name == SectionSoul && in != nil && in.Persona != nil && strings.TrimSpace(in.Persona.Soul) != "" {
			text = static(SoulText(in.Persona.Soul))
		}
		if text == nil {
			continue
		}
		t := strings.TrimSpace(text(ctx, in))
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t)
	}
	return b.String()
}
