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

// ConvertPPTX converts a PowerPoint deck: each slide in presentation order
// as "## Slide N: title", its text, bullets and tables, then its speaker
// notes.
func ConvertPPTX(ctx context.Context, path string, size int64, lim doc.Limits) (*doc.Doc, error) {
	z, err := doc.OpenZip(path, lim)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	main := z.MainPart("ppt/presentation.xml")
	if !z.Has(main) {
		return nil, fmt.Errorf("%w (no ppt/presentation.xml)", doc.ErrDamaged)
	}
	slides, err := pptxSlideOrder(z, main)
	if err != nil {
		return nil, err
	}
	w := doc.NewWriter(lim.MaxOutput)
	for i, part := range slides {
		if w.Full() {
			break
		}
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		if err := pptxSlide(ctx, z, w, i+1, part); err != nil {
			return nil, err
		}
	}
	return &doc.Doc{Format: doc.PPTX, Markdown: w.String(), Units: len(slides), Cut: w.Full()}, nil
}

// pptxSlideOrder lists the slide parts in the order of the presentation's
// slide list (sldIdLst), which need not be the order of the file names.
func pptxSlideOrder(z *doc.ZipFile, main string) ([]string, error) {
	rs, err := z.RelsOf(main)
	if err != nil {
		return nil, err
	}
	rc, err := z.Open(main)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	dec := xml.NewDecoder(rc)
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w (%s: %v)", doc.ErrDamaged, main, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "sldId" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local == "id" && a.Name.Space != "" && z.Has(rs[a.Value].Target) {
				out = append(out, rs[a.Value].Target)
			}
		}
	}
}

// pptxSlide writes slide n (the part named part) and its notes.
func pptxSlide(ctx context.Context, z *doc.ZipFile, w *doc.Writer, n int, part string) error {
	s, err := parsePPTXPart(ctx, z, part, false)
	if err != nil {
		return err
	}
	head := "## Slide " + strconv.Itoa(n)
	if s.title != "" {
		head += ": " + s.title
	}
	w.Block(head)
	for _, b := range s.blocks {
		w.Block(b)
	}
	rs, err := z.RelsOf(part)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if !strings.HasSuffix(r.Type, "/notesSlide") || !z.Has(r.Target) {
			continue
		}
		notes, err := parsePPTXPart(ctx, z, r.Target, true)
		if err != nil {
			return err
		}
		if len(notes.blocks) > 0 {
			w.Block("Notes:\n" + strings.Join(notes.blocks, "\n\n"))
		}
		break
	}
	return nil
}

// pptxText is what one slide or notes page says: its title and the
// Markdown blocks of its shapes and tables, in document order.
type pptxText struct {
	title  string
	blocks []string
}

// pptxPara is one paragraph of a shape: its text, level and bullet kind.
type pptxPara struct {
	text     strings.Builder
	lvl      int
	bullet   bool // a bullet character is set
	numbered bool // an automatic number is set
	noBullet bool // bullets are turned off
}

// pptxShape is the shape being read: its placeholder kind and paragraphs.
type pptxShape struct {
	ph     bool
	phType string
	paras  []*pptxPara
}

// pptxParser holds the state of a pass over one slide or notes part.
type pptxParser struct {
	out    pptxText
	notes  bool
	shape  *pptxShape
	para   *pptxPara
	inText bool
	max    int
	size   int

	tblDepth int
	rows     [][]string
	row      []string
	cell     strings.Builder
}

// parsePPTXPart reads a slide or notes part.
func parsePPTXPart(ctx context.Context, z *doc.ZipFile, part string, notes bool) (*pptxText, error) {
	rc, err := z.Open(part)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	p := &pptxParser{notes: notes, max: int(min(z.Limit(), 64<<20))}
	dec := xml.NewDecoder(rc)
	for n := 0; ; n++ {
		if n%512 == 0 {
			if err := doc.TimedOut(ctx); err != nil {
				return nil, err
			}
		}
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return &p.out, nil
		}
		if err != nil {
			if errors.Is(err, doc.ErrTooLarge) || errors.Is(err, doc.ErrDamaged) {
				return nil, err
			}
			return nil, fmt.Errorf("%w (%s: %v)", doc.ErrDamaged, part, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space == mcNS && t.Name.Local == "Fallback" {
				if err := dec.Skip(); err != nil {
					return nil, fmt.Errorf("%w (%s: %v)", doc.ErrDamaged, part, err)
				}
				continue
			}
			p.start(t)
		case xml.EndElement:
			p.end(t)
		case xml.CharData:
			if p.inText && p.para != nil && p.size < p.max {
				p.para.text.Write(t)
				p.size += len(t)
			}
		}
	}
}

// start handles an opening tag.
func (p *pptxParser) start(t xml.StartElement) {
	switch t.Name.Local {
	case "sp":
		p.shape = &pptxShape{}
	case "ph":
		if p.shape != nil {
			p.shape.ph, p.shape.phType = true, doc.Xattr(t, "type")
		}
	case "p":
		p.para = &pptxPara{}
	case "pPr":
		if p.para != nil {
			p.para.lvl, _ = strconv.Atoi(doc.Xattr(t, "lvl"))
			p.para.lvl = min(max(p.para.lvl, 0), 8)
		}
	case "buChar":
		if p.para != nil {
			p.para.bullet = true
		}
	case "buAutoNum":
		if p.para != nil {
			p.para.numbered = true
		}
	case "buNone":
		if p.para != nil {
			p.para.noBullet = true
		}
	case "t":
		p.inText = true
	case "br":
		if p.para != nil {
			p.para.text.WriteString("\n")
		}
	case "tbl":
		p.tblDepth++
		if p.tblDepth == 1 {
			p.rows = nil
		}
	case "tr":
		p.row = nil
	case "tc":
		p.cell.Reset()
	}
}

// end handles a closing tag.
func (p *pptxParser) end(t xml.EndElement) {
	switch t.Name.Local {
	case "t":
		p.inText = false
	case "p":
		p.endPara()
	case "sp":
		p.endShape()
	case "tc":
		if p.tblDepth == 1 {
			p.row = append(p.row, strings.TrimSpace(p.cell.String()))
		}
	case "tr":
		if p.tblDepth == 1 {
			p.rows = append(p.rows, p.row)
		}
	case "tbl":
		p.tblDepth--
		if p.tblDepth == 0 {
			if tb := doc.Table(p.rows); tb != "" {
				p.out.blocks = append(p.out.blocks, tb)
			}
		}
		p.tblDepth = max(p.tblDepth, 0)
	}
}

// endPara files the finished paragraph with its table cell or shape.
func (p *pptxParser) endPara() {
	para := p.para
	p.para = nil
	if para == nil {
		return
	}
	if p.tblDepth > 0 {
		if s := strings.TrimSpace(para.text.String()); s != "" {
			if p.cell.Len() > 0 {
				p.cell.WriteString("\n")
			}
			p.cell.WriteString(s)
		}
		return
	}
	if p.shape != nil {
		p.shape.paras = append(p.shape.paras, para)
	}
}

// pptxSkipped are placeholders that repeat what the slide already says
// or say nothing: slide image and number, date, header, footer.
var pptxSkipped = map[string]bool{"sldImg": true, "sldNum": true, "dt": true, "hdr": true, "ftr": true}

// endShape turns the finished shape into the title or a block of text.
func (p *pptxParser) endShape() {
	s := p.shape
	p.shape = nil
	if s == nil || pptxSkipped[s.phType] {
		return
	}
	if s.phType == "title" || s.phType == "ctrTitle" {
		var parts []string
		for _, para := range s.paras {
			parts = append(parts, strings.Fields(para.text.String())...)
		}
		if p.out.title == "" {
			p.out.title = strings.Join(parts, " ")
			return
		}
	}
	body := s.ph && (s.phType == "" || s.phType == "body" || s.phType == "obj") && !p.notes
	if b := pptxBlock(s.paras, body); b != "" {
		p.out.blocks = append(p.out.blocks, b)
	}
}

// pptxBlock renders a shape's paragraphs: bullets as indented list items
// (a body placeholder's paragraphs are bullets unless turned off), other
// paragraphs as plain ones.
func pptxBlock(paras []*pptxPara, body bool) string {
	var b strings.Builder
	var count [9]int
	prevItem := false
	for _, para := range paras {
		s := strings.TrimSpace(para.text.String())
		if s == "" {
			continue
		}
		item := !para.noBullet && (para.bullet || para.numbered || body)
		if b.Len() > 0 {
			b.WriteString(map[bool]string{true: "\n", false: "\n\n"}[item && prevItem])
		}
		prevItem = item
		if !item {
			b.WriteString(s)
			continue
		}
		pad := strings.Repeat("  ", para.lvl)
		marker := "- "
		if para.numbered {
			count[para.lvl]++
			marker = strconv.Itoa(count[para.lvl]) + ". "
		}
		b.WriteString(pad + marker + strings.ReplaceAll(s, "\n", "\n"+pad+"  "))
	}
	return b.String()
}
