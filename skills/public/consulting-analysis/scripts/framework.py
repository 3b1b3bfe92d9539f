#!/usr/bin/env python3
"""Render a consulting framework (SWOT, Porter's five forces, MECE issue
tree, 2x2 matrix) from JSON as a Markdown section and a PNG figure.

  framework.py --input swot.json --markdown out.md --png out.png

The Markdown needs nothing installed; the PNG needs matplotlib. Offline.
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import textwrap

FORCES = [("rivalry", "Competitive rivalry"), ("new_entrants", "Threat of new entrants"),
          ("substitutes", "Threat of substitutes"), ("buyers", "Bargaining power of buyers"),
          ("suppliers", "Bargaining power of suppliers")]
RATINGS = ("low", "medium", "high")
SWOT = [("strengths", "Strengths", "#D5E8D4"), ("weaknesses", "Weaknesses", "#F8CECC"),
        ("opportunities", "Opportunities", "#DAE8FC"), ("threats", "Threats", "#FFE6CC")]


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


def strings(value, where):
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        fail("%s must be a list of non-empty strings" % where)
    return value


# ---- checks and Markdown -------------------------------------------------------

def swot_md(d):
    for key, label, _ in SWOT:
        if not strings(d.get(key), key):
            fail("%s is empty: give at least one point" % key)
    out = ["| | Helpful | Harmful |", "|---|---|---|"]
    cell = lambda k: "<br>".join("- " + x for x in d[k])  # noqa: E731
    out.append("| **Internal** | **Strengths**<br>%s | **Weaknesses**<br>%s |" % (cell("strengths"), cell("weaknesses")))
    out.append("| **External** | **Opportunities**<br>%s | **Threats**<br>%s |" % (cell("opportunities"), cell("threats")))
    for key, label in (("so", "S-O: use strengths to seize opportunities"), ("wo", "W-O: fix weaknesses to seize opportunities"),
                       ("st", "S-T: use strengths against threats"), ("wt", "W-T: limit weaknesses exposed to threats")):
        if d.get("strategies", {}).get(key):
            out += ["", "**%s**" % label, ""] + ["- " + s for s in strings(d["strategies"][key], "strategies." + key)]
    return out


def porter_md(d):
    forces = d.get("forces")
    if not isinstance(forces, dict):
        fail("porter needs a \"forces\" object with %s" % ", ".join(k for k, _ in FORCES))
    out = ["| Force | Intensity | Drivers |", "|---|---|---|"]
    for key, label in FORCES:
        f = forces.get(key)
        if not isinstance(f, dict):
            fail("forces.%s is missing (give {\"rating\": \"low|medium|high\", \"points\": [...]})" % key)
        if str(f.get("rating", "")).lower() not in RATINGS:
            fail("forces.%s.rating must be low, medium or high" % key)
        out.append("| %s | %s | %s |" % (label, f["rating"].lower(), "; ".join(strings(f.get("points"), "forces.%s.points" % key))))
    return out


def tree_check(node, path, warnings):
    if not isinstance(node, dict) or not str(node.get("text", "")).strip():
        fail("every node of the issue tree needs a \"text\" (at %s)" % path)
    kids = node.get("children") or []
    if not isinstance(kids, list):
        fail("children must be a list (at %s)" % path)
    if len(kids) == 1:
        warnings.append("'%s' has a single branch: a split needs at least two parts" % node["text"])
    texts = [str(k.get("text", "")).strip().lower() for k in kids if isinstance(k, dict)]
    if len(set(texts)) < len(texts):
        warnings.append("'%s' has two branches with the same text: they overlap" % node["text"])
    for i, k in enumerate(kids):
        tree_check(k, "%s > %d" % (path, i + 1), warnings)


def tree_md(d, warnings):
    root = {"text": d.get("question", ""), "children": d.get("branches")}
    if not str(root["text"]).strip() or not root["children"]:
        fail("issue-tree needs a \"question\" and a non-empty \"branches\" list")
    tree_check(root, "question", warnings)
    out = ["**%s**" % root["text"], ""]

    def walk(nodes, depth):
        for n in nodes:
            note = " - *%s*" % n["hypothesis"] if n.get("hypothesis") else ""
            out.append("  " * depth + "- " + n["text"] + note)
            walk(n.get("children") or [], depth + 1)
    walk(root["children"], 0)
    return out


def matrix_md(d):
    for axis in ("x", "y"):
        a = d.get(axis)
        if not isinstance(a, dict) or not a.get("label"):
            fail("matrix needs \"%s\": {\"label\", \"low\", \"high\"}" % axis)
    q = d.get("quadrants") or {}
    for k in ("top_left", "top_right", "bottom_left", "bottom_right"):
        if not q.get(k):
            fail("matrix needs quadrants.%s (a name such as \"Quick wins\")" % k)
    items = d.get("items")
    if not isinstance(items, list) or not items:
        fail("matrix needs a non-empty \"items\" list of {\"name\", \"x\", \"y\"} with x and y from 0 to 1")
    out = ["X: %s (low -> high), Y: %s (low -> high)" % (d["x"]["label"], d["y"]["label"]), "",
           "| Item | %s | %s | Quadrant |" % (d["x"]["label"], d["y"]["label"]), "|---|---|---|---|"]
    for it in items:
        try:
            x, y = float(it["x"]), float(it["y"])
        except (KeyError, TypeError, ValueError):
            fail("item %r needs numeric x and y" % it)
        if not (0 <= x <= 1 and 0 <= y <= 1):
            fail("item %r: x and y must be between 0 and 1" % it.get("name"))
        quad = q[("top_" if y >= 0.5 else "bottom_") + ("right" if x >= 0.5 else "left")]
        out.append("| %s | %.2f | %.2f | %s |" % (it.get("name", "?"), x, y, quad))
    return out


# ---- figures -------------------------------------------------------------------

def pyplot():
    matplotlib_env()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("the PNG needs matplotlib (apt-get install python3-matplotlib); leave out --png for Markdown only")
    return plt


def wrap(items, width=38):
    return "\n".join(textwrap.fill("\u2022 " + s, width, subsequent_indent="  ") for s in items)


def box(ax, x, y, w, h, colour, head, body, size=9):
    from matplotlib.patches import FancyBboxPatch
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.01", fc=colour, ec="#555555"))
    ax.text(x + 0.02, y + h - 0.03, head, weight="bold", va="top", fontsize=size + 2)
    ax.text(x + 0.02, y + h - 0.09, body, va="top", fontsize=size)


def swot_png(d, ax):
    for (key, label, colour), (x, y) in zip(SWOT, [(0, 0.5), (0.5, 0.5), (0, 0), (0.5, 0)]):
        box(ax, x + 0.01, y + 0.01, 0.48, 0.45, colour, label, wrap(d[key][:8]))


def porter_png(d, ax):
    shade = {"low": "#D5E8D4", "medium": "#FFF2CC", "high": "#F8CECC"}
    spots = {"rivalry": (0.33, 0.36), "new_entrants": (0.33, 0.70), "substitutes": (0.33, 0.02),
             "buyers": (0.67, 0.36), "suppliers": (0.0, 0.36)}
    for key, label in FORCES:
        f = d["forces"][key]
        x, y = spots[key]
        box(ax, x, y, 0.32, 0.28, shade[f["rating"].lower()], "%s (%s)" % (label, f["rating"].lower()),
            wrap(f["points"][:4], 30), size=8)
    for x1, y1, x2, y2 in [(0.49, 0.70, 0.49, 0.645), (0.49, 0.30, 0.49, 0.36), (0.32, 0.50, 0.33, 0.50), (0.67, 0.50, 0.66, 0.50)]:
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1), arrowprops=dict(arrowstyle="->", lw=1.5))


def tree_png(d, ax):
    root = {"text": d["question"], "children": d["branches"]}
    rows, depth, leaves = {}, {}, [0]  # by id(node): row (leaves in order, a parent between its children), column

    def place(node, level):
        depth[id(node)] = level
        kids = node.get("children") or []
        for k in kids:
            place(k, level + 1)
        if kids:
            rows[id(node)] = (rows[id(kids[0])] + rows[id(kids[-1])]) / 2
        else:
            rows[id(node)] = leaves[0]
            leaves[0] += 1
    place(root, 0)
    col = 1.0 / (max(depth.values()) + 1)
    span = max(leaves[0], 1)

    def xy(n):
        return depth[id(n)] * col, 1 - (rows[id(n)] + 0.5) / span
    for n in walk_all(root):
        x, y = xy(n)
        for k in n.get("children") or []:
            kx, ky = xy(k)
            ax.plot([x + col * 0.9, kx], [y, ky], color="#888888", lw=1)
        ax.text(x + 0.005, y, textwrap.fill(str(n["text"]), 28), va="center", fontsize=8,
                bbox=dict(boxstyle="round", fc="#DAE8FC" if n is root else "#F5F5F5", ec="#555555"))


def walk_all(node):
    yield node
    for k in node.get("children") or []:
        yield from walk_all(k)


def matrix_png(d, ax):
    ax.axhline(0.5, color="#888888", lw=1)
    ax.axvline(0.5, color="#888888", lw=1)
    q = d["quadrants"]
    for (k, x, y) in (("top_left", 0.25, 0.96), ("top_right", 0.75, 0.96), ("bottom_left", 0.25, 0.04), ("bottom_right", 0.75, 0.04)):
        ax.text(x, y, q[k], ha="center", va="center", weight="bold", color="#1F4E79")
    for it in d["items"]:
        ax.scatter(float(it["x"]), float(it["y"]), s=60, color="#ED7D31", zorder=3)
        ax.annotate(str(it.get("name", "")), (float(it["x"]), float(it["y"])), xytext=(6, 4), textcoords="offset points", fontsize=9)
    for axis, setlabel in (("x", ax.set_xlabel), ("y", ax.set_ylabel)):
        a = d[axis]
        setlabel("%s  (%s -> %s)" % (a["label"], a.get("low", "low"), a.get("high", "high")))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xticks([])
    ax.set_yticks([])


def draw(kind, d, title, out):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 7.5))
    {"swot": swot_png, "porter": porter_png, "issue-tree": tree_png, "matrix": matrix_png}[kind](d, ax)
    if kind != "matrix":
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
    ax.set_title(title, fontsize=14, weight="bold")
    fig.tight_layout()
    fig.savefig(out, dpi=150, bbox_inches="tight")
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description="Render a consulting framework from JSON.")
    p.add_argument("--input", required=True, help="JSON with \"framework\": swot | porter | issue-tree | matrix")
    p.add_argument("--markdown", required=True, help="where to write the Markdown section")
    p.add_argument("--png", help="where to write the figure (needs matplotlib)")
    args = p.parse_args(argv)
    if not os.path.isfile(args.input):
        fail("no such file: %s" % args.input)
    try:
        with open(args.input, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s is not valid JSON: %s" % (args.input, e))
    kind = str(d.get("framework", "")).lower() if isinstance(d, dict) else ""
    builders = {"swot": swot_md, "porter": porter_md, "matrix": matrix_md}
    warnings = []
    if kind == "issue-tree":
        lines = tree_md(d, warnings)
    elif kind in builders:
        lines = builders[kind](d)
    else:
        fail("\"framework\" must be one of swot, porter, issue-tree, matrix")
    title = str(d.get("title") or {"swot": "SWOT analysis", "porter": "Five forces", "issue-tree": "Issue tree", "matrix": "2x2 matrix"}[kind])
    md = ["## " + title, ""] + lines
    if d.get("so_what"):
        md += ["", "**So what:** " + str(d["so_what"])]
    if args.png:
        if not args.png.lower().endswith(".png"):
            fail("--png must end in .png")
        draw(kind, d, title, args.png)
        # Relative, so that the link holds wherever the two files are saved together.
        md += ["", "![%s](%s)" % (title, os.path.relpath(os.path.abspath(args.png), os.path.dirname(os.path.abspath(args.markdown))))]
    with open(args.markdown, "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    for w in warnings:
        print("warning: not MECE: " + w, file=sys.stderr)
    print("wrote %s%s" % (args.markdown, " and " + args.png if args.png else ""))
    print("next: present the files with present_files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
