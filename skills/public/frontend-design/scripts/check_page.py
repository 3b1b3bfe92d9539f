#!/usr/bin/env python3
"""Check that an HTML page is well formed and self-contained.

  check_page.py /mnt/user-data/outputs/page.html

Errors (exit 1): tags that are not closed or closed out of order, no
doctype/title/charset/viewport, resources loaded from elsewhere (scripts,
stylesheets, images, fonts, @import, url() that are not data: URIs),
duplicate ids. Warnings (exit 0): images without alt text, no <h1>, no
lang, very large files. Standard library only; offline.
"""
import argparse
import os
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
# Elements whose end tag HTML lets you leave out, and what closes them implicitly.
OPTIONAL_END = {"p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option", "optgroup", "colgroup",
                "caption", "rt", "rp", "html", "head", "body"}
LOADS = {("script", "src"), ("img", "src"), ("img", "srcset"), ("source", "src"), ("source", "srcset"), ("video", "src"),
         ("video", "poster"), ("audio", "src"), ("iframe", "src"), ("embed", "src"), ("object", "data"), ("track", "src"),
         ("input", "src")}
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)", re.I)
CSS_IMPORT = re.compile(r"@import\s", re.I)


def external(value):
    v = value.strip().lower()
    return bool(v) and not (v.startswith("data:") or v.startswith("#") or v.startswith("about:blank"))


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.warnings = [], [], []
        self.seen, self.ids = set(), {}
        self.doctype = False
        self.title = ""
        self.in_title = self.in_style = False

    def where(self):
        return "line %d" % self.getpos()[0]

    def handle_decl(self, decl):
        if decl.lower().strip() == "doctype html":
            self.doctype = True

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        self.seen.add(tag)
        self.check_attrs(tag, a)
        if tag in VOID:
            return
        # A new <li>, <p>, <tr>, <td> ... ends an open one of the same kind.
        if tag in OPTIONAL_END and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()
        self.stack.append((tag, self.getpos()[0]))
        self.in_title = tag == "title"
        self.in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        self.seen.add(tag)
        self.check_attrs(tag, a)
        if tag not in VOID and tag not in ("svg", "path", "circle", "rect", "line", "polyline", "polygon", "ellipse", "stop", "use"):
            self.errors.append("%s: <%s/> is not a void element; write <%s></%s>" % (self.where(), tag, tag, tag))

    def handle_endtag(self, tag):
        self.in_title = self.in_style = False
        if tag in VOID:
            return
        names = [t for t, _ in self.stack]
        if tag not in names:
            self.errors.append("%s: </%s> closes nothing that is open" % (self.where(), tag))
            return
        while self.stack:
            open_tag, line = self.stack.pop()
            if open_tag == tag:
                return
            if open_tag not in OPTIONAL_END:
                self.errors.append("%s: <%s> opened on line %d is not closed before </%s>" % (self.where(), open_tag, line, tag))

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.in_style:
            self.check_css(data, "<style>")

    def check_css(self, css, where):
        if CSS_IMPORT.search(css):
            self.errors.append("%s: %s uses @import; inline the CSS instead" % (self.where(), where))
        for url in CSS_URL.findall(css):
            if external(url):
                self.errors.append("%s: %s loads %s; embed it as a data: URI or drop it" % (self.where(), where, url.strip()[:80]))

    def check_attrs(self, tag, a):
        for name, value in a.items():
            if (tag, name) in LOADS and external(value):
                self.errors.append("%s: <%s %s=\"%s\"> loads a file from elsewhere; inline it (data: URI, <style>, <script>)"
                                   % (self.where(), tag, name, value[:80]))
        if tag == "link" and a.get("href") and external(a["href"]) and a.get("rel", "").lower() in (
                "stylesheet", "preload", "icon", "modulepreload", "manifest"):
            self.errors.append("%s: <link rel=\"%s\"> loads %s; put the CSS in a <style> block" % (self.where(), a["rel"], a["href"][:80]))
        if "style" in a:
            self.check_css(a["style"], "a style attribute")
        if tag == "img" and "alt" not in a:
            self.warnings.append("%s: <img> without alt text" % self.where())
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append("%s: id \"%s\" is used twice (first on line %d)" % (self.where(), a["id"], self.ids[a["id"]]))
            self.ids.setdefault(a["id"], self.getpos()[0])
        if tag == "html" and not a.get("lang"):
            self.warnings.append("%s: <html> has no lang attribute" % self.where())
        if tag == "meta" and (a.get("charset") or "charset" in a.get("content", "").lower()):
            self.seen.add("meta-charset")
        if tag == "meta" and a.get("name", "").lower() == "viewport":
            self.seen.add("meta-viewport")


def check(path):
    if not os.path.isfile(path):
        return ["no such file: %s" % path], []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        return ["%s is not UTF-8 text" % path], []
    if not text.strip():
        return ["%s is empty" % path], []
    c = Checker()
    c.feed(text)
    c.close()
    for tag, line in c.stack:
        if tag not in OPTIONAL_END:
            c.errors.append("<%s> opened on line %d is never closed" % (tag, line))
    if not c.doctype:
        c.errors.append("the page does not start with <!DOCTYPE html>")
    if not c.title.strip():
        c.errors.append("the page has no <title>")
    if "meta-charset" not in c.seen:
        c.errors.append("no <meta charset=\"utf-8\">")
    if "meta-viewport" not in c.seen:
        c.errors.append("no <meta name=\"viewport\" ...>: the page will not fit phones")
    if "h1" not in c.seen:
        c.warnings.append("no <h1> heading")
    if len(text) > 2_000_000:
        c.warnings.append("the page is %d KB; large embedded images make it slow to open" % (len(text) // 1024))
    return c.errors, c.warnings


def main(argv=None):
    p = argparse.ArgumentParser(description="Check an HTML page is well formed and self-contained.")
    p.add_argument("page", help="the .html file")
    args = p.parse_args(argv)
    errors, warnings = check(args.page)
    for w in warnings:
        print("warning: " + w)
    for e in errors:
        print("error: " + e)
    if errors:
        print("FAILED: %d error(s) in %s" % (len(errors), args.page))
        return 1
    print("OK: %s is well formed and self-contained (%d warning(s))" % (args.page, len(warnings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
