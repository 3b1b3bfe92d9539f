#!/usr/bin/env python3
"""Render a report written in Markdown (or a JSON outline) as Word or PDF.

  make_document.py --input report.md --output /mnt/user-data/outputs/report.docx
  make_document.py --input report.md --output /mnt/user-data/outputs/report.pdf

The format follows the output's extension. Word needs python-docx, PDF needs
reportlab (Debian: python3-docx, python3-reportlab). Works offline.
"""
import argparse
import json
import os
import re
import sys

INLINE = re.compile(r"(\*\*[^*]+\*\*|__[^_]+__|\*[^*\s][^*]*\*|_[^_\s][^_]*_|`[^`]+`)")


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- reading: Markdown or JSON -> blocks -----------------------------------
# A block is a tuple: ("h", level, text), ("p", text), ("ul"/"ol", [(level, text)]),
# ("table", rows), ("code", text), ("quote", text), ("img", alt, path), ("hr",).

def spans(text):
    """Split inline Markdown into (text, bold, italic, code) runs."""
    out = []
    for part in INLINE.split(text):
        if not part:
            continue
        if part[:2] in ("**", "__") and part[-2:] == part[:2] and len(part) > 4:
            out.append((part[2:-2], True, False, False))
        elif part[0] == "`" and part[-1] == "`" and len(part) > 2:
            out.append((part[1:-1], False, False, True))
        elif part[0] in "*_" and part[-1] == part[0] and len(part) > 2:
            out.append((part[1:-1], False, True, False))
        else:
            out.append((part, False, False, False))
    return out


def table_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_markdown(text, base):
    blocks, para, lines, i = [], [], text.replace("\r\n", "\n").split("\n"), 0

    def flush():
        if para:
            blocks.append(("p", " ".join(s.strip() for s in para)))
            para.clear()
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*$", s)
        item = re.match(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$", line)
        img = re.match(r"^!\[([^\]]*)\]\(([^)\s]+)\)$", s)
        if s.startswith("```"):
            flush()
            code = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append(("code", "\n".join(code)))
        elif not s:
            flush()
        elif m:
            flush()
            blocks.append(("h", len(m.group(1)), m.group(2)))
        elif re.match(r"^(-{3,}|\*{3,}|_{3,})$", s):
            flush()
            blocks.append(("hr",))
        elif img:
            flush()
            path = img.group(2) if os.path.isabs(img.group(2)) else os.path.join(base, img.group(2))
            blocks.append(("img", img.group(1), path))
        elif s.startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-{2,}", lines[i + 1]):
            flush()
            rows = [table_row(line)]
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(table_row(lines[i]))
                i += 1
            blocks.append(("table", rows))
            continue
        elif item:
            flush()
            kind = "ol" if item.group(2)[0].isdigit() else "ul"
            entry = (len(item.group(1).expandtabs(4)) // 2, item.group(3))
            if blocks and blocks[-1][0] == kind:
                blocks[-1][1].append(entry)
            else:
                blocks.append((kind, [entry]))
        elif s.startswith(">"):
            flush()
            q = s.lstrip(">").strip()
            if blocks and blocks[-1][0] == "quote":
                blocks[-1] = ("quote", blocks[-1][1] + " " + q)
            else:
                blocks.append(("quote", q))
        else:
            para.append(line)
        i += 1
    flush()
    return blocks


def parse_json(o, base):
    """{"title", "subtitle", "author", "sections": [{"heading", "level",
    "paragraphs", "bullets", "numbered", "table", "image", "caption"}]}"""
    if not isinstance(o, dict) or not isinstance(o.get("sections"), list):
        fail("a JSON input needs a \"sections\" list")
    blocks = []
    if o.get("title"):
        blocks.append(("h", 1, str(o["title"])))
    for k in ("subtitle", "author", "date"):
        if o.get(k):
            blocks.append(("p", "*%s*" % o[k]))
    for n, sec in enumerate(o["sections"], 1):
        if not isinstance(sec, dict):
            fail("section %d is not an object" % n)
        if sec.get("heading"):
            blocks.append(("h", int(sec.get("level", 2)), str(sec["heading"])))
        for p in sec.get("paragraphs", []):
            blocks.append(("p", str(p)))
        if sec.get("bullets"):
            blocks.append(("ul", [(0, str(b)) for b in sec["bullets"]]))
        if sec.get("numbered"):
            blocks.append(("ol", [(0, str(b)) for b in sec["numbered"]]))
        if sec.get("table"):
            rows = sec["table"]
            if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                fail("section %d: table must be a list of rows (lists)" % n)
            blocks.append(("table", [[str(c) for c in r] for r in rows]))
        if sec.get("image"):
            p = sec["image"] if os.path.isabs(sec["image"]) else os.path.join(base, sec["image"])
            blocks.append(("img", str(sec.get("caption", "")), p))
    return blocks


def read_blocks(path):
    if not os.path.isfile(path):
        fail("no such file: %s" % path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail("cannot read %s as UTF-8 text: %s" % (path, e))
    base = os.path.dirname(os.path.abspath(path))
    if path.lower().endswith(".json"):
        try:
            blocks = parse_json(json.loads(text), base)
        except ValueError as e:
            fail("%s is not valid JSON: %s" % (path, e))
    else:
        blocks = parse_markdown(text, base)
    if not blocks:
        fail("%s has no content" % path)
    for b in blocks:
        if b[0] == "img" and not os.path.isfile(b[2]):
            fail("the image %s does not exist" % b[2])
    return blocks


# ---- Word --------------------------------------------------------------------

def add_runs(par, text):
    for t, bold, italic, code in spans(text):
        r = par.add_run(t)
        r.bold, r.italic = bold or None, italic or None
        if code:
            r.font.name = "Courier New"


def write_docx(blocks, out, title):
    try:
        import docx
        from docx.shared import Inches, Pt
    except ImportError:
        fail("Word output needs python-docx (Debian: apt-get install python3-docx)")
    d = docx.Document()
    d.core_properties.title = title
    d.styles["Normal"].font.size = Pt(11)
    for b in blocks:
        kind = b[0]
        if kind == "h":
            h = d.add_heading(level=0 if b[1] == 1 and b is blocks[0] else min(b[1], 4))
            add_runs(h, b[2])
        elif kind == "p":
            add_runs(d.add_paragraph(), b[1])
        elif kind in ("ul", "ol"):
            base = "List Bullet" if kind == "ul" else "List Number"
            for level, text in b[1]:
                add_runs(d.add_paragraph(style=base + ("" if level == 0 else " %d" % min(level + 1, 3))), text)
        elif kind == "table":
            rows = b[1]
            width = max(len(r) for r in rows)
            t = d.add_table(rows=len(rows), cols=width)
            t.style = "Table Grid"
            for i, row in enumerate(rows):
                for j in range(width):
                    cell = t.cell(i, j).paragraphs[0]
                    add_runs(cell, row[j] if j < len(row) else "")
                    if i == 0:
                        for r in cell.runs:
                            r.bold = True
            d.add_paragraph()
        elif kind == "code":
            p = d.add_paragraph()
            r = p.add_run(b[1])
            r.font.name, r.font.size = "Courier New", Pt(9)
        elif kind == "quote":
            add_runs(d.add_paragraph(style="Quote"), b[1])
        elif kind == "img":
            try:
                d.add_picture(b[2], width=Inches(6))
            except Exception as e:
                fail("cannot place the image %s: %s" % (b[2], e))
            if b[1]:
                add_runs(d.add_paragraph(style="Caption"), b[1])
        elif kind == "hr":
            d.add_page_break()
    d.save(out)


# ---- PDF ---------------------------------------------------------------------

def pdf_markup(text, mono):
    parts = []
    for t, bold, italic, code in spans(text):
        t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if code:
            t = '<font face="%s">%s</font>' % (mono, t)
        if bold:
            t = "<b>%s</b>" % t
        if italic:
            t = "<i>%s</i>" % t
        parts.append(t)
    return "".join(parts)


def pdf_fonts():
    """DejaVu (for text beyond Latin-1) when installed, else Helvetica."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.lib.fonts import addMapping
    d = "/usr/share/fonts/truetype/dejavu/"
    files = {"DejaVuSans": "DejaVuSans.ttf", "DejaVuSans-Bold": "DejaVuSans-Bold.ttf",
             "DejaVuSans-Oblique": "DejaVuSans-Oblique.ttf", "DejaVuSans-BoldOblique": "DejaVuSans-BoldOblique.ttf",
             "DejaVuSansMono": "DejaVuSansMono.ttf"}
    if not all(os.path.isfile(d + f) for f in files.values()):
        return "Helvetica", "Helvetica-Bold", "Courier"
    for name, f in files.items():
        pdfmetrics.registerFont(TTFont(name, d + f))
    addMapping("DejaVuSans", 0, 0, "DejaVuSans")
    addMapping("DejaVuSans", 1, 0, "DejaVuSans-Bold")
    addMapping("DejaVuSans", 0, 1, "DejaVuSans-Oblique")
    addMapping("DejaVuSans", 1, 1, "DejaVuSans-BoldOblique")
    return "DejaVuSans", "DejaVuSans-Bold", "DejaVuSansMono"


def pdf_flowables(blocks, st, mono):
    from reportlab.lib import colors
    from reportlab.lib.units import cm
    from reportlab.platypus import (Image, ListFlowable, ListItem, PageBreak, Paragraph, Preformatted,
                                    Spacer, Table, TableStyle)
    story = []
    for b in blocks:
        kind = b[0]
        if kind == "h":
            story.append(Paragraph(pdf_markup(b[2], mono), st["Title" if b[1] == 1 and b is blocks[0] else "Heading%d" % min(b[1], 4)]))
        elif kind == "p":
            story.append(Paragraph(pdf_markup(b[1], mono), st["BodyText"]))
        elif kind in ("ul", "ol"):
            items = [ListItem(Paragraph(pdf_markup(t, mono), st["BodyText"]), leftIndent=18 + 18 * lvl) for lvl, t in b[1]]
            if kind == "ul":
                story.append(ListFlowable(items, bulletType="bullet"))
            else:
                story.append(ListFlowable(items, bulletType="1", start=1, bulletFormat="%s."))
        elif kind == "table":
            width = max(len(r) for r in b[1])
            rows = [[Paragraph(pdf_markup(r[j] if j < len(r) else "", mono), st["BodyText"]) for j in range(width)] for r in b[1]]
            t = Table(rows, repeatRows=1, hAlign="LEFT")
            t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.grey),
                                   ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#DCE6F1")),
                                   ("VALIGN", (0, 0), (-1, -1), "TOP")]))
            story += [t, Spacer(1, 8)]
        elif kind == "code":
            story.append(Preformatted(b[1], st["Code"]))
        elif kind == "quote":
            story.append(Paragraph(pdf_markup(b[1], mono), st["Quote"]))
        elif kind == "img":
            img = Image(b[2])
            scale = min(1.0, 16 * cm / img.imageWidth)
            img.drawWidth, img.drawHeight = img.imageWidth * scale, img.imageHeight * scale
            story.append(img)
            if b[1]:
                story.append(Paragraph(pdf_markup(b[1], mono), st["Caption"]))
        elif kind == "hr":
            story.append(PageBreak())
    return story


def write_pdf(blocks, out, title):
    try:
        from reportlab.lib.pagesizes import A4
        from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
        from reportlab.lib.units import cm
        from reportlab.platypus import SimpleDocTemplate
    except ImportError:
        fail("PDF output needs reportlab (Debian: apt-get install python3-reportlab)")
    body, bold, mono = pdf_fonts()
    st = getSampleStyleSheet()
    for name in ("Title", "Heading1", "Heading2", "Heading3", "Heading4"):
        st[name].fontName = bold
    st["BodyText"].fontName, st["BodyText"].leading, st["BodyText"].spaceAfter = body, 14, 6
    st["Code"].fontName = mono
    st.add(ParagraphStyle("Quote", parent=st["BodyText"], leftIndent=18, textColor="#555555"))
    st.add(ParagraphStyle("Caption", parent=st["BodyText"], fontSize=9, textColor="#555555", alignment=1))

    def footer(canvas, doc):
        canvas.saveState()
        canvas.setFont(body, 8)
        canvas.drawRightString(A4[0] - 2 * cm, 1.2 * cm, "%s - page %d" % (title, doc.page))
        canvas.restoreState()
    doc = SimpleDocTemplate(out, pagesize=A4, title=title, leftMargin=2 * cm, rightMargin=2 * cm,
                            topMargin=2 * cm, bottomMargin=2 * cm)
    doc.build(pdf_flowables(blocks, st, mono), onFirstPage=footer, onLaterPages=footer)


def main(argv=None):
    p = argparse.ArgumentParser(description="Render Markdown or a JSON outline as .docx or .pdf.")
    p.add_argument("--input", required=True, help="a .md file, or a .json outline (see SKILL.md)")
    p.add_argument("--output", required=True, help="a .docx or .pdf path")
    p.add_argument("--title", help="document title (default: the first heading)")
    args = p.parse_args(argv)
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in (".docx", ".pdf"):
        fail("--output must end in .docx or .pdf")
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        fail("the output folder does not exist: %s" % os.path.dirname(args.output))
    blocks = read_blocks(args.input)
    title = args.title or next((b[2] for b in blocks if b[0] == "h"), os.path.basename(args.input))
    tmp = args.output + ".part" + ext
    (write_docx if ext == ".docx" else write_pdf)(blocks, tmp, title)
    os.replace(tmp, args.output)
    print("wrote %s (%d blocks, title %r)" % (args.output, len(blocks), title))
    print("next: present it with present_files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
