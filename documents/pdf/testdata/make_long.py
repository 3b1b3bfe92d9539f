"""Writes long.html: 50 pages of generated text (a heading and four
paragraphs a page, each page starting with a page break) for the
benchmark. Words are drawn from a fixed list so the output is stable."""
WORDS = ("river meadow orchard ledger harvest bridge lantern quarry "
         "timber market cottage furnace granary mill chapel harbour "
         "signal engine ferry barley").split()

out = ['<!DOCTYPE html><html><head><meta charset="utf-8">'
       '<title>Long</title></head><body>']
n = 0
for page in range(1, 51):
    style = ' style="page-break-before: always"' if page > 1 else ""
    out.append(f"<h2{style}>Section {page}</h2>")
    for para in range(4):
        words = []
        for _ in range(70):
            words.append(WORDS[(n * 7 + n // 3) % len(WORDS)])
            n += 1
        out.append(f"<p>Page {page} paragraph {para + 1}: {' '.join(words)}.</p>")
out.append("</body></html>")
open("long.html", "w").write("\n".join(out) + "\n")
