package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deerflow/deerflow/documents/doc"
	"github.com/deerflow/deerflow/documents/office"
	"github.com/deerflow/deerflow/documents/pdf"
	"github.com/deerflow/deerflow/internal/fakeopenai"
	"github.com/deerflow/deerflow/internal/faketelegram"
)

// needPython skips unless the skills' Python libraries are installed for
// the system python3 the sandbox runs (CI installs them).
func needPython(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import pandas, matplotlib, openpyxl, docx, reportlab").Run(); err != nil {
		t.Skipf("the skills' Python libraries are not installed: %v", err)
	}
}

func bashCall(cmd string) fakeopenai.Turn {
	args, _ := json.Marshal(map[string]string{"description": "skill script", "command": cmd})
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "bash", Arguments: string(args)}}}
}

func writeCall(path, content string) fakeopenai.Turn {
	args, _ := json.Marshal(map[string]string{"description": "input", "path": path, "content": content})
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "write_file", Arguments: string(args)}}}
}

// TestTelegramChartDeckAndReportFromAChatMessage: a person sends a
// spreadsheet and asks for a chart, a deck and a report; the model runs
// the public skills' scripts in the sandbox and presents what they made,
// which arrives in the chat as a photo and two documents that open.
func TestTelegramChartDeckAndReportFromAChatMessage(t *testing.T) {
	needBwrap(t)
	needPython(t)
	book, err := os.ReadFile("../../documents/sheet/testdata/book.xlsx") // saved by LibreOffice
	if err != nil {
		t.Fatal(err)
	}
	const skills = "python3 /mnt/skills/public/"
	deck := `{"title": "Revenue by region", "slides": [
		{"title": "North leads", "bullets": ["North is the largest region"]},
		{"title": "The chart", "image": "/mnt/user-data/outputs/revenue.png", "caption": "From book.xlsx"}]}`
	model := fakeopenai.New(t)
	model.Script(
		bashCall(skills+"chart-visualization/scripts/chart.py plot --input /mnt/user-data/uploads/book.xlsx --sheet Sales"+
			" --x Region --y Revenue --drop Total --sort desc --title 'North leads' --output /mnt/user-data/outputs/revenue.png"),
		writeCall("/mnt/user-data/workspace/deck.json", deck),
		bashCall(skills+"ppt-generation/scripts/make_deck.py --outline /mnt/user-data/workspace/deck.json --output /mnt/user-data/outputs/revenue.pptx"),
		writeCall("/mnt/user-data/workspace/report.md", "# Revenue report\n\nNorth leads the regions.\n\n![chart](/mnt/user-data/outputs/revenue.png)\n"),
		bashCall(skills+"document-generation/scripts/make_document.py --input /mnt/user-data/workspace/report.md --output /mnt/user-data/outputs/report.pdf"),
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "present_files", Arguments: `{"filepaths":["/mnt/user-data/outputs/revenue.png","/mnt/user-data/outputs/revenue.pptx","/mnt/user-data/outputs/report.pdf"]}`}}},
		fakeopenai.Turn{Text: "Here are the chart, the deck and the report."},
	)
	tg := newTelegram(t)
	run := startTelegram(t, tg, model, t.TempDir())
	tg.AddFile("book-1", book)
	msg := faketelegram.Private(ann, "")
	msg.Caption = "chart revenue by region, then a deck and a PDF report"
	msg.Document = &faketelegram.Document{FileID: "book-1", FileUniqueID: "ubook-1", FileName: "book.xlsx", FileSize: len(book)}
	tg.PushMessage(msg)
	run.waitFinal(tg, ann.ID, "Here are the chart, the deck and the report.")

	for _, r := range model.Requests() {
		if last := r.Last(); last.Role == "tool" && strings.Contains(last.Content, "error") {
			t.Errorf("a script failed: %s", last.Content)
		}
	}
	files := map[string]*faketelegram.SentFile{}
	for _, m := range tg.Messages(ann.ID) {
		for _, f := range []*faketelegram.SentFile{m.Photo, m.Document} {
			if f != nil {
				files[filepath.Ext(f.Filename)] = f
			}
		}
	}
	if f := files[".png"]; f == nil {
		t.Errorf("no chart arrived; files: %v", files)
	} else if _, err := png.Decode(bytes.NewReader(f.Data)); err != nil {
		t.Errorf("the chart is not a PNG: %v", err)
	}
	opens(t, files[".pptx"], office.ConvertPPTX, "Slide 1: Revenue by region", "North is the largest region", "From book.xlsx")
	opens(t, files[".pdf"], pdf.Convert, "Revenue report", "North leads the regions.")
}

// opens converts a file the bot sent with conv and checks its text.
func opens(t *testing.T, f *faketelegram.SentFile, conv doc.Converter, want ...string) {
	t.Helper()
	if f == nil {
		t.Errorf("no file arrived to show %q", want)
		return
	}
	path := filepath.Join(t.TempDir(), f.Filename)
	if err := os.WriteFile(path, f.Data, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := conv(context.Background(), path, int64(len(f.Data)), doc.Limits{}.WithDefaults())
	if err != nil {
		t.Errorf("%s does not open: %v", f.Filename, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(d.Markdown, w) {
			t.Errorf("%s lacks %q:\n%s", f.Filename, w, d.Markdown)
		}
	}
}
