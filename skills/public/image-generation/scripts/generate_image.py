#!/usr/bin/env python3
"""Compose an image prompt from a structured brief and, when an image
service is configured, generate the image.

  generate_image.py --brief cat.json --output /mnt/user-data/outputs/cat.png --prompt-only

The composed prompt is always written beside the output (<output>.prompt.md).
With --prompt-only that is all: the prompt and size are printed for the
generate_image tool, which deerflow runs outside the sandbox with the
image service's key (sandboxed commands see no secrets).

Without --prompt-only the script calls the service itself, which only works
where its environment is set (a host-run script, not deerflow's sandbox):
IMAGE_API_BASE_URL (e.g. https://api.openai.com/v1), IMAGE_API_KEY (sent as a
bearer token when set), IMAGE_MODEL (default gpt-image-1), IMAGE_SIZE.

Exit status: 0 image (or, with --prompt-only, prompt) written; 1 error; 2 no
image service configured (the prompt file is written, no image). Standard
library only.
"""
import argparse
import base64
import json
import os
import sys
import urllib.error
import urllib.request

NOT_CONFIGURED = 2
TIMEOUT = 180
SIZES = {"1:1": "1024x1024", "16:9": "1536x1024", "3:2": "1536x1024", "4:3": "1536x1024",
         "9:16": "1024x1536", "2:3": "1024x1536", "3:4": "1024x1536"}
FIELDS = [("subject", "Subject"), ("setting", "Setting"), ("style", "Style"), ("composition", "Composition"),
          ("lighting", "Lighting"), ("palette", "Colour palette"), ("mood", "Mood"), ("camera", "Camera")]
MAGIC = [(b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"RIFF", "webp")]


def fail(msg, code=1):
    print("error: " + msg, file=sys.stderr)
    sys.exit(code)


def load_brief(args):
    if args.brief:
        if not os.path.isfile(args.brief):
            fail("no such brief file: %s" % args.brief)
        try:
            with open(args.brief, encoding="utf-8") as f:
                b = json.load(f)
        except (OSError, ValueError) as e:
            fail("the brief is not valid JSON: %s" % e)
        if not isinstance(b, dict):
            fail("the brief must be a JSON object")
    else:
        b = {"subject": args.prompt}
    if not str(b.get("subject", "")).strip():
        fail("the brief needs a \"subject\": what the image shows")
    return b


def compose(b):
    """One paragraph a model reads well: subject first, then the rest."""
    parts = []
    for key, label in FIELDS:
        v = b.get(key)
        if v:
            parts.append(("%s: %s." if key != "subject" else "%s%s.") % ("" if key == "subject" else label, str(v).rstrip(".")))
    details = b.get("details") or []
    if details:
        parts.append("Details: " + "; ".join(str(d) for d in details) + ".")
    if b.get("text"):
        parts.append('Text in the image, spelled exactly: "%s".' % b["text"])
    avoid = b.get("avoid") or []
    if avoid:
        parts.append("Avoid: " + ", ".join(str(a) for a in avoid) + ".")
    return " ".join(parts)


def write_prompt(path, prompt, b, size):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Image prompt\n\n%s\n\n- Size: %s\n- Aspect: %s\n\n## Brief\n\n```json\n%s\n```\n"
                % (prompt, size, b.get("aspect", "1:1"), json.dumps(b, indent=2, ensure_ascii=False)))


def request_image(base, key, model, prompt, size):
    body = {"model": model, "prompt": prompt, "n": 1, "size": size}
    if not model.startswith("gpt-image"):  # gpt-image models always answer b64_json and reject the field
        body["response_format"] = "b64_json"
    req = urllib.request.Request(base.rstrip("/") + "/images/generations", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "User-Agent": "deerflow-image-generation"})
    if key:
        req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            answer = json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            msg = json.loads(e.read()).get("error", {}).get("message", "")
        except (ValueError, AttributeError):
            msg = ""
        fail("the image service refused (HTTP %d)%s" % (e.code, ": " + msg if msg else ""))
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        fail("cannot reach the image service at %s: %s" % (base, getattr(e, "reason", e)))
    except ValueError:
        fail("the image service answered with something that is not JSON")
    items = answer.get("data") if isinstance(answer, dict) else None
    if not items:
        fail("the image service returned no image")
    item = items[0]
    if item.get("b64_json"):
        try:
            return base64.b64decode(item["b64_json"], validate=True), item.get("revised_prompt")
        except ValueError:
            fail("the image service returned an image that is not valid base64")
    if item.get("url"):
        try:
            with urllib.request.urlopen(item["url"], timeout=TIMEOUT) as r:
                return r.read(), item.get("revised_prompt")
        except (urllib.error.URLError, OSError) as e:
            fail("cannot download the generated image: %s" % e)
    fail("the image service's answer holds neither b64_json nor url")


def main(argv=None):
    p = argparse.ArgumentParser(description="Write an image prompt and generate the image if a service is configured.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--brief", help="JSON brief (see SKILL.md)")
    src.add_argument("--prompt", help="a plain prompt instead of a brief")
    p.add_argument("--output", required=True, help="PNG path, e.g. /mnt/user-data/outputs/poster.png")
    p.add_argument("--size", help="e.g. 1024x1024; default from the brief's aspect")
    p.add_argument("--prompt-only", action="store_true",
                   help="only write the prompt file and print the prompt for the generate_image tool")
    args = p.parse_args(argv)
    if not args.output.lower().endswith(".png"):
        fail("--output must end in .png")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        fail("the output folder does not exist: %s" % out_dir)
    b = load_brief(args)
    size = args.size or os.environ.get("IMAGE_SIZE") or SIZES.get(str(b.get("aspect", "1:1")), "1024x1024")
    prompt = compose(b)
    prompt_file = os.path.splitext(args.output)[0] + ".prompt.md"
    write_prompt(prompt_file, prompt, b, size)
    if args.prompt_only:
        name = os.path.splitext(os.path.basename(args.output))[0]
        print("wrote the prompt to %s" % prompt_file)
        print("size: %s" % size)
        print("prompt: %s" % prompt)
        print('next: call generate_image with this prompt, size "%s" and filename "%s"' % (size, name))
        return 0
    base, key = os.environ.get("IMAGE_API_BASE_URL", "").strip(), os.environ.get("IMAGE_API_KEY", "").strip()
    if not base:
        print("NO IMAGE: no image service is configured (IMAGE_API_BASE_URL is not set), so no picture was generated.")
        print("The prompt is saved in %s; present it so the user can paste it into an image tool." % prompt_file)
        return NOT_CONFIGURED
    model = os.environ.get("IMAGE_MODEL", "").strip() or "gpt-image-1"
    data, revised = request_image(base, key, model, prompt, size)
    ext = next((e for m, e in MAGIC if data.startswith(m)), None)
    if ext is None:
        fail("the image service returned data that is not an image")
    out = args.output if ext == "png" else os.path.splitext(args.output)[0] + "." + ext
    with open(out, "wb") as f:
        f.write(data)
    print("wrote %s (%d KB, %s, model %s)" % (out, len(data) // 1024, size, model))
    if revised:
        print("the service rewrote the prompt as: " + revised)
    print("next: present %s (and %s if useful) with present_files" % (out, prompt_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
