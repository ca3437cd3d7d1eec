package extract

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// toMarkdown renders an extracted content node as Markdown.
// Links must already be absolute (see absolutize).
func toMarkdown(ctx context.Context, n *html.Node) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(commonmark.WithListEndComment(false)),
		table.NewTablePlugin(
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			table.WithSpanCellBehavior(table.SpanBehaviorMirror),
			table.WithHeaderPromotion(true),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
		),
	))
	out, err := conv.ConvertNode(n, converter.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("extract: render Markdown: %w", err)
	}
	return strings.TrimSpace(normalizeSpaces(string(out))), nil
}

// normalizeSpaces removes soft hyphens (U+00AD, invisible break hints
// inside words) and turns no-break spaces (U+00A0, U+202F, U+2007) into
// plain spaces, so that the words of the Markdown are the words a reader
// sees and a search for them finds them.
func normalizeSpaces(s string) string {
	if !strings.ContainsAny(s, "\u00ad\u00a0\u202f\u2007") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case '\u00ad':
		case '\u00a0', '\u202f', '\u2007':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// absolutize rewrites href and src attributes below n to absolute URLs.
func absolutize(n *html.Node, base *url.URL) {
	if base == nil {
		return
	}
	walk(n, func(e *html.Node) {
		if e.Type != html.ElementNode {
			return
		}
		for i, a := range e.Attr {
			if a.Key != "href" && a.Key != "src" {
				continue
			}
			v := strings.TrimSpace(a.Val)
			if v == "" || strings.HasPrefix(v, "#") && a.Key == "href" {
				continue
			}
			u, err := url.Parse(v)
			if err != nil {
				continue
			}
			e.Attr[i].Val = base.ResolveReference(u).String()
		}
	})
}

// walk calls fn for n and every node below it, in document order.
func walk(n *html.Node, fn func(*html.Node)) {
	htmltree.Walk(n, func(c *html.Node) bool { fn(c); return true })
}
