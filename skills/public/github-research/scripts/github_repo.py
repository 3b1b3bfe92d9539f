#!/usr/bin/env python3
"""Collect the facts about one GitHub repository through the public REST API
and write them as a Markdown brief (and optionally the raw JSON).

  github_repo.py owner/name --output /mnt/user-data/outputs/owner-name-github.md
  github_repo.py https://github.com/owner/name --json raw.json --items 10

Environment: GITHUB_TOKEN (optional; raises the rate limit from 60 to 5000
requests an hour and reaches private repositories it may read),
GITHUB_API_URL (default https://api.github.com; GitHub Enterprise uses
https://HOST/api/v3). Standard library only.
"""
import argparse
import base64
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT = 20


class APIError(Exception):
    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_repo(arg):
    s = arg.strip()
    m = re.match(r"^(?:https?://[^/]+/|git@[^:]+:)?([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?(?:[#?].*)?$", s)
    if not m or m.group(1) in (".", ".."):
        fail("%r is not a repository: give owner/name or https://github.com/owner/name" % arg)
    return m.group(1), m.group(2)


class Client:
    def __init__(self, base, token):
        self.base = base.rstrip("/")
        self.token = token
        self.calls = 0

    def get(self, path, **query):
        url = self.base + path + ("?" + urllib.parse.urlencode(query) if query else "")
        req = urllib.request.Request(url, headers={
            "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "deerflow-github-research"})
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        self.calls += 1
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                body = r.read()
                return json.loads(body) if body.strip() else None
        except urllib.error.HTTPError as e:
            raise APIError(e.code, self.explain(e)) from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise APIError(0, "cannot reach %s: %s" % (self.base, getattr(e, "reason", e))) from None
        except ValueError:
            raise APIError(0, "%s answered with something that is not JSON" % url) from None

    def explain(self, e):
        try:
            detail = json.loads(e.read() or b"{}").get("message", "")
        except (ValueError, AttributeError):
            detail = ""
        if e.code in (403, 429) and (e.headers.get("X-RateLimit-Remaining") == "0" or "rate limit" in detail.lower()):
            reset = e.headers.get("X-RateLimit-Reset")
            when = time.strftime("%H:%M UTC", time.gmtime(int(reset))) if reset and reset.isdigit() else "later"
            hint = "" if self.token else "; set GITHUB_TOKEN for a higher limit"
            return "GitHub's rate limit is used up until %s%s" % (when, hint)
        if e.code == 401:
            return "GitHub refused the token in GITHUB_TOKEN (401 %s)" % detail
        if e.code == 404:
            return "not found (404)" + ("" if self.token else "; private repositories need GITHUB_TOKEN")
        return "HTTP %d %s" % (e.code, detail)


def collect(c, owner, name, items):
    """Fetch everything; the repository itself must work, the rest may fail."""
    base = "/repos/%s/%s" % (urllib.parse.quote(owner), urllib.parse.quote(name))
    try:
        data = {"repo": c.get(base)}
    except APIError as e:
        fail("repository %s/%s: %s" % (owner, name, e))
    problems = {}
    parts = {
        "languages": (base + "/languages", {}),
        "contributors": (base + "/contributors", {"per_page": items}),
        "releases": (base + "/releases", {"per_page": min(items, 10)}),
        "commits": (base + "/commits", {"per_page": items}),
        "issues": (base + "/issues", {"state": "all", "sort": "updated", "per_page": items * 2}),
        "pulls": (base + "/pulls", {"state": "all", "sort": "updated", "direction": "desc", "per_page": items}),
        "readme": (base + "/readme", {}),
    }
    for key, (path, query) in parts.items():
        try:
            data[key] = c.get(path, **query)
        except APIError as e:
            data[key] = None
            problems[key] = str(e)
    if isinstance(data.get("issues"), list):  # the issues list also holds pull requests
        data["issues"] = [i for i in data["issues"] if "pull_request" not in i][:items]
    return data, problems


def readme_text(r, lines):
    if not isinstance(r, dict) or not r.get("content"):
        return None
    try:
        text = base64.b64decode(r["content"]).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return None
    out = text.strip().splitlines()
    return "\n".join(out[:lines]) + ("\n..." if len(out) > lines else "")


def day(ts):
    return (ts or "")[:10] or "-"


def cell(s, n=90):
    s = " ".join(str(s or "").split()).replace("|", "\\|")
    return s if len(s) <= n else s[:n - 1] + "\u2026"


def overview(r):
    lic = (r.get("license") or {}).get("spdx_id") or (r.get("license") or {}).get("name") or "none stated"
    rows = [("Description", r.get("description") or "-"), ("Homepage", r.get("homepage") or "-"),
            ("Stars", r.get("stargazers_count")), ("Forks", r.get("forks_count")),
            ("Watchers", r.get("subscribers_count", r.get("watchers_count"))),
            ("Open issues + PRs", r.get("open_issues_count")), ("Main language", r.get("language") or "-"),
            ("License", lic), ("Default branch", r.get("default_branch")), ("Created", day(r.get("created_at"))),
            ("Last push", day(r.get("pushed_at"))), ("Topics", ", ".join(r.get("topics") or []) or "-")]
    flags = [f for f, on in (("archived", r.get("archived")), ("fork", r.get("fork")), ("private", r.get("private"))) if on]
    if flags:
        rows.append(("Flags", ", ".join(flags)))
    return ["| | |", "|---|---|"] + ["| %s | %s |" % (k, cell(v, 200)) for k, v in rows]


def section_lists(d):
    out = []
    langs = d.get("languages")
    if isinstance(langs, dict) and langs:
        total = sum(langs.values()) or 1
        out += ["", "## Languages", ""] + ["- %s: %.1f%%" % (k, 100.0 * v / total)
                                           for k, v in sorted(langs.items(), key=lambda kv: -kv[1])[:10]]
    if isinstance(d.get("contributors"), list) and d["contributors"]:
        out += ["", "## Top contributors", "", "| Login | Commits |", "|---|---|"]
        out += ["| %s | %s |" % (cell(u.get("login")), u.get("contributions")) for u in d["contributors"]]
    if isinstance(d.get("releases"), list):
        out += ["", "## Releases", ""]
        out += ["- **%s** (%s)%s: %s" % (cell(x.get("tag_name"), 40), day(x.get("published_at") or x.get("created_at")),
                                         " pre-release" if x.get("prerelease") else "", cell(x.get("name") or x.get("body"), 120))
                for x in d["releases"]] or ["No releases published."]
    if isinstance(d.get("commits"), list) and d["commits"]:
        out += ["", "## Recent commits", ""]
        for x in d["commits"]:
            cm = x.get("commit") or {}
            who = (x.get("author") or {}).get("login") or (cm.get("author") or {}).get("name") or "?"
            out.append("- %s %s by %s: %s" % (day((cm.get("author") or {}).get("date")), (x.get("sha") or "")[:7], cell(who, 40),
                                              cell((cm.get("message") or "").splitlines()[0] if cm.get("message") else "")))
    for key, title in (("issues", "Recently updated issues"), ("pulls", "Recently updated pull requests")):
        if isinstance(d.get(key), list):
            out += ["", "## " + title, ""]
            rows = []
            for x in d[key]:
                state = "merged" if x.get("merged_at") else x.get("state", "?")
                labels = ", ".join(label.get("name", "") for label in x.get("labels") or [])
                rows.append("- #%s [%s] %s (by %s, updated %s%s)" % (x.get("number"), state, cell(x.get("title")),
                                                                      cell((x.get("user") or {}).get("login"), 40), day(x.get("updated_at")),
                                                                      ", " + cell(labels, 60) if labels else ""))
            out += rows or ["None."]
    return out


def report(d, problems, owner, name, readme_lines, base):
    r = d["repo"]
    out = ["# %s" % (r.get("full_name") or "%s/%s" % (owner, name)), "",
           "Source: GitHub REST API (%s), fetched %s. %s" % (base, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                           r.get("html_url") or ""), "", "## Overview", ""]
    out += overview(r)
    out += section_lists(d)
    text = readme_text(d.get("readme"), readme_lines)
    if text:
        out += ["", "## README (first %d lines)" % readme_lines, "", "````markdown", text, "````"]
    if problems:
        out += ["", "## Not available", ""] + ["- %s: %s" % (k, v) for k, v in problems.items()]
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description="Research a GitHub repository through the REST API.")
    p.add_argument("repo", help="owner/name or a GitHub URL")
    p.add_argument("--output", help="Markdown file to write (default: print it)")
    p.add_argument("--json", help="also write everything fetched as JSON here")
    p.add_argument("--items", type=int, default=10, help="how many contributors, commits, issues, PRs (1-100, default 10)")
    p.add_argument("--readme-lines", type=int, default=60)
    args = p.parse_args(argv)
    if not 1 <= args.items <= 100:
        fail("--items must be between 1 and 100")
    owner, name = parse_repo(args.repo)
    base = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    if not base.startswith(("http://", "https://")):
        fail("GITHUB_API_URL must start with http:// or https://")
    c = Client(base, os.environ.get("GITHUB_TOKEN", "").strip())
    data, problems = collect(c, owner, name, args.items)
    md = report(data, problems, owner, name, args.readme_lines, base)
    for path, text in ((args.output, md), (args.json, json.dumps(data, indent=1) if args.json else None)):
        if path:
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as e:
                fail("cannot write %s: %s" % (path, e))
    if args.output:
        print("wrote %s (%d API calls%s)" % (args.output, c.calls, "; missing: " + ", ".join(problems) if problems else ""))
        print("next: read it, write the analysis, and present the files with present_files")
    else:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
