#!/usr/bin/env python3
"""Turn a structured two-host dialogue (JSON) into a podcast script in
Markdown with segment timings, and check it reads like a conversation.

  podcast_script.py --input episode.json --output /mnt/user-data/outputs/episode-script.md

Optionally --tts writes a plain "Speaker: line" text file for a
text-to-speech tool. Standard library only; offline.
"""
import argparse
import json
import os
import re
import sys

WPM = 150  # spoken words per minute


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(1)


def words(text):
    return len(re.findall(r"\w+", text))


def clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60)


def load(path):
    if not os.path.isfile(path):
        fail("no such file: %s" % path)
    try:
        with open(path, encoding="utf-8") as f:
            ep = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s is not valid JSON: %s" % (path, e))
    if not isinstance(ep, dict) or not str(ep.get("title", "")).strip():
        fail("the episode needs a \"title\"")
    hosts = ep.get("hosts")
    if not isinstance(hosts, list) or len(hosts) < 2 or not all(isinstance(h, dict) and h.get("name") for h in hosts):
        fail("the episode needs \"hosts\": at least two objects with a \"name\"")
    names = [h["name"] for h in hosts]
    if len(set(names)) != len(names):
        fail("two hosts share the name %r" % next(n for n in names if names.count(n) > 1))
    segs = ep.get("segments")
    if not isinstance(segs, list) or not segs:
        fail("the episode needs a non-empty \"segments\" list")
    for i, s in enumerate(segs, 1):
        if not isinstance(s, dict) or not isinstance(s.get("lines"), list) or not s["lines"]:
            fail("segment %d needs a non-empty \"lines\" list" % i)
        for j, line in enumerate(s["lines"], 1):
            if not isinstance(line, dict) or line.get("speaker") not in names:
                fail("segment %d line %d: speaker must be one of %s" % (i, j, ", ".join(names)))
            if not str(line.get("text", "")).strip():
                fail("segment %d line %d has no text" % (i, j))
    return ep


def review(ep):
    """Warnings about what makes a dialogue sound like a lecture."""
    out, count = [], {h["name"]: 0 for h in ep["hosts"]}
    for i, s in enumerate(ep["segments"], 1):
        prev, run = None, 0
        for j, line in enumerate(s["lines"], 1):
            n = words(line["text"])
            count[line["speaker"]] += n
            if n > 90:
                out.append("segment %d line %d: %d words in one turn; split it or let the other host react" % (i, j, n))
            run = run + 1 if line["speaker"] == prev else 1
            prev = line["speaker"]
            if run == 3:
                out.append("segment %d line %d: %s speaks three turns in a row" % (i, j, prev))
    total = sum(count.values()) or 1
    for name, n in count.items():
        if n / total < 0.25:
            out.append("%s has only %d%% of the words; give them more than questions" % (name, 100 * n // total))
    return out, count, total


def render(ep):
    hosts = {h["name"]: h for h in ep["hosts"]}
    out = ["# %s" % ep["title"], ""]
    if ep.get("description"):
        out += [ep["description"], ""]
    out += ["**Hosts:** " + "; ".join("%s (%s)" % (h["name"], h.get("role", "host")) for h in ep["hosts"]), ""]
    t = 0.0
    rows = []
    for s in ep["segments"]:
        n = sum(words(line["text"]) for line in s["lines"])
        rows.append((s.get("title") or "Segment", t, n * 60.0 / WPM))
        t += n * 60.0 / WPM
    out += ["**Estimated length:** %s at %d words a minute" % (clock(t), WPM), "", "## Running order", "",
            "| # | Segment | Starts | Length |", "|---|---|---|---|"]
    out += ["| %d | %s | %s | %s |" % (i, title, clock(start), clock(dur)) for i, (title, start, dur) in enumerate(rows, 1)]
    for i, s in enumerate(ep["segments"]):
        if out[-1]:
            out.append("")
        out += ["## %d. %s [%s]" % (i + 1, rows[i][0], clock(rows[i][1])), ""]
        if s.get("goal"):
            out += ["*Goal: %s*" % s["goal"], ""]
        for line in s["lines"]:
            cue = " *(%s)*" % line["cue"] if line.get("cue") else ""
            out += ["**%s:**%s %s" % (hosts[line["speaker"]]["name"].upper(), cue, line["text"].strip()), ""]
    if ep.get("sources"):
        out += ["## Sources", ""] + ["- " + str(x) for x in ep["sources"]] + [""]
    return "\n".join(out).rstrip() + "\n", t


def main(argv=None):
    p = argparse.ArgumentParser(description="Render a two-host podcast dialogue as a Markdown script.")
    p.add_argument("--input", required=True, help="episode JSON (see SKILL.md)")
    p.add_argument("--output", required=True, help="Markdown script to write")
    p.add_argument("--tts", help="also write 'Speaker: line' plain text for a text-to-speech tool")
    args = p.parse_args(argv)
    ep = load(args.input)
    warnings, count, total = review(ep)
    md, seconds = render(ep)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(md)
        if args.tts:
            with open(args.tts, "w", encoding="utf-8") as f:
                for s in ep["segments"]:
                    for line in s["lines"]:
                        f.write("%s: %s\n" % (line["speaker"], " ".join(line["text"].split())))
    except OSError as e:
        fail("cannot write the script: %s" % e)
    for w in warnings:
        print("warning: " + w)
    share = ", ".join("%s %d%%" % (k, 100 * v // total) for k, v in count.items())
    print("wrote %s: %d segments, about %s (%s)" % (args.output, len(ep["segments"]), clock(seconds), share))
    print("next: present it with present_files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
