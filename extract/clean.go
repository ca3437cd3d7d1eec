package extract

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// cleanContent removes what the extractors keep but a reader of the article
// does not need: the title repeated as a heading, a standfirst before the
// first paragraph, and headings and link lists trailing the article. Each
// step was kept because it improved precision on the development set
// without costing recall.
//
// With keepStandfirst the standfirst stays: trafilatura's judged pages
// count it as the article's (maincontent.Tuning.Standfirst).
func cleanContent(content *html.Node, title string, keepStandfirst bool) {
	dropTitleHeading(content, title)
	bs := blocks(content)
	bs = trimTail(bs)
	if !keepStandfirst {
		dropStandfirst(bs)
	}
}

// textOf returns the text below n with whitespace runs collapsed.
func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
			b.WriteByte(' ')
		}
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// normText folds s for loose comparison: letters and digits only, lower case.
func normText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// dropTitleHeading removes a heading near the top of the content that
// repeats the page title: the title is returned separately, and repeating it
// in the body only adds noise.
func dropTitleHeading(content *html.Node, title string) {
	nt := normText(title)
	if len(nt) < 4 {
		return
	}
	seen := 0
	var victim *html.Node
	walk(content, func(c *html.Node) {
		if victim != nil || seen > 3 || c.Type != html.ElementNode {
			return
		}
		switch c.Data {
		case "h1", "h2":
			seen++
			h := normText(textOf(c))
			if h != "" && (h == nt || len(h) >= 12 && strings.Contains(nt, h)) {
				victim = c
			}
		case "p", "li", "table", "pre", "blockquote":
			seen++
		}
	})
	if victim != nil && victim.Parent != nil {
		victim.Parent.RemoveChild(victim)
	}
}

// block is a leaf block of the extracted content: a paragraph, heading,
// list item, table, code block or quote, with the measures the clean-up
// heuristics look at.
type block struct {
	n        *html.Node
	heading  bool
	text     string
	runes    int
	linkRune int
}

func (b block) linkDensity() float64 {
	if b.runes == 0 {
		return 0
	}
	return float64(b.linkRune) / float64(b.runes)
}

var blockTags = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"li": true, "dt": true, "dd": true, "blockquote": true, "pre": true, "table": true,
	"figcaption": true, "div": true, "section": true, "article": true, "ul": true, "ol": true, "dl": true,
}

// atomicTags are blocks whose inside is never split further.
var atomicTags = map[string]bool{"pre": true, "table": true, "p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true}

// blocks lists the leaf blocks below content in document order.
func blocks(content *html.Node) []block {
	var out []block
	var visit func(n *html.Node, depth int)
	visit = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || !blockTags[c.Data] {
				continue
			}
			if !atomicTags[c.Data] && depth < 64 && hasBlockChild(c) {
				visit(c, depth+1)
				continue
			}
			out = append(out, measure(c))
		}
	}
	visit(content, 0)
	return out
}

func hasBlockChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && blockTags[c.Data] {
			return true
		}
	}
	return false
}

func measure(n *html.Node) block {
	b := block{n: n, heading: len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6'}
	b.text = textOf(n)
	b.runes = len([]rune(b.text))
	walk(n, func(c *html.Node) {
		if c.Type == html.ElementNode && c.Data == "a" {
			b.linkRune += len([]rune(textOf(c)))
		}
	})
	b.linkRune = min(b.linkRune, b.runes)
	return b
}

func remove(n *html.Node) {
	if n.Parent != nil {
		n.Parent.RemoveChild(n)
	}
}

// trimTail removes what trails the article: headings with nothing under
// them and link lists (related stories, newsletter boxes).
//
// When every block would go, none does: a page that is all links and
// headings (an index, a link list) is better returned as it is than as
// nothing.
func trimTail(bs []block) []block {
	i := len(bs)
	for i > 0 {
		b := bs[i-1]
		if !(b.heading || b.linkDensity() >= 0.5) {
			break
		}
		i--
	}
	if i == 0 {
		return bs
	}
	for _, b := range bs[i:] {
		remove(b.n)
	}
	return bs[:i]
}

// dropStandfirst removes sentence-long headings that come before the first
// paragraph: a standfirst (dek) that summarises the article rather than
// being part of it.
func dropStandfirst(bs []block) []block {
	i := 0
	for i < len(bs) && bs[i].heading && isSentence(bs[i].text) {
		remove(bs[i].n)
		i++
	}
	return bs[i:]
}

// isSentence tells a sentence-like heading (a standfirst) from a section
// title: it is long, or it ends like a sentence.
func isSentence(s string) bool {
	words := len(strings.Fields(s))
	return words >= 12 || words >= 8 && strings.ContainsAny(s[len(s)-1:], ".!?")
}
