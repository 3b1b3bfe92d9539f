package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/office"
	"github.com/deerflow/deerflow/documents/pdf"
)

// convert opens a produced document with the repo's own converters, as
// deerflow reads an upload: the file must really open.
func convert(t *testing.T, conv doc.Converter, path string) *doc.Doc {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := conv(context.Background(), path, st.Size(), doc.Limits{}.WithDefaults())
	if err != nil {
		t.Fatalf("%s does not open: %v", path, err)
	}
	return d
}

func wantAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

const chart = "python3 /mnt/skills/public/chart-visualization/scripts/chart.py "

func TestChartVisualization(t *testing.T) {
	needModules(t, "pandas", "matplotlib", "openpyxl")
	b := newBox(t, false)
	// A workbook saved by LibreOffice (see documents/sheet/testdata/make.sh).
	b.put("../documents/sheet/testdata/book.xlsx", "/mnt/user-data/uploads/book.xlsx")
	b.put("testdata/chart-visualization/monthly.csv", "/mnt/user-data/uploads/monthly.csv")

	out := b.mustRun(chart + "describe --input /mnt/user-data/uploads/book.xlsx")
	wantAll(t, "describe", out, "sheets: Sales, Notes", "Revenue: float64")

	out = b.mustRun(chart + "plot --input /mnt/user-data/uploads/book.xlsx --sheet Sales --x Region --y Revenue " +
		"--drop Total --sort desc --title 'North leads' --output /mnt/user-data/outputs/revenue.png")
	wantAll(t, "plot", out, "wrote /mnt/user-data/outputs/revenue.png", "from 2 rows", "present_files")
	checkPNG(t, b.host("/mnt/user-data/outputs/revenue.png"))

	b.mustRun(chart + "plot --input /mnt/user-data/uploads/monthly.csv --x month --y visits signups --kind line " +
		"--agg none --output /mnt/user-data/outputs/monthly.png")
	checkPNG(t, b.host("/mnt/user-data/outputs/monthly.png"))

	b.mustFail(chart+"plot --input /mnt/user-data/uploads/nope.csv --x a --y b --output /mnt/user-data/outputs/x.png", 1, "error: no such file")
	b.mustFail(chart+"describe --input /mnt/user-data/uploads/book.xlsx --sheet Budget", 1, "sheets: Sales, Notes")
	b.mustFail(chart+"plot --input /mnt/user-data/uploads/book.xlsx --x Region --y Margin --output /mnt/user-data/outputs/x.png", 1, "no column 'Margin'")
	b.mustFail(chart+"plot --input /mnt/user-data/uploads/book.xlsx --sheet Notes --x Owner --y Comment --output /mnt/user-data/outputs/x.png", 1, "has no numbers")
	b.write("/mnt/user-data/uploads/damaged.xlsx", []byte("not a zip"))
	b.mustFail(chart+"describe --input /mnt/user-data/uploads/damaged.xlsx", 1, "cannot open")
}

func TestPPTGeneration(t *testing.T) {
	needModules(t, "matplotlib")
	b := newBox(t, false)
	b.put("testdata/ppt-generation/deck.json", "/mnt/user-data/workspace/deck.json")
	b.write("/mnt/user-data/uploads/revenue.png", tinyPNG(t))
	const deck = "python3 /mnt/skills/public/ppt-generation/scripts/make_deck.py "

	out := b.mustRun(deck + "--outline /mnt/user-data/workspace/deck.json --output /mnt/user-data/outputs/q3.pptx")
	wantAll(t, "make_deck", out, "5 slides", "present_files")
	d := convert(t, office.ConvertPPTX, b.host("/mnt/user-data/outputs/q3.pptx"))
	if d.Units != 5 {
		t.Errorf("the deck has %d slides, want 5", d.Units)
	}
	wantAll(t, "the deck", d.Markdown, "Slide 1: Q3 Sales Review", "What worked and the plan for Q4",
		"Slide 2: Revenue grew 12% on two new accounts", "North +20%, driven by Acme and Globex", "Acme: three-year contract",
		"Slide 3: Where we go next", "Slide 4: North carries the quarter", "Revenue by region, Q3 2026",
		"Slide 5: Cost grows slower than revenue")

	b.write("/mnt/user-data/workspace/bad.json", []byte(`{"title": "T", "slides": [{"bullets": ["x"]}]}`))
	b.mustFail(deck+"--outline /mnt/user-data/workspace/bad.json --output /mnt/user-data/outputs/bad.pptx", 1, "slide 1 has no title")
	b.write("/mnt/user-data/workspace/noimg.json", []byte(`{"title": "T", "slides": [{"title": "P", "image": "/mnt/user-data/uploads/gone.png"}]}`))
	b.mustFail(deck+"--outline /mnt/user-data/workspace/noimg.json --output /mnt/user-data/outputs/bad.pptx", 1, "no such image file")
	b.mustFail(deck+"--outline /mnt/user-data/workspace/missing.json --output /mnt/user-data/outputs/bad.pptx", 1, "no such outline file")
	if _, err := os.Stat(b.host("/mnt/user-data/outputs/bad.pptx")); err == nil {
		t.Error("a failed build left a deck behind")
	}
}

func TestDocumentGeneration(t *testing.T) {
	needModules(t, "docx", "reportlab")
	b := newBox(t, false)
	b.put("testdata/document-generation/report.md", "/mnt/user-data/workspace/report.md")
	b.put("testdata/document-generation/outline.json", "/mnt/user-data/workspace/outline.json")
	b.write("/mnt/user-data/uploads/revenue.png", tinyPNG(t))
	const mk = "python3 /mnt/skills/public/document-generation/scripts/make_document.py "

	b.mustRun(mk + "--input /mnt/user-data/workspace/report.md --output /mnt/user-data/outputs/report.docx")
	d := convert(t, office.ConvertDOCX, b.host("/mnt/user-data/outputs/report.docx"))
	wantAll(t, "the Word report", d.Markdown, "Market Entry Report", "Findings", "Demand grows 8% a year",
		"Enter the north first", "| North | 1234.5 | 12.5% |", "All numbers are estimates", "Zoë")

	out := b.mustRun(mk + "--input /mnt/user-data/workspace/report.md --output /mnt/user-data/outputs/report.pdf")
	wantAll(t, "make_document", out, "present_files")
	d = convert(t, pdf.Convert, b.host("/mnt/user-data/outputs/report.pdf"))
	wantAll(t, "the PDF report", d.Markdown, "Market Entry Report", "Demand grows 8% a year", "Partner with a distributor",
		"1234.5", "Zoë checked them", "Next steps")

	b.mustRun(mk + "--input /mnt/user-data/workspace/outline.json --output /mnt/user-data/outputs/memo.docx")
	d = convert(t, office.ConvertDOCX, b.host("/mnt/user-data/outputs/memo.docx"))
	wantAll(t, "the memo", d.Markdown, "Board Memo", "Cash position is healthy", "Currency exposure", "| Currency | CFO |")

	b.write("/mnt/user-data/workspace/empty.md", []byte("\n\n"))
	b.mustFail(mk+"--input /mnt/user-data/workspace/empty.md --output /mnt/user-data/outputs/e.pdf", 1, "has no content")
	b.mustFail(mk+"--input /mnt/user-data/workspace/gone.md --output /mnt/user-data/outputs/e.pdf", 1, "no such file")
	b.write("/mnt/user-data/workspace/img.md", []byte("# T\n\n![x](/mnt/user-data/uploads/gone.png)\n"))
	b.mustFail(mk+"--input /mnt/user-data/workspace/img.md --output /mnt/user-data/outputs/e.docx", 1, "does not exist")
	b.mustFail(mk+"--input /mnt/user-data/workspace/report.md --output /mnt/user-data/outputs/e.odt", 1, "must end in .docx or .pdf")
}

func TestConsultingAnalysis(t *testing.T) {
	needModules(t, "matplotlib")
	b := newBox(t, false)
	const fw = "python3 /mnt/skills/public/consulting-analysis/scripts/framework.py "
	cases := []struct {
		name string
		want []string
	}{
		{"swot", []string{"## Acme coffee: SWOT", "**Strengths**<br>- Loyal customers in the north", "S-O:", "**So what:**"}},
		{"porter", []string{"| Competitive rivalry | high | Many small operators; Price wars |", "| Bargaining power of suppliers | high |"}},
		{"issue-tree", []string{"**Why did profit fall 20% in 2025?**", "- Revenue fell\n  - Fewer customers", "    - Beans", "*discounting*"}},
		{"matrix", []string{"| Office delivery | 0.30 | 0.80 | Quick wins |", "| App | 0.80 | 0.70 | Big bets |", "| New logo | 0.20 | 0.20 | Fill-ins |"}},
	}
	for _, c := range cases {
		b.put("testdata/consulting-analysis/"+c.name+".json", "/mnt/user-data/workspace/"+c.name+".json")
		out := b.mustRun(fw + "--input /mnt/user-data/workspace/" + c.name + ".json --markdown /mnt/user-data/outputs/" + c.name +
			".md --png /mnt/user-data/outputs/" + c.name + ".png")
		if strings.Contains(out, "warning: not MECE") {
			t.Errorf("%s: a sound framework was called not MECE:\n%s", c.name, out)
		}
		md, err := os.ReadFile(b.host("/mnt/user-data/outputs/" + c.name + ".md"))
		if err != nil {
			t.Fatal(err)
		}
		wantAll(t, c.name+".md", string(md), append(c.want, "]("+c.name+".png)")...)
		checkPNG(t, b.host("/mnt/user-data/outputs/"+c.name+".png"))
	}
	b.put("testdata/consulting-analysis/not-mece.json", "/mnt/user-data/workspace/not-mece.json")
	out := b.mustRun(fw + "--input /mnt/user-data/workspace/not-mece.json --markdown /mnt/user-data/outputs/nm.md")
	wantAll(t, "the not-MECE tree", out, "'More customers' has a single branch", "two branches with the same text")
	b.write("/mnt/user-data/workspace/bad.json", []byte(`{"framework": "porter", "forces": {"rivalry": {"rating": "huge", "points": ["x"]}}}`))
	b.mustFail(fw+"--input /mnt/user-data/workspace/bad.json --markdown /mnt/user-data/outputs/b.md", 1, "forces.rivalry.rating must be low, medium or high")
	b.write("/mnt/user-data/workspace/what.json", []byte(`{"framework": "bcg"}`))
	b.mustFail(fw+"--input /mnt/user-data/workspace/what.json --markdown /mnt/user-data/outputs/b.md", 1, "must be one of swot, porter, issue-tree, matrix")
}

func TestFrontendDesign(t *testing.T) {
	python3(t)
	b := newBox(t, false)
	const check = "python3 /mnt/skills/public/frontend-design/scripts/check_page.py "
	// The model's path: copy the template, edit it, validate it.
	b.mustRun("cp /mnt/skills/public/frontend-design/templates/page.html /mnt/user-data/outputs/launch.html")
	page := b.host("/mnt/user-data/outputs/launch.html")
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "<title>Page title</title>", "<title>Orbit - launch</title>", 1)
	edited = strings.Replace(edited, "One sentence that says what this is", "Orbit puts your team's calendar in one place", 1)
	b.write("/mnt/user-data/outputs/launch.html", []byte(edited))
	out := b.mustRun(check + "/mnt/user-data/outputs/launch.html")
	wantAll(t, "check_page", out, "OK: /mnt/user-data/outputs/launch.html is well formed and self-contained")

	root, err := html.Parse(strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	if got := headings(root); !strings.Contains(got, "Orbit puts your team's calendar in one place") {
		t.Errorf("the page's h1 = %q", got)
	}

	b.put("testdata/frontend-design/bad.html", "/mnt/user-data/outputs/bad.html")
	out, code := b.run(check + "/mnt/user-data/outputs/bad.html")
	if code != 1 {
		t.Errorf("a bad page passed (exit %d):\n%s", code, out)
	}
	wantAll(t, "the bad page's report", out, `<link rel="stylesheet"> loads https://cdn.example.com/x.css`,
		`<script src="https://cdn.example.com/a.js">`, "uses @import", `id "a" is used twice`,
		"<span> opened on line 3 is not closed before </div>", "no <title>", "<!DOCTYPE html>", "viewport", "FAILED")
	b.mustFail(check+"/mnt/user-data/outputs/none.html", 1, "no such file")
}

// headings returns the text of the page's <h1> elements.
func headings(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, in bool) {
		in = in || (n.Type == html.ElementNode && n.Data == "h1")
		if in && n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(n, false)
	return sb.String()
}

func TestPodcastGeneration(t *testing.T) {
	python3(t)
	b := newBox(t, false)
	b.put("testdata/podcast-generation/episode.json", "/mnt/user-data/workspace/episode.json")
	b.put("testdata/podcast-generation/bad-speaker.json", "/mnt/user-data/workspace/bad.json")
	const ps = "python3 /mnt/skills/public/podcast-generation/scripts/podcast_script.py "

	out := b.mustRun(ps + "--input /mnt/user-data/workspace/episode.json --output /mnt/user-data/outputs/ep.md --tts /mnt/user-data/outputs/ep.txt")
	wantAll(t, "podcast_script", out, "2 segments", "Maya", "present_files")
	md, _ := os.ReadFile(b.host("/mnt/user-data/outputs/ep.md"))
	wantAll(t, "the script", string(md), "# Why batteries get cheaper", "| 1 | Cold open | 0:00 |", "## 2. Learning curves",
		"**TOM:** *(laughs)* And now it is closer to a hundred.", "*Goal: Explain Wright's law*", "- BNEF battery price survey 2024")
	tts, _ := os.ReadFile(b.host("/mnt/user-data/outputs/ep.txt"))
	if lines := strings.Split(strings.TrimSpace(string(tts)), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "Maya: Ten years ago") {
		t.Errorf("tts text:\n%s", tts)
	}
	b.mustFail(ps+"--input /mnt/user-data/workspace/bad.json --output /mnt/user-data/outputs/bad.md", 1, "speaker must be one of Maya, Tom")
	b.mustFail(ps+"--input /mnt/user-data/workspace/gone.json --output /mnt/user-data/outputs/bad.md", 1, "no such file")
}

// TestScriptsStayInTheirSkill keeps the scripts runnable from the
// read-only /mnt/skills: one file each, no sibling imports that would
// write __pycache__ next to them.
func TestScriptsStayInTheirSkill(t *testing.T) {
	scripts, _ := filepath.Glob("public/*/scripts/*")
	if len(scripts) < 8 {
		t.Fatalf("only %d scripts", len(scripts))
	}
	for _, s := range scripts {
		if filepath.Base(s) == "__pycache__" {
			t.Errorf("%s is in the source tree (and would be built in)", s)
		}
	}
}

func TestMeetingMinutes(t *testing.T) {
	python3(t)
	b := newBox(t, false)
	b.put("testdata/meeting-minutes/standup.vtt", "/mnt/user-data/uploads/standup.vtt")
	b.put("testdata/meeting-minutes/minutes.json", "/mnt/user-data/workspace/minutes.json")
	const mn = "python3 /mnt/skills/public/meeting-minutes/scripts/minutes.py "

	out := b.mustRun(mn + "scan --transcript /mnt/user-data/uploads/standup.vtt --output /mnt/user-data/workspace/candidates.json")
	wantAll(t, "scan", out, "6 turns, 3 speakers, 2 decision, 1 action and 2 question candidates")
	data, _ := os.ReadFile(b.host("/mnt/user-data/workspace/candidates.json"))
	wantAll(t, "the candidates", string(data), `"name": "Priya"`, `"speaker": "Lena"`,
		`"text": "I'll send the release notes draft to Jonas by Wednesday."`, `"line": 13`)

	out = b.mustRun(mn + "render --input /mnt/user-data/workspace/minutes.json --output /mnt/user-data/outputs/minutes.md")
	wantAll(t, "render", out, "warning: action 3 (QA sign-off) has no owner", "due 'Friday' is not a date", "2 decisions, 3 action items")
	md, _ := os.ReadFile(b.host("/mnt/user-data/outputs/minutes.md"))
	wantAll(t, "the minutes", string(md), "# Launch stand-up", "- **Attendees:** Priya, Jonas, Lena", "1. Launch on 12 December (Priya)",
		"| 1 | Send the release notes draft to Jonas | Lena | 2026-11-26 |", "| 3 | QA sign-off | **unassigned** | Friday |",
		"- Who announces the launch to customers?", "**Next meeting:** 2026-12-01 09:30")

	b.write("/mnt/user-data/uploads/empty.txt", []byte("WEBVTT\n\n"))
	b.mustFail(mn+"scan --transcript /mnt/user-data/uploads/empty.txt", 1, "holds no transcript text")
	b.write("/mnt/user-data/workspace/bad.json", []byte(`{"title": "X", "actions": [{"owner": "Ana"}]}`))
	b.mustFail(mn+"render --input /mnt/user-data/workspace/bad.json --output /mnt/user-data/outputs/bad.md", 1, `action 1 has no "task"`)
	b.mustFail(mn+"render --input /mnt/user-data/workspace/gone.json --output /mnt/user-data/outputs/bad.md", 1, "no such file")
}
