#!/bin/sh
# Regenerates the Office fixtures in this directory from their flat-XML
# OpenDocument sources with LibreOffice (soffice), so that the files the
# tests read were written by real office software. Not run by the tests;
# run it by hand after changing a source:  sh make.sh
#
#   report.fodt -> report.docx   heading, paragraph with bold and link,
#                                bullet list (2 levels), numbered list, table
#   deck.fodp   -> deck.pptx     3 slides: titles, bullets, a table, notes
#
# The spreadsheet fixtures are made by documents/sheet/testdata/make.sh.
set -eu
cd "$(dirname "$0")"
conv() { soffice --headless --convert-to "$1" --outdir . "$2"; }
conv 'docx:MS Word 2007 XML' report.fodt
conv 'pptx:Impress MS PowerPoint 2007 XML' deck.fodp
