package extract

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func treeDepth(n *html.Node) int {
	best := 0
	var visit func(n *html.Node, d int)
	visit = func(n *html.Node, d int) {
		best = max(best, d)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, d+1)
		}
	}
	visit(n, 0)
	return best
}

func TestLimitDepth(t *testing.T) {
	tests := []struct {
		name      string
		page      string
		unchanged bool
		maxTree   int // bound on the parsed tree's depth
		keep      []string
	}{
		{
			name:      "ordinary page untouched",
			page:      `<html><body><div><p>a<p>b<ul><li>c<li>d</ul><svg><path d="M0"/><path d="M1"/></svg></div></body></html>`,
			unchanged: true,
		},
		{
			name:      "many unclosed paragraphs and list items stay",
			page:      "<body><div>" + strings.Repeat("<p>text", 2000) + strings.Repeat("<li>item", 2000) + "</div>",
			unchanged: true,
		},
		{
			name:      "self-closing svg children do not nest",
			page:      "<body><svg>" + strings.Repeat(`<rect width="1"/>`, 2000) + "</svg><p>after</p>",
			unchanged: true,
		},
		{
			name:    "deep divs flattened, text kept",
			page:    "<body>" + strings.Repeat("<div>", 5000) + "deep text" + strings.Repeat("</div>", 5000) + "<p>after</p>",
			maxTree: 64 + 8,
			keep:    []string{"deep text", "after"},
		},
		{
			name:    "unclosed formatting elements flattened",
			page:    "<body>" + strings.Repeat("<b class=x>", 3000) + "bold",
			maxTree: 64 + 8,
			keep:    []string{"bold"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := limitDepth([]byte(tt.page), 64)
			if tt.unchanged {
				if string(got) != tt.page {
					t.Fatalf("page changed:\n%s", got)
				}
				return
			}
			root, err := html.Parse(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if d := treeDepth(root); d > tt.maxTree {
				t.Errorf("tree depth %d, want <= %d", d, tt.maxTree)
			}
			for _, k := range tt.keep {
				if !strings.Contains(textOf(root), k) {
					t.Errorf("text %q lost", k)
				}
			}
		})
	}
}
