package content

import (
	"iter"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// prune removes the boilerplate that markup names as such (step 1). An
// element named as boilerplate only by its class or id is kept when it
// holds an <article> or more than half of the page's text: sites put words
// like "sidebar-layout" on the wrapper of everything. It is kept too when
// its text is a quotation: an embedded post ("social-embed" around a
// tweet) quotes what the article is about.
func prune(body *html.Node, st stats, tu Tuning, j *journal) {
	total := st.of(body).runes
	pageProse := 0
	if tu.PageProse > 0 {
		pageProse = proseRunes(body, st)
	}
	var drop []*html.Node
	// A set, not a list: a page may hold a form per element, and the walk
	// asks of every node.
	forms := make(map[*html.Node]bool)
	if tu.ReplyForm > 0 {
		replyForms(body, st, atom.Textarea, tu.ReplyForm, forms)
	}
	if tu.FormBox > 0 {
		replyForms(body, st, atom.Form, tu.FormBox, forms)
	}
	htmltree.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == body {
			return true
		}
		if forms[n] {
			// The walk reaches the outermost first and goes no deeper.
			drop = append(drop, n)
			return false
		}
		if linkCard(n, st) {
			drop = append(drop, n)
			return false
		}
		v := boilerplate(n)
		if v == byMarkup && tu.Labels && n.DataAtom == atom.Label {
			v = notBoilerplate
		}
		if v == byMarkup && tu.Captions > 0 && n.DataAtom == atom.Figcaption && !hidden(n) {
			if s := st.of(n); s.runes >= tu.Captions && s.linkDensity() <= maxGoodLinks {
				v = notBoilerplate
			}
		}
		switch v {
		case byMarkup:
			drop = append(drop, n)
			return false
		case byName:
			if n.DataAtom == atom.Header && tu.HeaderLinks > 0 && st.of(n).linkRunes*100 <= st.of(n).runes*tu.HeaderLinks {
				return true
			}
			if tu.InlineNames > 0 && inSentence(n, st, tu.InlineNames) {
				return true
			}
			mostProse := tu.PageProse > 0 && pageProse > 0 && proseRunes(n, st)*100 >= pageProse*tu.PageProse
			if st.of(n).runes*2 <= total && !holdsArticle(n) && !wrapsQuote(n, st) && !contentLike(n, st, tu) && !mostProse {
				drop = append(drop, n)
				return false
			}
		}
		return true
	})
	from := len(*j)
	for _, n := range drop {
		j.remove(n)
	}
	if tu.BoxTitle > 0 || tu.Intro > 0 || tu.Orphan > 0 {
		dropTitles(body, st, (*j)[from:], tu, nil, j)
	}
}

// dropTitles removes, for each removal in rs, the highest ancestor of the
// removed element below root that now holds at most limit runes of text,
// when that text is a title (see isTitle) and the ancestor held at least
// twice as much before (old): a box whose content went as boilerplate
// keeps only its heading ("Related stories", "Most read"), which titles
// nothing the reader gets. Boxes at or around keep stay. The walk up
// stops at an ancestor another removal has passed, so that it costs one
// visit per node, however many removals there are.
func dropTitles(root *html.Node, old stats, rs []removal, tu Tuning, keep *html.Node, j *journal) {
	if len(rs) == 0 {
		return
	}
	st := measure(root)
	seen := make(map[*html.Node]bool)
	var boxes []*html.Node
	if tu.Intro > 0 || tu.Orphan > 0 {
		boxes = intros(root, st, rs, tu, keep)
	}
	limit := tu.BoxTitle
	for _, r := range rs {
		if limit == 0 {
			break
		}
		var box *html.Node
		for p := r.parent; p != nil && p != root && !seen[p]; p = p.Parent {
			seen[p] = true
			if st.of(p).runes > limit {
				break
			}
			box = p
		}
		if box == nil || st[box] == nil {
			continue // nothing left, or not in root's tree any more
		}
		if n := st.of(box).runes; n > 0 && old.of(box).runes >= 2*n && isTitle(box) && !within(keep, box) && !within(box, keep) {
			boxes = append(boxes, box)
		}
	}
	for _, b := range boxes {
		j.remove(b)
	}
}

// maxIntroGap is how many empty siblings (the remains of what was
// removed) may lie between an introduction and what it introduced.
const maxIntroGap = 8

// intros returns, for each removal in rs, the element right before its
// place (or before the highest ancestor it left empty) when that element
// holds at most tu.Intro runes of text ending with a colon ("Read also:",
// whose links were removed), or at most tu.Orphan runes reading as a
// title (see isTitle) with nothing after the removal but a heading or the
// end of its container ("About the author", whose box was removed).
// Elements at or around keep are not returned.
func intros(root *html.Node, st stats, rs []removal, tu Tuning, keep *html.Node) []*html.Node {
	var out []*html.Node
	seen := make(map[*html.Node]bool)
	empty := func(c *html.Node) bool { return c.Type != html.ElementNode || st.of(c).runes == 0 }
	for _, r := range rs {
		var prev, next *html.Node
		switch {
		case r.parent == nil || seen[r.parent]:
			continue
		case st[r.parent] == nil || st.of(r.parent).runes > 0 || r.parent == root:
			// The parent keeps text: the removed element's own place.
			if r.next == nil {
				prev = r.parent.LastChild
			} else if r.next.Parent == r.parent {
				prev, next = r.next.PrevSibling, r.next
			} else {
				continue
			}
		default:
			e := r.parent
			for e.Parent != nil && e.Parent != root && !seen[e.Parent] && st.of(e.Parent).runes == 0 {
				seen[e] = true
				e = e.Parent
			}
			seen[e] = true
			prev, next = e.PrevSibling, e.NextSibling
		}
		for i := 0; prev != nil && i < maxIntroGap && empty(prev); i++ {
			if prev.Type == html.TextNode && strings.TrimSpace(prev.Data) != "" {
				prev = nil // text of the parent's own: not a block before it
				break
			}
			prev = prev.PrevSibling
		}
		if prev == nil || prev.Type != html.ElementNode || st[prev] == nil || within(keep, prev) || within(prev, keep) {
			continue
		}
		n := st.of(prev).runes
		if n == 0 || st.of(prev).linkRunes*2 > n || n > max(tu.Intro, tu.Orphan) {
			continue // the text is built only for a line short enough to be one
		}
		t := strings.TrimRight(textOf(prev), " \t\n\r\u00a0")
		if tu.Intro > 0 && n <= tu.Intro && strings.HasSuffix(t, ":") {
			out = append(out, prev)
			continue
		}
		// A title is a heading or a line: not a table or a list, which
		// are as short when they hold a product's specifications.
		line := isHeading(prev.DataAtom) || (prev.DataAtom == atom.P || prev.DataAtom == atom.Div) && !st.of(prev).blockChild
		if tu.Orphan == 0 || n > tu.Orphan || !line || !isTitle(prev) {
			continue
		}
		i := 0
		for ; next != nil && i < maxIntroGap && empty(next); i++ {
			if next.Type == html.TextNode && strings.TrimSpace(next.Data) != "" {
				break
			}
			next = next.NextSibling
		}
		if i < maxIntroGap && (next == nil || next.Type == html.ElementNode && isHeading(next.DataAtom)) {
			out = append(out, prev)
		}
	}
	return out
}

// isTitle tells a box whose text reads as a title: it does not end like a
// sentence (but for a colon, which introduces what followed it), and it
// is not the page's headline (an <h1>).
func isTitle(box *html.Node) bool {
	for c := range htmltree.All(box) {
		if c.Type == html.ElementNode && c.DataAtom == atom.H1 {
			return false
		}
	}
	t := strings.TrimRight(textOf(box), " \t\n\r\u00a0")
	return t != "" && (strings.HasSuffix(t, ":") || !endsSentence(t))
}

// maxInlineDepth bounds the walk from an inline element up to the block
// it is written in: inline elements nest a few levels, not hundreds.
const maxInlineDepth = 8

// inSentence tells an inline element (a <span>, an <a>) written into a
// paragraph holding at least min runes of text besides it: a dateline
// ("KOBE –") or a name in a sentence, which its class names but which
// the sentence reads through.
func inSentence(n *html.Node, st stats, min int) bool {
	if isBlock(n.DataAtom) {
		return false
	}
	p := n.Parent
	for i := 0; p != nil && !isBlock(p.DataAtom) && i < maxInlineDepth; i++ {
		p = p.Parent
	}
	if p == nil || p.DataAtom != atom.P {
		return false
	}
	return st.of(p).runes-st.of(n).runes >= min
}

// replyForms adds to into, for each element of kind a below body (a
// <textarea>, a box to write a comment or a message in; a <form>), its
// highest ancestor below body holding at most limit runes of text: the form with its heading and its notes
// ("Leave a comment", "You must be logged in to post"), which outlive the
// form's controls when only those are pruned.
func replyForms(body *html.Node, st stats, a atom.Atom, limit int, into map[*html.Node]bool) {
	for n := range htmltree.All(body) {
		if n.Type != html.ElementNode || n.DataAtom != a {
			continue
		}
		top := n
		for top.Parent != nil && top.Parent != body && st.of(top.Parent).runes <= limit {
			top = top.Parent
		}
		into[top] = true
	}
}

// contentLike tells an element whose own content reads as the article's,
// by the tuning's measures: prose (NamedProse) or a long text that is not
// a link list (NamedText). Such an element is not pruned for its name.
func contentLike(n *html.Node, st stats, tu Tuning) bool {
	s := st.of(n)
	if tu.NamedText > 0 && s.runes >= tu.NamedText && s.linkDensity() <= maxGoodLinks {
		return true
	}
	if tu.NamedProse == 0 && tu.NamedShare == 0 {
		return false
	}
	prose := proseRunes(n, st)
	return tu.NamedProse > 0 && prose >= tu.NamedProse ||
		tu.NamedShare > 0 && prose >= goodRunes && prose*100 >= s.runes*tu.NamedShare
}

// proseRunes counts the runes of n's text in paragraphs that read as
// prose: paragraph-like blocks (see paragraphLike) other than code that
// are classed good by themselves (long, or sentence-long and ending like a
// sentence, with few links). A share bar, a cookie notice or
// a list of related links has none; a box holding the article's paragraphs
// has them whatever its class says.
func proseRunes(n *html.Node, st stats) int {
	total := 0
	htmltree.Walk(n, func(c *html.Node) bool {
		if c.Type != html.ElementNode {
			return false
		}
		s := st.of(c)
		if c != n && paragraphLike(c, s) {
			if c.DataAtom != atom.Pre && classify(c, s) == good {
				total += s.runes
			}
			return false
		}
		return true
	})
	return total
}

// linkCard tells an inline element inside a paragraph that holds nothing
// but links, at least minCardLinks of them side by side: a hover card (a
// person's name opening a box of their latest stories) or a link list
// set into the text, which a reader of the paragraph never sees as part
// of its sentences. A link that is part of a sentence has words around it.
func linkCard(n *html.Node, st stats) bool {
	if isBlock(n.DataAtom) || n.DataAtom == atom.A || n.DataAtom == atom.P {
		return false
	}
	s := st.of(n)
	if s.runes == 0 || s.linkRunes < s.runes {
		return false
	}
	links := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.A {
			links++
		}
	}
	if links < minCardLinks {
		return false
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.P {
			return true
		}
		if isBlock(p.DataAtom) {
			return false
		}
	}
	return false
}

// minCardLinks is the fewest links side by side that make a link card.
const minCardLinks = 3

// wrapsQuote tells an element whose text is nearly all inside <blockquote>s.
func wrapsQuote(n *html.Node, st stats) bool {
	quoted := runesIn(n, st, atom.Blockquote)
	return quoted > 0 && quoted*10 >= st.of(n).runes*9
}

func holdsArticle(n *html.Node) bool {
	for c := range htmltree.All(n) {
		if c != n && c.Type == html.ElementNode && (c.DataAtom == atom.Article || c.DataAtom == atom.Main) {
			return true
		}
	}
	return false
}

// verdict is why an element is boilerplate.
type verdict int

const (
	notBoilerplate verdict = iota
	byMarkup               // its tag, role or visibility: certain
	byName                 // a word of its class or id: checked against its size
)

// boilerplate tells whether an element is boilerplate by its markup.
func boilerplate(n *html.Node) verdict {
	switch n.DataAtom {
	case atom.Nav, atom.Footer, atom.Aside, atom.Menu, atom.Dialog, atom.Figcaption,
		atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Object, atom.Embed, atom.Canvas, atom.Svg,
		atom.Button, atom.Select, atom.Input, atom.Textarea, atom.Label, atom.Audio, atom.Video:
		if n.DataAtom == atom.Script && strings.Contains(strings.ToLower(attr(n, "type")), "ld+json") {
			return notBoilerplate
		}
		return byMarkup
	case atom.Body, atom.Html, atom.Article, atom.Main:
		return notBoilerplate
	}
	if hidden(n) {
		return byMarkup
	}
	switch strings.ToLower(strings.TrimSpace(attr(n, "role"))) {
	case "navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search", "dialog", "alertdialog", "tooltip":
		return byMarkup
	}
	if n.DataAtom == atom.Header {
		return byName
	}
	if namedBoilerplate(attr(n, "class")) || namedBoilerplate(attr(n, "id")) {
		return byName
	}
	return notBoilerplate
}

// hidden tells an element the page does not show.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			s := strings.ToLower(a.Val)
			if strings.Contains(s, "display:none") || strings.Contains(s, "display: none") ||
				strings.Contains(s, "visibility:hidden") || strings.Contains(s, "visibility: hidden") {
				return true
			}
		}
	}
	return false
}

// namedBoilerplate tells whether a class or id value names boilerplate:
// one of its words (see nameWords) names a part
// of a page that is not the article. Words naming the article itself
// ("article", "content", "body", ...) do not rescue it when a stronger word
// is present: "comment-content" is a comment.
func namedBoilerplate(v string) bool {
	if v == "" {
		return false
	}
	weak, content := false, false
	for w := range nameWords(v) {
		switch wordClass(w) {
		case strongWord:
			return true
		case weakWord:
			weak = true
		case contentWord:
			content = true
		}
	}
	return weak && !content
}

// nameWords yields the words of a class or id value in lower case: split
// at anything but ASCII letters and digits, and where a lower-case letter
// or digit is followed by an upper-case one ("PromoSmall" is "promo",
// "small"), since many sites name their parts in camel case.
func nameWords(v string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1
		for i := 0; i <= len(v); i++ {
			var c byte
			if i < len(v) {
				c = v[i]
			}
			lower := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			upper := c >= 'A' && c <= 'Z'
			if start >= 0 && (!lower && !upper || upper && isLowerOrDigit(v[i-1])) {
				if !yield(strings.ToLower(v[start:i])) {
					return
				}
				start = -1
			}
			if start < 0 && (lower || upper) {
				start = i
			}
		}
	}
}

func isLowerOrDigit(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

type wordKind int

const (
	plainWord   wordKind = iota
	strongWord           // boilerplate, whatever else the name says
	weakWord             // boilerplate unless the name also names content
	contentWord          // names the article or its text
)

// wordClass sorts one word of a class or id. Plurals and common
// concatenations are listed as such: a switch needs no set built at start-up.
func wordClass(w string) wordKind {
	switch w {
	case "comment", "comments", "commentlist", "disqus", "share", "sharing", "shares", "sharebar", "social", "socials",
		"related", "recommended", "recommendations", "newsletter", "subscribe", "subscription", "signup",
		"cookie", "cookies", "consent", "gdpr", "breadcrumb", "breadcrumbs", "pagination", "pager",
		"popup", "modal", "promo", "sponsor", "sponsored", "advert", "advertisement", "ad", "ads", "adsense",
		"outbrain", "taboola", "masthead", "navbar", "topbar", "toolbar", "skip", "skiplink", "sidebar",
		"footer", "copyright", "banner", "paywall", "tags", "tagcloud", "widget", "widgets", "trending",
		"byline", "dateline", "author", "print", "rss", "caption", "credit", "credits", "timestamp", "published", "updated", "date":
		return strongWord
	case "nav", "menu", "header", "meta", "aside", "extra", "links", "more", "tools", "utility", "secondary", "hidden":
		return weakWord
	case "article", "content", "main", "body", "story", "text", "post", "entry", "prose", "blog":
		return contentWord
	}
	return plainWord
}
