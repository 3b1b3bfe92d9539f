#!/usr/bin/env python3
"""Write bench.fods: 10 sheets of 181 rows x 8 columns (a header row, then
text, whole numbers, decimals and dates), the source of bench.xlsx that
BenchmarkXLSX10Sheets converts."""

HEAD = '''<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"
 office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
 <office:automatic-styles>
  <number:date-style style:name="N1"><number:year number:style="long"/><number:text>-</number:text><number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/></number:date-style>
  <style:style style:name="ce1" style:family="table-cell" style:data-style-name="N1"/>
 </office:automatic-styles>
 <office:body><office:spreadsheet>
'''


def s(v):
    return '<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>' % v


def f(v):
    return '<table:table-cell office:value-type="float" office:value="%s"><text:p>%s</text:p></table:table-cell>' % (v, v)


def d(v):
    return ('<table:table-cell table:style-name="ce1" office:value-type="date" '
            'office:date-value="%s"><text:p>%s</text:p></table:table-cell>' % (v, v))


def main():
    out = [HEAD]
    for sh in range(1, 11):
        out.append('<table:table table:name="Sheet%d">' % sh)
        out.append('<table:table-row>%s</table:table-row>' %
                   ''.join(s('Col%d' % c) for c in range(1, 9)))
        for r in range(1, 181):
            cells = [s('item %d' % r), f(r), f(r * sh), f('%.2f' % (r / 7)),
                     d('2024-%02d-%02d' % (r % 12 + 1, r % 28 + 1)), s('note %d' % (r % 10)),
                     f(r * 3), s('x' if r % 2 else 'y')]
            out.append('<table:table-row>%s</table:table-row>' % ''.join(cells))
        out.append('</table:table>')
    out.append('</office:spreadsheet></office:body></office:document>\n')
    open('bench.fods', 'w').write('\n'.join(out))


if __name__ == '__main__':
    main()
