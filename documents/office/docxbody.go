package office

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/deerflow/deerflow/documents/doc"
)

// docxDoc holds the state of one pass over word/document.xml: the
// paragraph being read, the table being collected and the list items
// waiting to be written as one block.
type docxDoc struct {
	w         *doc.Writer
	headings  map[string]int     // paragraph style id -> heading level
	numbering docxNumbering      // list id -> level -> numbered
	links     map[string]doc.Rel // relationship id -> hyperlink target
	counters  map[string][9]int  // list id -> the item numbers per level
	list      []string           // list lines not written yet

	para        strings.Builder // text of the current paragraph
	pDepth      int             // paragraphs open (text boxes nest them)
	inPPr       bool            // inside paragraph properties
	inText      bool            // inside w:t
	style       string
	numID, ilvl string
	linkStart   int
	linkTarget  string

	tblDepth  int // tables open; nested ones are flattened into cells
	rows      [][]string
	row       []string
	cell      strings.Builder
	span      int
	tableSize int
}

// walk streams the document's XML and writes its Markdown, stopping when
// the writer is full.
func (d *docxDoc) walk(ctx context.Context, dec *xml.Decoder) error {
	d.counters = map[string][9]int{}
	for n := 0; !d.w.Full(); n++ {
		if n%512 == 0 {
			if err := doc.TimedOut(ctx); err != nil {
				return err
			}
		}
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, doc.ErrTooLarge) || errors.Is(err, doc.ErrDamaged) {
				return err
			}
			return fmt.Errorf("%w (word/document.xml: %v)", doc.ErrDamaged, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := d.start(dec, t); err != nil {
				return err
			}
		case xml.EndElement:
			d.end(t)
		case xml.CharData:
			if d.inText {
				d.text(string(t))
			}
		}
	}
	d.flushList()
	return nil
}

// start handles an opening tag.
func (d *docxDoc) start(dec *xml.Decoder, t xml.StartElement) error {
	if t.Name.Space == mcNS && t.Name.Local == "Fallback" {
		return dec.Skip() // the same content as the Choice, for old readers
	}
	if t.Name.Space != wNS && t.Name.Space != wStrictNS {
		return nil
	}
	switch t.Name.Local {
	case "p":
		d.pDepth++
		if d.pDepth == 1 {
			d.para.Reset()
			d.style, d.numID, d.ilvl, d.linkTarget = "", "", "0", ""
		}
	case "pPr":
		d.inPPr = true
	case "pStyle":
		if d.pDepth == 1 {
			d.style = doc.Xattr(t, "val")
		}
	case "numId":
		if d.pDepth == 1 {
			d.numID = doc.Xattr(t, "val")
		}
	case "ilvl":
		if d.pDepth == 1 {
			d.ilvl = doc.Xattr(t, "val")
		}
	case "t":
		d.inText = true
	case "delText", "instrText", "footnotes", "endnotes":
		return dec.Skip()
	case "tab":
		if !d.inPPr {
			d.text("\t")
		}
	case "br", "cr":
		if doc.Xattr(t, "type") != "page" {
			d.text("\n")
		}
	case "noBreakHyphen":
		d.text("-")
	case "hyperlink":
		d.startLink(t)
	default:
		d.startTable(t)
	}
	return nil
}

// end handles a closing tag.
func (d *docxDoc) end(t xml.EndElement) {
	if t.Name.Space != wNS && t.Name.Space != wStrictNS {
		return
	}
	switch t.Name.Local {
	case "p":
		d.pDepth--
		if d.pDepth == 0 {
			d.endParagraph()
		} else if d.pDepth > 0 {
			d.text("\n")
		}
		d.pDepth = max(d.pDepth, 0)
	case "pPr":
		d.inPPr = false
	case "t":
		d.inText = false
	case "hyperlink":
		d.endLink()
	default:
		d.endTable(t)
	}
}

// text appends to the current paragraph, up to the output limit (a
// paragraph larger than the whole output would be cut anyway).
func (d *docxDoc) text(s string) {
	if d.para.Len() <= d.w.Max() {
		d.para.WriteString(s)
	}
}

// startLink remembers where a hyperlink's text starts and, for a link to
// a web page or mail address, its target.
func (d *docxDoc) startLink(t xml.StartElement) {
	d.linkStart, d.linkTarget = d.para.Len(), ""
	if r, ok := d.links[doc.Xattr(t, "id")]; ok && isWebLink(r.Target) {
		d.linkTarget = r.Target
	}
}

// endLink turns the hyperlink's text into a Markdown link.
func (d *docxDoc) endLink() {
	s := d.para.String()
	if d.linkTarget == "" || d.linkStart > len(s) {
		return
	}
	label := s[d.linkStart:]
	if strings.TrimSpace(label) == "" || strings.ContainsAny(label, "[]\n") {
		return
	}
	d.para.Reset()
	d.para.WriteString(s[:d.linkStart] + "[" + label + "](" + d.linkTarget + ")")
	d.linkTarget = ""
}

// isWebLink reports whether target is an http(s) or mailto address.
func isWebLink(target string) bool {
	t := strings.ToLower(target)
	return strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") || strings.HasPrefix(t, "mailto:")
}

// startTable handles the opening tags of tables, rows and cells; a table
// inside a table or a text box is flattened into the enclosing cell.
func (d *docxDoc) startTable(t xml.StartElement) {
	switch t.Name.Local {
	case "tbl":
		d.tblDepth++
		if d.tblDepth == 1 {
			d.flushList()
			d.rows, d.tableSize = nil, 0
		}
	case "tr":
		if d.tblDepth == 1 {
			d.row = nil
		}
	case "tc":
		if d.tblDepth == 1 {
			d.cell.Reset()
			d.span = 1
		}
	case "gridSpan":
		if n, err := strconv.Atoi(doc.Xattr(t, "val")); err == nil && d.tblDepth == 1 && n > 1 && n < 64 {
			d.span = n
		}
	}
}

// endTable handles the closing tags of tables, rows and cells, writing
// the table when the outermost one closes.
func (d *docxDoc) endTable(t xml.EndElement) {
	switch t.Name.Local {
	case "tbl":
		d.tblDepth--
		if d.tblDepth == 0 {
			d.w.Block(doc.Table(d.rows))
			d.rows = nil
		}
		d.tblDepth = max(d.tblDepth, 0)
	case "tr":
		if d.tblDepth == 1 && d.tableSize <= d.w.Max() {
			d.rows = append(d.rows, d.row)
		}
	case "tc":
		if d.tblDepth == 1 {
			c := strings.TrimSpace(d.cell.String())
			d.tableSize += len(c) + 3
			d.row = append(d.row, c)
			for i := 1; i < d.span; i++ {
				d.row = append(d.row, "")
			}
		}
	}
}

// endParagraph writes the finished paragraph: into the table cell it is
// in, or as a heading, a list item or a plain paragraph.
func (d *docxDoc) endParagraph() {
	s := strings.TrimSpace(d.para.String())
	if d.tblDepth > 0 {
		if s != "" {
			if d.cell.Len() > 0 {
				d.cell.WriteString("\n")
			}
			if d.cell.Len() <= d.w.Max() {
				d.cell.WriteString(s)
			}
		}
		return
	}
	if s == "" {
		return
	}
	if lvl := d.headings[d.style]; lvl > 0 {
		d.flushList()
		d.w.Block(strings.Repeat("#", lvl) + " " + strings.Join(strings.Fields(s), " "))
		return
	}
	if d.numID != "" && d.numID != "0" {
		d.listItem(s)
		return
	}
	d.flushList()
	d.w.Block(s)
}

// listItem queues a list item, indented by its level and numbered or
// bulleted as its list's format says.
func (d *docxDoc) listItem(s string) {
	lvl, _ := strconv.Atoi(d.ilvl)
	lvl = min(max(lvl, 0), 8)
	marker := "- "
	if d.numbering.ordered(d.numID, strconv.Itoa(lvl)) {
		c := d.counters[d.numID]
		c[lvl]++
		for i := lvl + 1; i < len(c); i++ {
			c[i] = 0
		}
		d.counters[d.numID] = c
		marker = strconv.Itoa(c[lvl]) + ". "
	}
	pad := strings.Repeat("  ", lvl)
	s = strings.ReplaceAll(s, "\n", "\n"+pad+"  ")
	d.list = append(d.list, pad+marker+s)
}

// flushList writes the queued list items as one block.
func (d *docxDoc) flushList() {
	if len(d.list) > 0 {
		d.w.Block(strings.Join(d.list, "\n"))
		d.list = d.list[:0]
	}
}
