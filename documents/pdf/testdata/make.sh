#!/bin/sh
# Regenerates the PDF fixtures for documents/pdf/pdf_test.go from the sources
# next to this script, with real software: LibreOffice (soffice), qpdf and
# python3 (stdlib only). Not run by the tests; run it by hand and commit
# the results when a fixture has to change.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

topdf() { # source file -> PDF of the same base name here
	soffice --headless -env:UserInstallation=file://"$tmp"/profile \
		--convert-to pdf --outdir "$tmp" "$1" >/dev/null
	cp "$tmp/${1%.*}.pdf" .
}

# (1) heading, paragraph, table, list; two pages.
topdf report.html
# (2) a two-column page, for reading order.
topdf columns.fodt
# (3) encrypted with a non-empty user password (AES-256).
qpdf --encrypt secret owner 256 -- report.pdf encrypted.pdf
# (3b) the older RC4 128-bit scheme, which the built-in reader decrypts:
# with a user password (refused) and with an empty one (readable).
qpdf --allow-weak-crypto --encrypt secret owner 128 --use-aes=n -- report.pdf encrypted-rc4.pdf
qpdf --allow-weak-crypto --encrypt "" owner 128 --use-aes=n -- report.pdf nopassword.pdf
# (4) image-only ("scanned"): a PNG with no text, converted to PDF.
python3 make_png.py
topdf scan.png
rm -f scan.png
# (4b) partly scanned: the report's first page, then the scanned page.
qpdf --empty --pages report.pdf 1 scan.pdf 1 -- mixed.pdf
# (5) truncated: the first half of (1).
size=$(wc -c <report.pdf)
head -c $((size / 2)) report.pdf >truncated.pdf
# (6) 50 pages of text, for the benchmark.
python3 make_long.py
topdf long.html
rm -f long.html
