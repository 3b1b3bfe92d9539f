package documents

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	mdconv "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	mdtable "github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// init registers the HTML converter.
func init() { converters[HTML] = convertHTML }

// convertHTML converts an HTML file to Markdown (headings, lists, links,
// tables); scripts and styles are dropped. The character set is taken
// from the byte-order mark, a <meta> tag or a guess, as a browser would.
func convertHTML(ctx context.Context, path string, size int64, lim Limits) (*Doc, error) {
	data, err := readCapped(path, lim.MaxInput)
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
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrDamaged, err)
	}
	conv := mdconv.NewConverter(mdconv.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), mdtable.NewTablePlugin(mdtable.WithCellPaddingBehavior(mdtable.CellPaddingBehaviorMinimal))))
	out, err := conv.ConvertNode(doc, mdconv.WithContext(ctx))
	if err != nil {
		if err := timedOut(ctx); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (%v)", ErrDamaged, err)
	}
	w := newWriter(lim.MaxOutput)
	w.WriteString(strings.ToValidUTF8(strings.TrimSpace(string(out)), "\uFFFD"))
	return &Doc{Format: HTML, Markdown: w.String(), Cut: w.full()}, nil
}

// readCapped reads the whole file at path, refusing one of more than max
// bytes (the caller checked the size, but the file may have grown).
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w (more than %d MB)", ErrTooLarge, max>>20)
	}
	return data, nil
}
