package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// codeBlock is a preformatted block of the original page. The extractors
// collapse whitespace in code, so the original text is kept aside and put
// back into the extracted content by restoreCode.
type codeBlock struct {
	text string
	lang string
}

// collectCode records every top-level <pre> of the page, keyed by its
// whitespace-free text so that it can be recognised after extraction.
func collectCode(root *html.Node) map[string]codeBlock {
	var blocks map[string]codeBlock
	htmltree.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.Data != "pre" {
			return true
		}
		var b strings.Builder
		preText(&b, n)
		text := strings.Trim(b.String(), "\n")
		if key := normText(text); key != "" && strings.ContainsAny(text, "\n") {
			if blocks == nil {
				blocks = make(map[string]codeBlock)
			}
			blocks[key] = codeBlock{text: text, lang: codeLanguage(n)}
		}
		return false // nested <pre> belongs to this one
	})
	return blocks
}

// preText appends the text of a preformatted element, with <br> as a line
// break.
func preText(b *strings.Builder, n *html.Node) {
	walk(n, func(c *html.Node) {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(c.Data)
		case c.Type == html.ElementNode && c.Data == "br":
			b.WriteByte('\n')
		}
	})
}

// codeLanguage finds the language of a code block in the class names
// "language-x" or "lang-x" of the <pre> or its <code>, the convention of
// HTML5 and the common highlighters.
func codeLanguage(pre *html.Node) string {
	var lang string
	walk(pre, func(n *html.Node) {
		if lang != "" || n.Type != html.ElementNode || (n.Data != "pre" && n.Data != "code") {
			return
		}
		for _, a := range n.Attr {
			if a.Key != "class" {
				continue
			}
			for _, c := range strings.Fields(a.Val) {
				if v, ok := strings.CutPrefix(c, "language-"); ok && v != "" {
					lang = v
				} else if v, ok := strings.CutPrefix(c, "lang-"); ok && v != "" {
					lang = v
				}
				if lang != "" {
					return
				}
			}
		}
	})
	return lang
}

// restoreCode replaces code in the extracted content that matches a block
// of the original page by a <pre><code> with the original text and
// language, so it renders as a fenced block with its line breaks and
// indentation.
func restoreCode(content *html.Node, blocks map[string]codeBlock) {
	if len(blocks) == 0 {
		return
	}
	var found []*html.Node
	htmltree.Walk(content, func(n *html.Node) bool {
		if n.Type != html.ElementNode || (n.Data != "pre" && n.Data != "code") {
			return true
		}
		found = append(found, n)
		return false
	})
	for _, n := range found {
		cb, ok := blocks[normText(textOf(n))]
		if !ok || n.Parent == nil {
			continue
		}
		code := &html.Node{Type: html.ElementNode, Data: "code", DataAtom: atom.Code}
		if cb.lang != "" {
			code.Attr = []html.Attribute{{Key: "class", Val: "language-" + cb.lang}}
		}
		code.AppendChild(&html.Node{Type: html.TextNode, Data: cb.text})
		pre := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre}
		pre.AppendChild(code)
		n.Parent.InsertBefore(pre, n)
		n.Parent.RemoveChild(n)
	}
}
