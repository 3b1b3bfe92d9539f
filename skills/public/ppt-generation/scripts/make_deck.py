#!/usr/bin/env python3
"""Build a PowerPoint deck (.pptx) from a JSON outline.

  make_deck.py --outline deck.json --output /mnt/user-data/outputs/deck.pptx

The deck is written with the standard library only (zipfile + Office Open
XML), so it needs nothing installed; a "chart" slide needs matplotlib.
See the SKILL.md beside this folder for the outline format.
"""
import argparse
import importlib.util
import json
import os
import struct
import sys
import tempfile
import zipfile
from datetime import datetime, timezone
from xml.sax.saxutils import escape

EMU = 914400  # per inch
SIZES = {"16:9": (12192000, 6858000), "4:3": (9144000, 6858000)}
NS = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
      'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
      'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"')
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument.presentationml."
XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def matplotlib_env():
    """A writable config dir, and the default matplotlibrc when Debian's
    /etc/matplotlibrc is not visible (as in a sandbox showing only /usr)."""
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(tempfile.gettempdir(), "matplotlib"))
    if "MATPLOTLIBRC" in os.environ or os.path.exists("/etc/matplotlibrc"):
        return
    spec = importlib.util.find_spec("matplotlib")
    pkg = list(spec.submodule_search_locations or []) if spec else []
    dirs = ["/usr/share/matplotlib/mpl-data"] + [os.path.join(p, "mpl-data") for p in pkg]
    for d in dirs:
        if os.path.isfile(os.path.join(d, "matplotlibrc")):
            os.environ["MATPLOTLIBRC"] = d
            return


def hex_colour(value, default):
    v = str(value or default).lstrip("#")
    if len(v) != 6 or any(c not in "0123456789abcdefABCDEF" for c in v):
        fail("colour %r must be six hex digits like 1F4E79" % value)
    return v.upper()


# ---- outline -------------------------------------------------------------

def load_outline(path):
    if not os.path.isfile(path):
        fail("no such outline file: %s" % path)
    try:
        with open(path, encoding="utf-8") as f:
            o = json.load(f)
    except (OSError, ValueError) as e:
        fail("the outline is not valid JSON: %s" % e)
    if not isinstance(o, dict):
        fail("the outline must be a JSON object with a title and slides")
    if not str(o.get("title", "")).strip():
        fail("the outline has no title")
    slides = o.get("slides")
    if not isinstance(slides, list) or not slides:
        fail("the outline needs a non-empty \"slides\" list")
    for i, s in enumerate(slides, 1):
        if not isinstance(s, dict) or not str(s.get("title", "")).strip():
            fail("slide %d has no title" % i)
        if "bullets" in s and not isinstance(s["bullets"], list):
            fail("slide %d: bullets must be a list" % i)
        if s.get("image") and not os.path.isfile(s["image"]):
            fail("slide %d: no such image file: %s" % (i, s["image"]))
        if s.get("layout") not in (None, "bullets", "section", "picture"):
            fail("slide %d: unknown layout %r (bullets, section or picture)" % (i, s["layout"]))
        if s.get("layout") == "picture" and not (s.get("image") or s.get("chart")):
            fail("slide %d: a picture slide needs an \"image\" or a \"chart\"" % i)
        if s.get("chart") is not None and not isinstance(s["chart"], dict):
            fail("slide %d: chart must be an object with categories and series" % i)
    return o


def flatten(bullets, level=0):
    """Bullets are strings; a list right after a string holds its sub-points."""
    out = []
    for b in bullets:
        if isinstance(b, list):
            out.extend(flatten(b, min(level + 1, 4)))
        elif isinstance(b, dict):
            out.append((int(b.get("level", level)), str(b.get("text", ""))))
        else:
            out.append((level, str(b)))
    return out


def image_size(path):
    """(width, height) in pixels of a PNG or JPEG, and its extension."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        w, h = struct.unpack(">II", data[16:24])
        return w, h, "png"
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            length = struct.unpack(">H", data[i + 2:i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                return w, h, "jpeg"
            i += 2 + length
    fail("%s is not a PNG or JPEG image" % path)


def render_chart(spec, n):
    """Draw a chart spec to a temporary PNG with matplotlib."""
    matplotlib_env()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("slide %d: a chart needs matplotlib (apt-get install python3-matplotlib); or give an image" % n)
    cats = spec.get("categories") or []
    series = spec.get("series") or {}
    if not cats or not isinstance(series, dict) or not series:
        fail("slide %d: a chart needs \"categories\" and a \"series\" object of name -> numbers" % n)
    fig, ax = plt.subplots(figsize=(10, 5.2))
    kind = spec.get("type", "bar")
    width = 0.8 / len(series)
    for k, (name, values) in enumerate(series.items()):
        if not isinstance(values, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            fail("slide %d: series %r must be a list of numbers" % (n, name))
        if len(values) != len(cats):
            fail("slide %d: series %r has %d values for %d categories" % (n, name, len(values), len(cats)))
        if kind == "line":
            ax.plot(cats, values, marker="o", label=name)
        else:
            ax.bar([i + k * width for i in range(len(cats))], values, width, label=name)
    if kind != "line":
        ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(cats))], cats)
    ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        ax.legend()
    if spec.get("ylabel"):
        ax.set_ylabel(spec["ylabel"])
    fig.tight_layout()
    out = os.path.join(tempfile.mkdtemp(), "chart%d.png" % n)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return out


# ---- XML parts -----------------------------------------------------------

def run(text, size=None, bold=False, colour=None):
    attrs = ' lang="en-US"' + (' sz="%d"' % (size * 100) if size else "") + (' b="1"' if bold else "")
    fill = '<a:solidFill><a:srgbClr val="%s"/></a:solidFill>' % colour if colour else ""
    return '<a:r><a:rPr%s dirty="0">%s</a:rPr><a:t>%s</a:t></a:r>' % (attrs, fill, escape(text))


def xfrm(x, y, w, h):
    return '<a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm>' % (x, y, w, h)


def placeholder(sid, name, ph, box, paras, anchor="t"):
    body = "".join(paras) or '<a:p><a:endParaRPr lang="en-US"/></a:p>'
    return ('<p:sp><p:nvSpPr><p:cNvPr id="%d" name="%s"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>'
            '<p:nvPr>%s</p:nvPr></p:nvSpPr><p:spPr>%s</p:spPr>'
            '<p:txBody><a:bodyPr anchor="%s"><a:normAutofit/></a:bodyPr><a:lstStyle/>%s</p:txBody></p:sp>'
            % (sid, name, ph, xfrm(*box), anchor, body))


def slide_xml(shapes, bg=None):
    bgxml = '<p:bg><p:bgPr><a:solidFill><a:srgbClr val="%s"/></a:solidFill><a:effectLst/></p:bgPr></p:bg>' % bg if bg else ""
    return (XML_HEAD + '<p:sld %s><p:cSld>%s<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
            '<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>'
            '%s</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>' % (NS, bgxml, "".join(shapes)))


def title_slide(o, W, H, accent):
    t = placeholder(2, "Title 1", '<p:ph type="ctrTitle"/>', (EMU // 2, int(H * 0.30), W - EMU, int(H * 0.22)),
                    ['<a:p><a:pPr algn="ctr"/>%s</a:p>' % run(o["title"], 40, True, "FFFFFF")], "b")
    sub = [x for x in (o.get("subtitle"), o.get("author"), o.get("date")) if x]
    s = placeholder(3, "Subtitle 2", '<p:ph type="subTitle" idx="1"/>', (EMU, int(H * 0.56), W - 2 * EMU, int(H * 0.2)),
                    ['<a:p><a:pPr marL="0" indent="0" algn="ctr"><a:buNone/></a:pPr>%s</a:p>' % run(str(x), 20, False, "DDE6F0") for x in sub])
    return slide_xml([t, s], bg=accent)


def title_shape(title, W, accent):
    return placeholder(2, "Title 1", '<p:ph type="title"/>', (int(EMU * 0.5), int(EMU * 0.3), W - EMU, int(EMU * 1.0)),
                       ['<a:p>%s</a:p>' % run(title, 30, True, accent)], "b")


def bullet_slide(s, W, H, accent):
    paras = []
    for level, text in flatten(s.get("bullets", [])):
        size = 22 if level == 0 else 18
        paras.append('<a:p><a:pPr marL="%d" lvl="%d" indent="-285750"><a:spcBef><a:spcPts val="%d"/></a:spcBef>'
                     '<a:buFont typeface="Arial"/><a:buChar char="%s"/></a:pPr>%s</a:p>'
                     % (342900 + level * 457200, level, 1200 if level == 0 else 400, "\u2022" if level == 0 else "\u2013", run(text, size)))
    body = placeholder(3, "Content 2", '<p:ph idx="1"/>', (int(EMU * 0.6), int(EMU * 1.5), W - int(EMU * 1.2), H - int(EMU * 2.0)), paras)
    return slide_xml([title_shape(s["title"], W, accent), body])


def section_slide(s, W, H, accent):
    t = placeholder(2, "Title 1", '<p:ph type="title"/>', (EMU // 2, int(H * 0.38), W - EMU, int(H * 0.2)),
                    ['<a:p><a:pPr algn="ctr"/>%s</a:p>' % run(s["title"], 36, True, accent)], "ctr")
    return slide_xml([t])


def picture_slide(s, W, H, accent, rid, img):
    pw, ph_, _ = img
    top, bottom = int(EMU * 1.45), int(EMU * (0.75 if s.get("caption") else 0.35))
    box_w, box_h = W - EMU, H - top - bottom
    scale = min(box_w / pw, box_h / ph_)
    cx, cy = int(pw * scale), int(ph_ * scale)
    x, y = (W - cx) // 2, top + (box_h - cy) // 2
    pic = ('<p:pic><p:nvPicPr><p:cNvPr id="3" name="Picture 2" descr="%s"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr>'
           '<p:blipFill><a:blip r:embed="%s"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>'
           '<p:spPr>%s<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>'
           % (escape(s.get("caption") or s["title"], {'"': "&quot;"}), rid, xfrm(x, y, cx, cy)))
    shapes = [title_shape(s["title"], W, accent), pic]
    if s.get("caption"):
        shapes.append('<p:sp><p:nvSpPr><p:cNvPr id="4" name="Caption 3"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
                      '<p:spPr>%s<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/>'
                      '<a:p><a:pPr algn="ctr"/>%s</a:p></p:txBody></p:sp>'
                      % (xfrm(EMU // 2, H - int(EMU * 0.65), W - EMU, int(EMU * 0.45)), run(s["caption"], 14, False, "555555")))
    return slide_xml(shapes)


# ---- the fixed parts: theme, master, layouts -----------------------------

def theme_xml(accent, font):
    colours = [("dk1", '<a:sysClr val="windowText" lastClr="000000"/>'), ("lt1", '<a:sysClr val="window" lastClr="FFFFFF"/>'),
               ("dk2", '<a:srgbClr val="1F2A36"/>'), ("lt2", '<a:srgbClr val="E7E6E6"/>'),
               ("accent1", '<a:srgbClr val="%s"/>' % accent), ("accent2", '<a:srgbClr val="ED7D31"/>'),
               ("accent3", '<a:srgbClr val="A5A5A5"/>'), ("accent4", '<a:srgbClr val="FFC000"/>'),
               ("accent5", '<a:srgbClr val="5B9BD5"/>'), ("accent6", '<a:srgbClr val="70AD47"/>'),
               ("hlink", '<a:srgbClr val="0563C1"/>'), ("folHlink", '<a:srgbClr val="954F72"/>')]
    scheme = "".join("<a:%s>%s</a:%s>" % (k, v, k) for k, v in colours)
    fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
    line = '<a:ln w="%d"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln>'
    return (XML_HEAD + '<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Deck">'
            '<a:themeElements><a:clrScheme name="Deck">%s</a:clrScheme>'
            '<a:fontScheme name="Deck"><a:majorFont><a:latin typeface="%s"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>'
            '<a:minorFont><a:latin typeface="%s"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>'
            '<a:fmtScheme name="Deck"><a:fillStyleLst>%s</a:fillStyleLst><a:lnStyleLst>%s</a:lnStyleLst>'
            '<a:effectStyleLst>%s</a:effectStyleLst><a:bgFillStyleLst>%s</a:bgFillStyleLst></a:fmtScheme>'
            '</a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>'
            % (scheme, font, font, fill * 3, "".join(line % w for w in (6350, 12700, 19050)),
               "<a:effectStyle><a:effectLst/></a:effectStyle>" * 3, fill * 3))


def master_xml(layouts):
    ids = "".join('<p:sldLayoutId id="%d" r:id="rId%d"/>' % (2147483649 + i, i + 1) for i in range(layouts))
    lvl = ('<a:lvl1pPr marL="342900" indent="-342900"><a:buFont typeface="Arial"/><a:buChar char="\u2022"/>'
           '<a:defRPr sz="2200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/></a:defRPr></a:lvl1pPr>')
    return (XML_HEAD + '<p:sldMaster %s><p:cSld><p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg>'
            '<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
            '%s%s</p:spTree></p:cSld>'
            '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" '
            'accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>'
            '<p:sldLayoutIdLst>%s</p:sldLayoutIdLst>'
            '<p:txStyles><p:titleStyle><a:lvl1pPr><a:defRPr sz="3200"><a:solidFill><a:schemeClr val="tx2"/></a:solidFill>'
            '<a:latin typeface="+mj-lt"/></a:defRPr></a:lvl1pPr></p:titleStyle><p:bodyStyle>%s</p:bodyStyle>'
            '<p:otherStyle><a:lvl1pPr><a:defRPr sz="1800"/></a:lvl1pPr></p:otherStyle></p:txStyles></p:sldMaster>'
            % (NS, placeholder(2, "Title Placeholder 1", '<p:ph type="title"/>', (457200, 274320, 11277600, 914400), []),
               placeholder(3, "Text Placeholder 2", '<p:ph type="body" idx="1"/>', (548640, 1371600, 11094720, 4937760), []),
               ids, lvl))


def layout_xml(kind):
    names = {"title": ("Title Slide", '<p:ph type="ctrTitle"/>', '<p:ph type="subTitle" idx="1"/>'),
             "content": ("Title and Content", '<p:ph type="title"/>', '<p:ph idx="1"/>'),
             "titleOnly": ("Title Only", '<p:ph type="title"/>', None)}
    name, t, b = names[kind]
    shapes = placeholder(2, "Title 1", t, (457200, 274320, 11277600, 914400), [])
    if b:
        shapes += placeholder(3, "Body 2", b, (548640, 1371600, 11094720, 4937760), [])
    return (XML_HEAD + '<p:sldLayout %s type="%s" preserve="1"><p:cSld name="%s"><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/>'
            '<p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>%s</p:spTree></p:cSld>'
            '<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>'
            % (NS, {"title": "title", "content": "obj", "titleOnly": "titleOnly"}[kind], name, shapes))


def rels(items):
    return (XML_HEAD + '<Relationships xmlns="%s">' % PKG_REL
            + "".join('<Relationship Id="%s" Type="%s" Target="%s"/>' % (i, t if t.startswith("http") else REL + t, escape(g))
                      for i, t, g in items) + "</Relationships>")


LAYOUTS = ["title", "content", "titleOnly"]


def build(o, out):
    W, H = SIZES.get(o.get("aspect", "16:9")) or fail("aspect must be 16:9 or 4:3")
    accent = hex_colour(o.get("accent"), "1F4E79")
    font = str(o.get("font") or "Calibri")
    parts = {}   # name -> bytes or str
    types = []   # (part, content type)
    media = 0
    slides = [("title", o)] + [(s.get("layout") or ("picture" if s.get("image") or s.get("chart") else "bullets"), s) for s in o["slides"]]
    for n, (kind, s) in enumerate(slides, 1):
        srels = [("rId1", "slideLayout", "../slideLayouts/slideLayout%d.xml" % (1 if kind == "title" else 2 if kind == "bullets" else 3))]
        if kind == "title":
            xml = title_slide(o, W, H, accent)
        elif kind == "section":
            xml = section_slide(s, W, H, accent)
        elif kind == "picture":
            path = s.get("image") or render_chart(s["chart"], n - 1)
            img = image_size(path)
            media += 1
            target = "media/image%d.%s" % (media, "png" if img[2] == "png" else "jpeg")
            with open(path, "rb") as f:
                parts["ppt/" + target] = f.read()
            srels.append(("rId2", "image", "../" + target))
            xml = picture_slide(s, W, H, accent, "rId2", img)
        elif kind == "bullets":
            xml = bullet_slide(s, W, H, accent)
        else:
            fail("slide %d: unknown layout %r (bullets, section or picture)" % (n - 1, kind))
        parts["ppt/slides/slide%d.xml" % n] = xml
        parts["ppt/slides/_rels/slide%d.xml.rels" % n] = rels(srels)
        types.append(("/ppt/slides/slide%d.xml" % n, CT + "slide+xml"))
    count = len(slides)
    for i, kind in enumerate(LAYOUTS, 1):
        parts["ppt/slideLayouts/slideLayout%d.xml" % i] = layout_xml(kind)
        parts["ppt/slideLayouts/_rels/slideLayout%d.xml.rels" % i] = rels([("rId1", "slideMaster", "../slideMasters/slideMaster1.xml")])
        types.append(("/ppt/slideLayouts/slideLayout%d.xml" % i, CT + "slideLayout+xml"))
    parts["ppt/slideMasters/slideMaster1.xml"] = master_xml(len(LAYOUTS))
    parts["ppt/slideMasters/_rels/slideMaster1.xml.rels"] = rels(
        [("rId%d" % i, "slideLayout", "../slideLayouts/slideLayout%d.xml" % i) for i in range(1, len(LAYOUTS) + 1)]
        + [("rId%d" % (len(LAYOUTS) + 1), "theme", "../theme/theme1.xml")])
    parts["ppt/theme/theme1.xml"] = theme_xml(accent, font)
    parts["ppt/presentation.xml"] = (
        XML_HEAD + '<p:presentation %s saveSubsetFonts="1"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
        '<p:sldIdLst>%s</p:sldIdLst><p:sldSz cx="%d" cy="%d"/><p:notesSz cx="6858000" cy="9144000"/>'
        '<p:defaultTextStyle><a:lvl1pPr><a:defRPr lang="en-US"/></a:lvl1pPr></p:defaultTextStyle></p:presentation>'
        % (NS, "".join('<p:sldId id="%d" r:id="rId%d"/>' % (255 + n, n + 1) for n in range(1, count + 1)), W, H))
    parts["ppt/_rels/presentation.xml.rels"] = rels(
        [("rId1", "slideMaster", "slideMasters/slideMaster1.xml")]
        + [("rId%d" % (n + 1), "slide", "slides/slide%d.xml" % n) for n in range(1, count + 1)]
        + [("rId%d" % (count + 2), "theme", "theme/theme1.xml"), ("rId%d" % (count + 3), "presProps", "presProps.xml"),
           ("rId%d" % (count + 4), "viewProps", "viewProps.xml"), ("rId%d" % (count + 5), "tableStyles", "tableStyles.xml")])
    parts["ppt/presProps.xml"] = XML_HEAD + '<p:presentationPr %s/>' % NS
    parts["ppt/viewProps.xml"] = XML_HEAD + '<p:viewPr %s><p:gridSpacing cx="76200" cy="76200"/></p:viewPr>' % NS
    parts["ppt/tableStyles.xml"] = XML_HEAD + '<a:tblStyleLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" def="{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}"/>'
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    parts["docProps/core.xml"] = (
        XML_HEAD + '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>%s</dc:title><dc:creator>%s</dc:creator>'
        '<dcterms:created xsi:type="dcterms:W3CDTF">%s</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">%s</dcterms:modified>'
        '</cp:coreProperties>' % (escape(o["title"]), escape(str(o.get("author") or "deerflow")), now, now))
    parts["docProps/app.xml"] = (
        XML_HEAD + '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
        '<Application>deerflow ppt-generation</Application><Slides>%d</Slides></Properties>' % count)
    parts["_rels/.rels"] = rels([("rId1", "officeDocument", "ppt/presentation.xml"),
                                 ("rId2", "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties", "docProps/core.xml"),
                                 ("rId3", "extended-properties", "docProps/app.xml")])
    types += [("/ppt/presentation.xml", CT + "presentation.main+xml"), ("/ppt/slideMasters/slideMaster1.xml", CT + "slideMaster+xml"),
              ("/ppt/theme/theme1.xml", "application/vnd.openxmlformats-officedocument.theme+xml"),
              ("/ppt/presProps.xml", CT + "presProps+xml"), ("/ppt/viewProps.xml", CT + "viewProps+xml"),
              ("/ppt/tableStyles.xml", CT + "tableStyles+xml"),
              ("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml"),
              ("/docProps/app.xml", "application/vnd.openxmlformats-officedocument.extended-properties+xml")]
    ct = (XML_HEAD + '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
          '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>'
          '<Default Extension="jpeg" ContentType="image/jpeg"/>'
          + "".join('<Override PartName="%s" ContentType="%s"/>' % t for t in types) + "</Types>")
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", ct)
        for name, data in parts.items():
            z.writestr(name, data)
    os.replace(tmp, out)
    return count


def main(argv=None):
    p = argparse.ArgumentParser(description="Build a .pptx deck from a JSON outline.")
    p.add_argument("--outline", required=True, help="JSON outline (see SKILL.md)")
    p.add_argument("--output", required=True, help="where to write the .pptx")
    args = p.parse_args(argv)
    if not args.output.lower().endswith(".pptx"):
        fail("--output must end in .pptx")
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        fail("the output folder does not exist: %s" % os.path.dirname(args.output))
    o = load_outline(args.outline)
    n = build(o, args.output)
    print("wrote %s: %d slides (title slide + %d)" % (args.output, n, n - 1))
    print("next: present it with present_files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
