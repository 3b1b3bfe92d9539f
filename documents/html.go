package documents

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	mdconv "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	mdtable "github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/deerflow/deerflow/documents/doc"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// convertHTML converts an HTML file to Markdown (headings, lists, links,
// tables); scripts and styles are dropped. The character set is taken
// from the byte-order mark, a <meta> tag or a guess, as a browser would.
func convertHTML(ctx context.Context, path string, size int64, lim Limits) (*Doc, error) {
	data, err := doc.ReadCapped(path, lim.MaxInput)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w (the file is empty)", ErrDamaged)
	}
	if !utf8.Valid(data) {
		enc, _, _ := charset.DetermineEncoding(data, "text/html")
		if dec, err := enc.NewDecoder().Bytes(data); err == nil {
			data = dec
		}
	}
	node, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrDamaged, err)
	}
	conv := mdconv.NewConverter(mdconv.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), mdtable.NewTablePlugin(mdtable.WithCellPaddingBehavior(mdtable.CellPaddingBehaviorMinimal))))
	out, err := conv.ConvertNode(node, mdconv.WithContext(ctx))
	if err != nil {
		if err := doc.TimedOut(ctx); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (%v)", ErrDamaged, err)
	}
	w := doc.NewWriter(lim.MaxOutput)
	w.WriteString(strings.ToValidUTF8(strings.TrimSpace(string(out)), "\uFFFD"))
	return &Doc{Format: HTML, Markdown: w.String(), Cut: w.Full()}, nil
}
