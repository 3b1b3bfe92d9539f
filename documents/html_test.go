package documents

import (
	"strings"
	"testing"
)

func TestHTML(t *testing.T) {
	page := `<html><head><meta charset="windows-1252"><title>T</title><style>body{color:red}</style>
<script>alert("no")</script></head><body><h1>Caf` + "\xe9" + ` Menu</h1><p>Open <b>daily</b>, see <a href="https://example.com/">site</a>.</p>
<ul><li>Coffee</li><li>Tea</li></ul><table><tr><th>Item</th><th>Price</th></tr><tr><td>Espresso</td><td>2</td></tr></table></body></html>`
	doc, err := convertFile(t, HTML, writeTemp(t, "menu.html", []byte(page)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Café Menu", "Open **daily**, see [site](https://example.com/).",
		"- Coffee\n- Tea", "| Item | Price |", "| Espresso | 2 |"} {
		if !strings.Contains(doc.Markdown, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, doc.Markdown)
		}
	}
	for _, bad := range []string{"alert", "color:red"} {
		if strings.Contains(doc.Markdown, bad) {
			t.Errorf("Markdown keeps %q:\n%s", bad, doc.Markdown)
		}
	}
	if doc.Units != 0 || doc.Format != HTML {
		t.Errorf("doc = %+v", doc)
	}
}
