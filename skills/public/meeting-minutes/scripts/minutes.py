#!/usr/bin/env python3
"""Meeting minutes from a transcript, in two steps.

  minutes.py scan --transcript call.vtt [--output candidates.json]
      speakers, and the lines that look like decisions, action items and
      open questions, with line numbers, for you to confirm;
  minutes.py render --input minutes.json --output minutes.md
      the confirmed minutes as Markdown: summary, decisions, an action
      table with owners and due dates, open questions.

Reads plain "Name: text" transcripts (with or without [hh:mm:ss] stamps),
WebVTT and SRT. Standard library only; offline.
"""
import argparse
import json
import os
import re
import sys
from datetime import date

STAMP = re.compile(r"^\s*[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?[\])]?\s*(?:-+>?\s*\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?\s*")
SPEAKER = re.compile(r"^(?:<v\s+([^>]+)>|([A-Z][\w.'\- ]{0,40}?)\s*:\s+)(.*)$")
DECISION = re.compile(r"\b(we(?:'ve| have)? (?:decided|agreed)|decision|agreed|let'?s go with|approved|we will go|final(?:ly)? (?:call|answer)|settled on)\b", re.I)
ACTION = re.compile(r"\b(action( item)?|to-?do|i'?ll|i will|will (?:send|share|draft|prepare|follow|update|check|book|write|call|review|fix)|"
                    r"can you|could you|please|by (?:monday|tuesday|wednesday|thursday|friday|tomorrow|next week|end of)|owner|follow[- ]up)\b", re.I)
QUESTION = re.compile(r"\?\s*$")


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def read_turns(path):
    """[(line number, speaker or "", text)] from a transcript file."""
    if not os.path.isfile(path):
        fail("no such transcript: %s" % path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        fail("cannot read %s as UTF-8 text: %s" % (path, e))
    turns, last = [], ""
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s == "WEBVTT" or s.isdigit() or s.startswith(("NOTE", "STYLE", "Kind:", "Language:")):
            continue
        if "-->" in s and not re.search(r"[A-Za-z]{3}", s.split("-->")[-1]):
            continue  # a cue's timing line
        s = STAMP.sub("", s)
        m = SPEAKER.match(s)
        if m:
            last = (m.group(1) or m.group(2)).strip()
            s = re.sub(r"</v>$", "", m.group(3)).strip()
        if s:
            turns.append((n, last, s))
    if not turns:
        fail("%s holds no transcript text" % path)
    return turns


def scan(args):
    turns = read_turns(args.transcript)
    words = {}
    found = {"decisions": [], "actions": [], "questions": []}
    for n, who, text in turns:
        words[who or "(unknown)"] = words.get(who or "(unknown)", 0) + len(text.split())
        hit = {"line": n, "speaker": who, "text": text}
        if DECISION.search(text):
            found["decisions"].append(hit)
        elif ACTION.search(text):
            found["actions"].append(hit)
        elif QUESTION.search(text):
            found["questions"].append(hit)
    result = {"transcript": args.transcript, "turns": len(turns),
              "speakers": sorted(({"name": k, "words": v} for k, v in words.items()), key=lambda x: -x["words"]),
              "candidates": found,
              "note": "candidates are matched by wording; confirm each against the transcript before using it"}
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print("wrote %s: %d turns, %d speakers, %d decision, %d action and %d question candidates"
              % (args.output, len(turns), len(words), len(found["decisions"]), len(found["actions"]), len(found["questions"])))
    else:
        print(text)
    return 0


def need_list(m, key, kind=str):
    v = m.get(key) or []
    if not isinstance(v, list) or not all(isinstance(x, kind) for x in v):
        fail("\"%s\" must be a list of %s" % (key, "strings" if kind is str else "objects"))
    return v


def render_md(m, warnings):
    out = ["# %s" % m["title"], ""]
    meta = [("Date", m.get("date")), ("Time", m.get("time")), ("Facilitator", m.get("facilitator")),
            ("Attendees", ", ".join(need_list(m, "attendees"))), ("Absent", ", ".join(need_list(m, "absent")))]
    out += ["- **%s:** %s" % (k, v) for k, v in meta if v] + [""]
    if m.get("summary"):
        out += ["## Summary", "", str(m["summary"]).strip(), ""]
    topics = need_list(m, "topics", dict)
    if topics:
        out += ["## Discussion", ""]
        for t in topics:
            out += ["### %s" % t.get("title", "Topic"), ""] + ["- " + str(p) for p in t.get("points") or []] + [""]
    decisions = need_list(m, "decisions", dict)
    out += ["## Decisions", ""]
    out += ["%d. %s%s" % (i, d.get("text", ""), " (%s)" % d["owner"] if d.get("owner") else "") for i, d in enumerate(decisions, 1)] or ["None recorded."]
    out += ["", "## Action items", ""]
    actions = need_list(m, "actions", dict)
    if actions:
        out += ["| # | Action | Owner | Due |", "|---|---|---|---|"]
        for i, a in enumerate(actions, 1):
            if not a.get("task"):
                fail("action %d has no \"task\"" % i)
            if not a.get("owner"):
                warnings.append("action %d (%s) has no owner" % (i, a["task"]))
            due = str(a.get("due") or "")
            if due and not re.match(r"^\d{4}-\d{2}-\d{2}$", due):
                warnings.append("action %d: due %r is not a date like 2026-12-01" % (i, due))
            out.append("| %d | %s | %s | %s |" % (i, a["task"].replace("|", "/"), a.get("owner") or "**unassigned**", due or "-"))
    else:
        out.append("None recorded.")
    questions = need_list(m, "open_questions")
    if questions:
        out += ["", "## Open questions", ""] + ["- " + q for q in questions]
    if m.get("next_meeting"):
        out += ["", "**Next meeting:** %s" % m["next_meeting"]]
    return "\n".join(out).rstrip() + "\n"


def render(args):
    if not os.path.isfile(args.input):
        fail("no such file: %s" % args.input)
    try:
        with open(args.input, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s is not valid JSON: %s" % (args.input, e))
    if not isinstance(m, dict) or not str(m.get("title", "")).strip():
        fail("the minutes need a \"title\"")
    m.setdefault("date", date.today().isoformat())
    warnings = []
    md = render_md(m, warnings)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(md)
    for w in warnings:
        print("warning: " + w)
    print("wrote %s: %d decisions, %d action items" % (args.output, len(m.get("decisions") or []), len(m.get("actions") or [])))
    print("next: present it with present_files")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description="Meeting minutes from a transcript.")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scan", help="find speakers and candidate decisions, actions and questions")
    s.add_argument("--transcript", required=True, help=".txt, .vtt or .srt")
    s.add_argument("--output", help="write the JSON here instead of printing it")
    r = sub.add_parser("render", help="render confirmed minutes (JSON) as Markdown")
    r.add_argument("--input", required=True)
    r.add_argument("--output", required=True)
    args = p.parse_args(argv)
    return scan(args) if args.cmd == "scan" else render(args)


if __name__ == "__main__":
    sys.exit(main())
