package pdf

import (
	"context"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// pdfContent runs a page's content stream and collects the text it shows,
// placed on the page. Only the operators that move or show text, or change
// the transformation, are followed; text in form XObjects is not seen.
type pdfContent struct {
	ctx      context.Context
	page     pdf.Page
	fonts    map[string]*pdfFont
	maxBytes int

	runs  []pdfRun
	bytes int
	ops   int

	ctm, tm, tlm pdfMat
	stack        []pdfMat
	font         *pdfFont
	size         float64 // Tfs
	charSp       float64 // Tc
	wordSp       float64 // Tw
	hscale       float64 // Th
	leading      float64 // TL
	rise         float64 // Ts
}

// errPDFStop stops a page's content stream early (ctx ended, or the page
// produced more text than can be kept).
type errPDFStop struct{ why string }

func (g *pdfContent) walk() {
	if g.page.V.Key("Contents").IsNull() {
		return
	}
	g.ctm, g.tm, g.tlm, g.hscale = pdfIdentity, pdfIdentity, pdfIdentity, 1
	pdf.Interpret(g.page.V.Key("Contents"), g.op)
}

// op executes one content-stream operator.
func (g *pdfContent) op(stk *pdf.Stack, op string) {
	args := make([]pdf.Value, stk.Len())
	for i := len(args) - 1; i >= 0; i-- {
		args[i] = stk.Pop()
	}
	if g.ops++; g.ops%4096 == 0 && g.ctx.Err() != nil {
		panic(errPDFStop{"deadline"})
	}
	switch op {
	case "q":
		if len(g.stack) < 1024 {
			g.stack = append(g.stack, g.ctm)
		}
	case "Q":
		if n := len(g.stack); n > 0 {
			g.ctm, g.stack = g.stack[n-1], g.stack[:n-1]
		}
	case "cm":
		if m, ok := pdfMatArg(args); ok {
			g.ctm = m.mul(g.ctm)
		}
	case "BT":
		g.tm, g.tlm = pdfIdentity, pdfIdentity
	case "Tm":
		if m, ok := pdfMatArg(args); ok {
			g.tm, g.tlm = m, m
		}
	case "Td", "TD":
		if len(args) == 2 {
			if op == "TD" {
				g.leading = -args[1].Float64()
			}
			g.tlm = pdfTranslate(args[0].Float64(), args[1].Float64()).mul(g.tlm)
			g.tm = g.tlm
		}
	case "T*":
		g.nextLine()
	default:
		g.stateOp(args, op)
	}
}

// stateOp handles the text state and text showing operators.
func (g *pdfContent) stateOp(args []pdf.Value, op string) {
	if len(args) == 0 {
		return
	}
	last := args[len(args)-1]
	switch op {
	case "Tf":
		if len(args) == 2 {
			g.font = g.loadFont(args[0].Name())
			g.size = last.Float64()
		}
	case "Tc":
		g.charSp = last.Float64()
	case "Tw":
		g.wordSp = last.Float64()
	case "Tz":
		g.hscale = last.Float64() / 100
	case "TL":
		g.leading = last.Float64()
	case "Ts":
		g.rise = last.Float64()
	case "Tj":
		g.show(last.RawString())
	case "'", "\"":
		if op == "\"" && len(args) == 3 {
			g.wordSp, g.charSp = args[0].Float64(), args[1].Float64()
		}
		g.nextLine()
		g.show(last.RawString())
	case "TJ":
		for i := 0; i < last.Len(); i++ {
			if v := last.Index(i); v.Kind() == pdf.String {
				g.show(v.RawString())
			} else {
				g.advance(-v.Float64() / 1000 * g.size * g.hscale)
			}
		}
	}
}

func (g *pdfContent) nextLine() {
	g.tlm = pdfTranslate(0, -g.leading).mul(g.tlm)
	g.tm = g.tlm
}

// advance moves the text position tx text-space units to the right.
func (g *pdfContent) advance(tx float64) { g.tm = pdfTranslate(tx, 0).mul(g.tm) }

// show decodes raw with the current font and records it as a run, moving
// the text position past it. A font without widths (a CID font here)
// advances half an em per character, which is enough to order runs.
func (g *pdfContent) show(raw string) {
	if g.font == nil || raw == "" {
		return
	}
	trm := pdfMat{g.size * g.hscale, 0, 0, g.size, 0, g.rise}.mul(g.tm).mul(g.ctm)
	s := g.font.enc.Decode(raw)
	run := pdfRun{s: s, x: trm[4], y: trm[5], size: g.tm.mul(g.ctm).scaleY() * g.size}
	if g.font.widths {
		for i := 0; i < len(raw); i++ {
			w := g.font.font.Width(int(raw[i]))/1000*g.size + g.charSp
			if raw[i] == ' ' {
				w += g.wordSp
			}
			g.advance(w * g.hscale)
		}
	} else {
		run.approxWidth = true
		g.advance((0.5*g.size + g.charSp) * float64(utf8.RuneCountInString(s)) * g.hscale)
	}
	end := pdfMat{1, 0, 0, 1, 0, g.rise}.mul(g.tm).mul(g.ctm)
	run.x1 = end[4]
	if run.size <= 0 {
		run.size = 1
	}
	g.runs = append(g.runs, run)
	if g.bytes += len(s); g.bytes > g.maxBytes {
		panic(errPDFStop{"output limit"})
	}
}

// loadFont is the page's font resource name, parsed once per page; an
// unknown name gets a pass-through decoder.
func (g *pdfContent) loadFont(name string) *pdfFont {
	if f, ok := g.fonts[name]; ok {
		return f
	}
	f := &pdfFont{font: g.page.Font(name)}
	f.enc = f.font.Encoder()
	if f.enc == nil {
		f.enc = pdfPassThrough{}
	}
	f.widths = f.font.V.Key("Widths").Len() > 0
	g.fonts[name] = f
	return f
}

// pdfPassThrough decodes bytes as Latin-1, for fonts the library can't map.
type pdfPassThrough struct{}

func (pdfPassThrough) Decode(raw string) string {
	r := make([]rune, len(raw))
	for i := 0; i < len(raw); i++ {
		r[i] = rune(raw[i])
	}
	return string(r)
}

// pdfMatArg reads six numbers as a matrix.
func pdfMatArg(args []pdf.Value) (pdfMat, bool) {
	if len(args) != 6 {
		return pdfMat{}, false
	}
	var m pdfMat
	for i := range m {
		m[i] = args[i].Float64()
	}
	return m, true
}
