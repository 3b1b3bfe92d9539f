// Package office converts Word (.docx) and PowerPoint (.pptx) files to
// Markdown: headings, paragraphs, lists, links and tables of a document;
// each slide a section with its title, text, tables and notes.
//
// It imports documents/doc (Doc, Limits, the errors, the Markdown writer
// and the zip guard that refuses zip bombs).
package office

import (
	"context"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
)

// Namespaces of WordprocessingML: the usual (transitional) one and the one
// of "strict" Open XML.
const (
	wNS       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	wStrictNS = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	mcNS      = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

// isW reports whether n is the WordprocessingML element local; drawings
// inside a document use other namespaces with the same local names.
func isW(n xml.Name, local string) bool {
	return n.Local == local && (n.Space == wNS || n.Space == wStrictNS)
}

// ConvertDOCX converts a Word document: its body in order, headings,
// lists and tables kept.
func ConvertDOCX(ctx context.Context, path string, size int64, lim doc.Limits) (*doc.Doc, error) {
	z, err := doc.OpenZip(path, lim)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	main := z.MainPart("word/document.xml")
	if !z.Has(main) {
		return nil, fmt.Errorf("%w (no word/document.xml)", doc.ErrDamaged)
	}
	d := &docxDoc{w: doc.NewWriter(lim.MaxOutput)}
	d.headings = loadDocxStyles(z)
	d.numbering = loadDocxNumbering(z)
	if rs, err := z.RelsOf(main); err == nil {
		d.links = rs
	}
	rc, err := z.Open(main)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if err := d.walk(ctx, xml.NewDecoder(rc)); err != nil {
		return nil, err
	}
	return &doc.Doc{Format: doc.DOCX, Markdown: d.w.String(), Units: docxPages(z), Cut: d.w.Full()}, nil
}

// docxPages is the page count Word saved in docProps/app.xml, 0 without.
func docxPages(z *doc.ZipFile) int {
	data, err := z.ReadEntry("docProps/app.xml")
	if err != nil {
		return 0
	}
	var app struct {
		Pages int `xml:"Pages"`
	}
	if doc.XMLUnmarshal(data, &app) != nil || app.Pages < 0 {
		return 0
	}
	return app.Pages
}

// loadDocxStyles maps paragraph style ids to heading levels (1-9): by the
// style's name ("heading 1", "Title"), its outline level, or the style it
// is based on. Localised Word and LibreOffice give styles ids other than
// "Heading1", but keep these names.
func loadDocxStyles(z *doc.ZipFile) map[string]int {
	levels := map[string]int{"Title": 1}
	for i := 1; i <= 9; i++ {
		levels["Heading"+strconv.Itoa(i)] = i
	}
	data, err := z.ReadEntry("word/styles.xml")
	if err != nil {
		return levels
	}
	var parsed struct {
		Style []struct {
			Type    string  `xml:"type,attr"`
			ID      string  `xml:"styleId,attr"`
			Name    valAttr `xml:"name"`
			BasedOn valAttr `xml:"basedOn"`
			Outline valAttr `xml:"pPr>outlineLvl"`
		} `xml:"style"`
	}
	if doc.XMLUnmarshal(data, &parsed) != nil {
		return levels
	}
	based := map[string]string{}
	for _, s := range parsed.Style {
		if s.Type != "" && s.Type != "paragraph" {
			continue
		}
		if l := headingLevel(s.Name.Val, s.Outline.Val); l > 0 {
			levels[s.ID] = l
		} else {
			delete(levels, s.ID) // defined here, and not as a heading
		}
		based[s.ID] = s.BasedOn.Val
	}
	for id := range based {
		cur := id
		for hops := 0; hops < 10 && levels[id] == 0 && cur != ""; hops++ {
			cur = based[cur]
			levels[id] = levels[cur]
		}
		if levels[id] == 0 {
			delete(levels, id)
		}
	}
	return levels
}

// valAttr is an element whose w:val attribute is its value.
type valAttr struct {
	Val string `xml:"val,attr"`
}

// headingLevel gives the heading level for a style name ("heading 2",
// "Title") or an outline level ("1" means level 2); 0 when neither says.
func headingLevel(name, outline string) int {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "title" {
		return 1
	}
	if rest, ok := strings.CutPrefix(n, "heading "); ok {
		if l, err := strconv.Atoi(rest); err == nil && l >= 1 && l <= 9 {
			return l
		}
	}
	if l, err := strconv.Atoi(outline); err == nil && l >= 0 && l < 9 {
		return l + 1
	}
	return 0
}

// docxNumbering says, for a list (numId) and level (ilvl), whether its
// items are numbered rather than bulleted.
type docxNumbering map[string]map[string]bool

// loadDocxNumbering reads word/numbering.xml: each list's levels and
// whether their number format is a number (decimal, letters, roman) or a
// bullet.
func loadDocxNumbering(z *doc.ZipFile) docxNumbering {
	out := docxNumbering{}
	data, err := z.ReadEntry("word/numbering.xml")
	if err != nil {
		return out
	}
	var parsed struct {
		Abstract []struct {
			ID  string `xml:"abstractNumId,attr"`
			Lvl []struct {
				Ilvl   string  `xml:"ilvl,attr"`
				NumFmt valAttr `xml:"numFmt"`
			} `xml:"lvl"`
		} `xml:"abstractNum"`
		Num []struct {
			ID       string  `xml:"numId,attr"`
			Abstract valAttr `xml:"abstractNumId"`
		} `xml:"num"`
	}
	if doc.XMLUnmarshal(data, &parsed) != nil {
		return out
	}
	abstract := map[string]map[string]bool{}
	for _, a := range parsed.Abstract {
		lv := map[string]bool{}
		for _, l := range a.Lvl {
			f := l.NumFmt.Val
			lv[l.Ilvl] = f != "" && f != "bullet" && f != "none"
		}
		abstract[a.ID] = lv
	}
	for _, n := range parsed.Num {
		out[n.ID] = abstract[n.Abstract.Val]
	}
	return out
}

// ordered reports whether items of list numID at level ilvl are numbered.
func (n docxNumbering) ordered(numID, ilvl string) bool {
	return n[numID][ilvl]
}
