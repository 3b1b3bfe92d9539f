package research

import (
	"strings"
	"testing"

	"github.com/deerflow/deerflow/store"
)

func TestFinishReport(t *testing.T) {
	read := []store.ResearchSource{
		{URL: "https://a.example/one", Title: "Page [one]"},
		{URL: "https://B.example/two/"},
	}
	const refs = "\n\n## References\n\n1. [Page (one)](https://a.example/one)\n2. <https://B.example/two/>\n"
	tests := []struct {
		name    string
		text    string
		sources []store.ResearchSource
		want    string
	}{
		{
			name: "links to pages read are kept",
			text: "# R\n\nA fact ([one](https://a.example/one)), another ([two](https://b.example/two#x)).",
			want: "# R\n\nA fact ([one](https://a.example/one)), another ([two](https://b.example/two#x))." + refs,
		},
		{
			name: "links to other pages keep their text",
			text: "# R\n\nAs [a blog](https://blog.example/post) says, and [](https://c.example/) too.",
			want: "# R\n\nAs a blog says, and  too." + refs,
		},
		{
			name: "link with a title and angle brackets",
			text: `See [one](<https://a.example/one> "Page one") and [x](https://x.example/ "X").`,
			want: `See [one](<https://a.example/one> "Page one") and x.` + refs,
		},
		{
			name: "bare URLs of other pages go, punctuation stays",
			text: "See https://other.example/data, or https://a.example/one.",
			want: "See, or https://a.example/one." + refs,
		},
		{
			name: "no double space where a bare URL went",
			text: "See also https://other.example/x for more (as https://other.example/y).",
			want: "See also for more (as)." + refs,
		},
		{
			name: "the model's references are replaced",
			text: "# R\n\nText.\n\n## Sources\n- [Made up](https://made-up.example/)\n- https://a.example/one\n\n### Sub of sources\nmore\n\n## Limitations\nFew pages.",
			want: "# R\n\nText.\n\n## Limitations\nFew pages." + refs,
		},
		{
			name: "a bold references line runs to the next heading",
			text: "# R\n\nText.\n\n**References:**\n1. https://x.example/\n\n## After\nKept.",
			want: "# R\n\nText.\n\n## After\nKept." + refs,
		},
		{
			name: "references in Chinese, at the end",
			text: "# 报告\n\n正文。\n\n## 参考资料\n- https://x.example/",
			want: "# 报告\n\n正文。" + refs,
		},
		{
			name: "a heading in a code block is not a references heading",
			text: "# R\n\n```\n## Sources\nhttps://a.example/one\n```\nEnd.",
			want: "# R\n\n```\n## Sources\nhttps://a.example/one\n```\nEnd." + refs,
		},
		{
			name: "a fence around the whole report goes",
			text: "```markdown\n# R\n\nText.\n```",
			want: "# R\n\nText." + refs,
		},
		{
			name:    "URLs with parentheses",
			text:    "Per [Tesla](https://en.wikipedia.org/wiki/Tesla_(company)), also https://en.wikipedia.org/wiki/Tesla_(company); not [this](https://x.example/a_(b)) (see https://x.example/c).",
			sources: []store.ResearchSource{{URL: "https://en.wikipedia.org/wiki/Tesla_(company)", Title: "Tesla, Inc."}},
			want:    "Per [Tesla](https://en.wikipedia.org/wiki/Tesla_(company)), also https://en.wikipedia.org/wiki/Tesla_(company); not this (see).\n\n## References\n\n1. [Tesla, Inc.](https://en.wikipedia.org/wiki/Tesla_(company))\n",
		},
		{
			name:    "no pages read",
			text:    "# R\n\nText from [somewhere](https://x.example/).",
			sources: []store.ResearchSource{},
			want:    "# R\n\nText from somewhere.\n\n## References\n\nNo web pages were read for this research, so it rests on the findings as the steps reported them, without sources.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := read
			if tt.sources != nil {
				src = tt.sources
			}
			if got := finishReport(tt.text, src); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestPagesRead(t *testing.T) {
	rec := &store.Research{Steps: []store.ResearchStep{
		{Sources: []store.ResearchSource{{URL: "https://a.example/x"}, {URL: "https://b.example/"}}},
		{Sources: []store.ResearchSource{{URL: "https://A.example/x#part", Title: "A"}, {URL: "https://c.example/", Title: "C"}}},
	}}
	got := pagesRead(rec)
	want := []store.ResearchSource{{URL: "https://a.example/x", Title: "A"}, {URL: "https://b.example/"}, {URL: "https://c.example/", Title: "C"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("page %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if s := strings.TrimSpace(finishReport("x", got)); !strings.HasSuffix(s, "3. [C](https://c.example/)") {
		t.Errorf("references:\n%s", s)
	}
}

// FuzzFinishReport: whatever the model writes, the delivered report links
// only to pages read and ends with their list.
func FuzzFinishReport(f *testing.F) {
	f.Add("# R\n\nSee [one](https://a.example/one) and [x](https://x.example/).\n\n## Sources\n- https://x.example/")
	f.Add("```\n## Sources\n```\nhttps://x.example/(a) [](<https://a.example/one>) **References:**\n[a](https://a.example/one \"t\")")
	f.Add("[[x](https://x.example/)](https://a.example/one) https://x.example/a_(b)c")
	f.Add("[[](http://0)](http://0)")
	read := []store.ResearchSource{{URL: "https://a.example/one", Title: "One"}}
	f.Fuzz(func(t *testing.T, text string) {
		out := finishReport(text, read)
		body, refs, ok := strings.Cut(out, "\n\n## References\n\n")
		if !ok {
			if body, refs, ok = strings.Cut(out, "## References\n\n"); !ok || body != "" {
				t.Fatalf("no references section:\n%s", out)
			}
		}
		for strings.Contains(refs, "\n\n## References\n\n") { // the model's own text may hold the heading
			_, refs, _ = strings.Cut(refs, "\n\n## References\n\n")
		}
		if refs != "1. [One](https://a.example/one)\n" {
			t.Fatalf("references %q", refs)
		}
		for _, m := range markdownLink().FindAllStringSubmatch(body, -1) {
			if normURL(m[2]) != "https://a.example/one" {
				t.Fatalf("a link to %q is kept in:\n%s", m[2], out)
			}
		}
	})
}

// FuzzParsePlan: a plan that parses is one the steps can run.
func FuzzParsePlan(f *testing.F) {
	f.Add(`{"title": "T", "thought": "", "steps": [{"title": "A", "description": "a", "step_type": "research"}]}`, true)
	f.Add("```json\n{\"question\": \"Q?\"}\n```", false)
	f.Add(`{"accepted": true, "steps": null}`, true)
	f.Fuzz(func(t *testing.T, text string, lenient bool) {
		out, err := parsePlan(text, 3, true, true, lenient)
		if err != nil || out.plan == nil {
			return
		}
		if strings.TrimSpace(out.plan.Title) == "" || len(out.plan.Steps) == 0 || len(out.plan.Steps) > 3 {
			t.Fatalf("plan %+v", out.plan)
		}
		for _, st := range out.plan.Steps {
			if strings.TrimSpace(st.Title) == "" || st.Description == "" || (st.StepType != stepResearch && st.StepType != stepProcessing) {
				t.Fatalf("step %+v", st)
			}
		}
	})
}
