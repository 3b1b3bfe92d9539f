#!/bin/sh
# Regenerates the spreadsheet fixtures in this directory from their
# flat-XML OpenDocument sources with LibreOffice (soffice), so that the
# files the tests read were written by real office software. Not run by
# the tests; run it by hand after changing a source:  sh make.sh
#
#   book.fods   -> book.xlsx, book.xls
#                                sheets "Sales" (number, percent, date
#                                formats, a formula) and "Notes"
#   make_bench.py -> bench.fods -> bench.xlsx
#                                10 sheets x 181 rows x 8 columns
set -eu
cd "$(dirname "$0")"
conv() { soffice --headless --convert-to "$1" --outdir . "$2"; }
conv 'xlsx:Calc MS Excel 2007 XML' book.fods
conv 'xls:MS Excel 97' book.fods
python3 make_bench.py
conv 'xlsx:Calc MS Excel 2007 XML' bench.fods
rm -f bench.fods
