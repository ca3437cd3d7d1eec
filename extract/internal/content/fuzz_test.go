package content

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// FuzzFind feeds Find whatever the HTML parser makes of arbitrary bytes:
// it must not panic, and what it returns must be a detached tree.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"",
		"<p>a</p>",
		"<html><body><article>" + prose + prose + "</article><nav>x</nav></body></html>",
		"<div class='comment'><div class='content'>" + prose + "</div></div>",
		"<table><tr><td>" + prose + "</td></tr></table>",
		"<div>text<div></div>more text, with, commas</div>",
		"<svg><p>x</p></svg><math><mi>y</mi></math>",
		"<frameset><frame></frameset>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		// Bounded: pages are cut at 64 KiB, and the parser itself refuses
		// more than 512 open elements.
		if len(page) > 64<<10 {
			page = page[:64<<10]
		}
		root, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		got := Find(root)
		if got != nil && got.Parent != nil {
			t.Errorf("content is still attached to the page")
		}
	})
}
