package research

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/deerflow/deerflow/event"
	"github.com/deerflow/deerflow/internal/lazyre"
	"github.com/deerflow/deerflow/llm"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// ReportName is the name of the report file in the thread's outputs.
const ReportName = "report.md"

const reporterPrompt = `<role>
You are the reporter of a research team. Other agents each researched a part of a topic; you write the final report from their findings.
</role>

<structure>
Write the report in Markdown, in the language of the topic, with these parts in this order:
# The report's title
## Key points
4 to 6 bullets: the most important findings.
## Overview
One or two paragraphs: what was examined and the main conclusions.
## Detailed analysis
Subsections (###) by theme, with the facts, figures and their context. Use a Markdown table whenever data is compared (options, periods, places, figures).
## Limitations
Only if the findings have gaps or conflict: say which.
Do not write a references or sources section: it is added from the list of pages the steps read.
</structure>

<rules>
- Use only the findings below. Do not invent facts, figures or sources; where findings conflict, say so.
- Cite inline as Markdown links, [title](URL), with URLs from the list of pages read only.
- No preamble and no closing remarks: begin with the title.
</rules>`

// report has the reporter write the report from the finished steps, then
// delivers it: posted as the answer and saved as report.md.
func (s *session) report(rec *store.Research) {
	s.status(panel(rec, "✍️ Writing the report…"), "writing the report")
	sources := pagesRead(rec)
	m := s.model
	text, err := llm.Complete(s.ctx, m.Model, &llm.Request{
		Model: m.ID,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: reporterPrompt},
			{Role: llm.RoleUser, Content: reportRequest(rec, sources)},
		},
		MaxTokens:   m.MaxTokens,
		Temperature: m.Temperature,
	})
	if err == nil && strings.TrimSpace(text) == "" {
		err = errors.New("the model wrote an empty report")
	}
	if err != nil {
		if s.ctx.Err() != nil {
			s.stopped(rec)
			return
		}
		why := "The report came back empty."
		var le *llm.Error
		if errors.As(err, &le) {
			why = llm.UserMessage(err)
		}
		s.fail(rec, why+" The steps' findings are kept: send /retry to write the report again.", err)
		return
	}
	report := finishReport(text, sources)
	if save := s.r.opts.SaveReport; save != nil {
		f, err := save(s.in.ThreadID, ReportName, []byte(report))
		if err != nil {
			s.r.log.ErrorContext(s.ctx, "saving the research report", "thread", s.in.ThreadID, "err", err)
		} else {
			s.emit(event.FilesPresented{Files: []event.File{f}})
		}
	}
	rec.Phase, rec.Error = store.ResearchDone, ""
	s.answer(rec, report)
}

// pagesRead are the pages the steps read, each once, in step order.
func pagesRead(rec *store.Research) []store.ResearchSource {
	var out []store.ResearchSource
	at := map[string]int{}
	for _, st := range rec.Steps {
		for _, src := range st.Sources {
			k := normURL(src.URL)
			if i, ok := at[k]; ok {
				if out[i].Title == "" {
					out[i].Title = src.Title
				}
				continue
			}
			at[k] = len(out)
			out = append(out, src)
		}
	}
	return out
}

// reportRequest gives the reporter the topic, each step's findings and
// the pages read, escaped as in stepBrief (a page's title is the web's
// writing).
func reportRequest(rec *store.Research, sources []store.ResearchSource) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Research topic: %s\nReport title: %s\n", tools.EscapeLine(rec.Topic), tools.EscapeLine(rec.Plan.Title))
	for _, q := range rec.Questions {
		if q.Answer != "" {
			fmt.Fprintf(&sb, "(Asked: %s Answer: %s)\n", tools.EscapeLine(q.Question), tools.EscapeLine(q.Answer))
		}
	}
	sb.WriteString("\n## Findings\n")
	for i, p := range rec.Plan.Steps {
		fmt.Fprintf(&sb, "\n### Step %d: %s (%s)\n", i+1, tools.EscapeLine(p.Title), tools.EscapeLine(p.StepType))
		st := rec.Steps[i]
		if st.Status != event.TaskCompleted {
			fmt.Fprintf(&sb, "(This step did not finish: %s. Its part of the topic is not covered.)\n", st.Status)
			continue
		}
		sb.WriteString(findingsText(strings.TrimSpace(st.Findings)))
		sb.WriteString("\n")
	}
	sb.WriteString("\n## Pages read\n")
	if len(sources) == 0 {
		sb.WriteString("None: no page was read, so cite nothing.\n")
	}
	for i, src := range sources {
		fmt.Fprintf(&sb, "%d. %s — %s\n", i+1, tools.EscapeLine(orURL(src)), tools.EscapeLine(src.URL))
	}
	return sb.String()
}

// findingsText is a step's findings as another model reads them: clipped,
// and with their tags escaped (their Markdown code blocks are kept).
func findingsText(s string) string { return tools.EscapeTags(tools.Clip(s, maxFindingsIn)) }

func orURL(src store.ResearchSource) string {
	if t := strings.TrimSpace(src.Title); t != "" {
		return t
	}
	return src.URL
}

var (
	// referencesHeading is a heading (or a bold line) that starts a list of
	// references the model wrote itself.
	referencesHeading = lazyre.New(`(?i)^\s*(#{1,6}\s*|\*\*)?\s*(references|sources|citations|key citations|bibliography|works cited|参考资料|参考文献|来源|引用)\s*:?\s*(\*\*)?\s*:?\s*$`)
	headingLine       = lazyre.New(`^(#{1,6})\s`)
	// URLs may hold balanced parentheses (Wikipedia's "Tesla_(company)").
	markdownLink = lazyre.New(`\[([^\]\n]*)\]\(\s*<?(https?://(?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+"[^"\n]*")?\s*\)`)
	bareURL      = lazyre.New(`https?://(?:[^\s<>()\[\]"'` + "`" + `]|\([^\s<>()\[\]"'` + "`" + `]*\))+`)
)

// finishReport makes the model's report safe to deliver: any references
// list it wrote is dropped, links to pages no step read lose their URL,
// and the references are the pages read.
func finishReport(text string, sources []store.ResearchSource) string {
	read := make(map[string]bool, len(sources))
	for _, s := range sources {
		read[normURL(s.URL)] = true
	}
	text = unfence(strings.TrimSpace(text))
	text = dropReferences(text)
	// Until nothing changes: a label put in a link's place, or text
	// closing up where a URL went, can complete another link
	// ("[[x](a)](b)"). Each change shortens the text.
	for prev := ""; prev != text; {
		prev = text
		text = strings.TrimSpace(dropBareURLs(unlink(text, read), read))
	}

	var sb strings.Builder
	sb.WriteString(text)
	sb.WriteString("\n\n## References\n\n")
	if len(sources) == 0 {
		sb.WriteString("No web pages were read for this research, so it rests on the findings as the steps reported them, without sources.\n")
	}
	for i, src := range sources {
		if t := strings.TrimSpace(src.Title); t != "" {
			fmt.Fprintf(&sb, "%d. [%s](%s)\n", i+1, escapeLinkText(oneLine(t, 150)), src.URL)
		} else {
			fmt.Fprintf(&sb, "%d. <%s>\n", i+1, src.URL)
		}
	}
	return sb.String()
}

// unlink replaces links to pages not read by their text.
func unlink(text string, read map[string]bool) string {
	return markdownLink().ReplaceAllStringFunc(text, func(m string) string {
		sub := markdownLink().FindStringSubmatch(m)
		if read[normURL(sub[2])] {
			return m
		}
		if strings.TrimSpace(sub[1]) == "" {
			return ""
		}
		return sub[1]
	})
}

// dropBareURLs removes URLs of pages not read that are not a kept link's
// target.
func dropBareURLs(text string, read map[string]bool) string {
	var out strings.Builder
	last := 0
	for _, loc := range bareURL().FindAllStringIndex(text, -1) {
		u := strings.TrimRight(text[loc[0]:loc[1]], ".,;:!?")
		if read[normURL(u)] || insideLink(text, loc[0]) {
			continue
		}
		before := text[last:loc[0]]
		last = loc[0] + len(u)
		if last < len(text) && strings.IndexByte(" ),.;:!?", text[last]) >= 0 {
			before = strings.TrimRight(before, " ") // "see URL for" → "see for", "(see URL)" → "(see)"
		}
		out.WriteString(before)
	}
	out.WriteString(text[last:])
	return out.String()
}

// insideLink reports whether the URL at i is the target of a Markdown link
// ("](" just before it).
func insideLink(text string, i int) bool {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '<') {
		j--
	}
	return j >= 2 && text[j-2:j] == "]("
}

// unfence removes a code fence wrapped around the whole report.
func unfence(text string) string {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") {
		return text
	}
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.ContainsAny(strings.TrimPrefix(first, "```"), " `") {
		return text
	}
	return strings.TrimSpace(strings.TrimSuffix(rest, "```"))
}

// dropReferences removes the sections the model titled as references:
// from their heading to the next heading of the same or a higher level.
func dropReferences(text string) string {
	lines := strings.Split(text, "\n")
	out := lines[:0]
	skip := -1 // the level of the references heading being skipped; 0: a bold line (to the next heading)
	inFence := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
		}
		if !inFence {
			h := headingLine().FindStringSubmatch(l)
			if skip >= 0 && h != nil && (skip == 0 || len(h[1]) <= skip) {
				skip = -1
			}
			if skip < 0 && referencesHeading().MatchString(l) {
				skip = 0
				if h != nil {
					skip = len(h[1])
				}
				continue
			}
		}
		if skip < 0 {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// normURL is u for comparisons: no fragment, no trailing slash, the
// scheme and host in lower case.
func normURL(u string) string {
	u = strings.TrimSpace(u)
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Fragment, p.RawFragment = "", ""
	p.Scheme, p.Host = strings.ToLower(p.Scheme), strings.ToLower(p.Host)
	return strings.TrimSuffix(p.String(), "/")
}

func escapeLinkText(s string) string {
	return strings.NewReplacer("[", "(", "]", ")").Replace(s)
}
