package content

import (
	"cmp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// Scoring constants (step 2).
const (
	minParagraph   = 25  // runes: shorter paragraphs do not vote for a container
	runesPerPoint  = 100 // a paragraph scores a point per this many runes...
	maxLengthScore = 3   // ...up to this many
	nameWeight     = 25  // a class/id that names content, or boilerplate
)

// paragraphLike tells the elements whose text votes for their ancestors:
// paragraphs, and containers holding only inline content (text written
// straight into a <div>).
func paragraphLike(n *html.Node, s stat) bool {
	switch n.DataAtom {
	case atom.P, atom.Pre, atom.Td, atom.Blockquote, atom.Dd:
		return true
	case atom.Div, atom.Section, atom.Article, atom.Span, atom.Font, atom.Center:
		return !s.blockChild
	}
	return false
}

// paragraphScore is one paragraph's vote: a point for being one, a point per
// comma (prose has commas, lists of links do not), and its length.
func paragraphScore(s stat) float64 {
	return 1 + float64(s.commas) + float64(min(s.runes/runesPerPoint, maxLengthScore))
}

// baseScore is a container's score before its paragraphs vote: by its tag,
// and by what its class and id say.
func baseScore(n *html.Node, st stats, tu Tuning) float64 {
	var b float64
	switch n.DataAtom {
	case atom.Article, atom.Main:
		b = 10
	case atom.Div, atom.Section:
		b = 5
	case atom.Pre, atom.Td, atom.Blockquote:
		b = 3
	case atom.Ol, atom.Ul, atom.Dl, atom.Dd, atom.Dt, atom.Li, atom.Form, atom.Address:
		b = -3
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Th:
		b = -5
	}
	if strings.EqualFold(attr(n, "itemprop"), "articleBody") {
		b += 2 * nameWeight
	}
	ns := nameScore(attr(n, "class")) + nameScore(attr(n, "id"))
	if ns < 0 && tu.NamePenalty && contentLike(n, st, tu) {
		ns = 0
	}
	return b + ns
}

// nameScore weighs a class or id value: +nameWeight when it names content,
// -nameWeight when it names boilerplate.
func nameScore(v string) float64 {
	if v == "" {
		return 0
	}
	var s float64
	for w := range nameWords(v) {
		switch wordClass(w) {
		case contentWord:
			s = max(s, nameWeight)
		case strongWord, weakWord:
			return -nameWeight
		}
	}
	return s
}

// candidates are the containers paragraphs voted for, in the order they
// were first voted for (so ties break the same way on every run), with
// their final scores.
type candidates struct {
	order  []*html.Node
	scores map[*html.Node]float64
	// paragraphs counts the paragraphs that voted for a container as its
	// own (with their whole vote).
	paragraphs map[*html.Node]int
}

// bestCandidate returns the container whose paragraphs make the most
// content, or nil when no paragraph is long enough to vote, and the scores
// of all containers.
func bestCandidate(body *html.Node, st stats, tu Tuning) (*html.Node, candidates) {
	c := candidates{scores: make(map[*html.Node]float64), paragraphs: make(map[*html.Node]int)}
	vote := func(n *html.Node, v float64) {
		if _, ok := c.scores[n]; !ok {
			c.scores[n] = baseScore(n, st, tu)
			c.order = append(c.order, n)
		}
		c.scores[n] += v
	}
	for n := range htmltree.All(body) {
		if n.Type != html.ElementNode {
			continue
		}
		s := st.of(n)
		first := n.Parent
		if !paragraphLike(n, s) {
			// Text written straight into a container beside its blocks
			// is a paragraph of that container.
			if !s.blockChild || s.inline.runes < minParagraph {
				continue
			}
			s = stat{runes: s.inline.runes, linkRunes: s.inline.linkRunes, commas: s.inline.commas}
			first = n
		}
		if s.runes < minParagraph {
			continue
		}
		v := paragraphScore(s)
		// The vote flows up: whole to the parent, half to the grandparent,
		// a quarter to the great-grandparent.
		share := 1.0
		c.paragraphs[first]++
		for p := first; p != nil && p.Type == html.ElementNode && share >= 0.25; p = p.Parent {
			vote(p, v*share)
			if p == body {
				break
			}
			share /= 2
		}
	}
	var top *html.Node
	best := 0.0
	for _, n := range c.order {
		sc := c.scores[n] * (1 - st.of(n).linkDensity())
		if insideLink(n, body) {
			// A teaser's text is a link's text, whatever the blocks
			// inside the link say about their own links.
			sc = 0
		}
		c.scores[n] = sc
		if top == nil || sc > best {
			top, best = n, sc
		}
	}
	if top == nil {
		return nil, c
	}
	// A container that is its parent's only child says nothing its parent
	// does not; the parent may hold the headline and captions beside it.
	for top != body && onlyElementChild(top) && top.Parent != body {
		top = top.Parent
	}
	if _, ok := c.scores[top]; !ok || c.scores[top] < best {
		c.scores[top] = best
	}
	return top, c
}

// widen returns the highest of top and its ancestors below body reached
// by climbing while at least share percent of the text each parent adds
// is prose, the widened container scored as top was.
func widen(body, top *html.Node, c candidates, st stats, share int) *html.Node {
	n, prose := top, proseRunes(top, st)
	for n.Parent != nil && n.Parent != body && n.Parent.Type == html.ElementNode {
		p := n.Parent
		pp := proseRunes(p, st)
		added := st.of(p).runes - st.of(n).runes
		if pp <= prose || (pp-prose)*100 < added*share {
			break
		}
		n, prose = p, pp
	}
	if n != top && c.scores[n] < c.scores[top] {
		c.scores[n] = c.scores[top]
	}
	return n
}

// narrow returns the lowest of top and its descendants reached by
// descending while one child holds at least share percent of the prose
// (see proseRunes), is not a paragraph and holds minContent runes: a
// container named or marked as the article around its text and a box
// beside it (a note, a form, a list of links). The result scores as top.
func narrow(top *html.Node, c candidates, st stats, share int) *html.Node {
	prose := innerProse(top, st)
	n := top
	for prose[n] > 0 {
		var next *html.Node
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type == html.ElementNode && prose[ch]*100 >= prose[n]*share {
				next = ch
				break
			}
		}
		if next == nil || st.of(next).runes < minContent || paragraphLike(next, st.of(next)) {
			break
		}
		n = next
	}
	if n != top && c.scores[n] < c.scores[top] {
		c.scores[n] = c.scores[top]
	}
	return n
}

// proseRoot returns the lowest element at or below body holding at least
// share percent of body's prose (see proseRunes), found by descending
// from body into the child that holds it.
func proseRoot(body *html.Node, st stats, share int) *html.Node {
	prose := innerProse(body, st)
	n := body
	for prose[n] > 0 {
		var next *html.Node
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type == html.ElementNode && !paragraphLike(ch, st.of(ch)) && prose[ch]*100 >= prose[body]*share {
				next = ch
				break
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return n
}

// innerProse returns proseRunes of every element at or below top, in one
// pass from the last element to the first (a walk per element would be
// quadratic on a deeply nested page).
func innerProse(top *html.Node, st stats) map[*html.Node]int {
	var nodes []*html.Node
	for n := range htmltree.All(top) {
		if n.Type == html.ElementNode {
			nodes = append(nodes, n)
		}
	}
	prose := make(map[*html.Node]int, len(nodes))
	for i := len(nodes) - 1; i > 0; i-- {
		n := nodes[i]
		v := prose[n]
		if s := st.of(n); paragraphLike(n, s) {
			// A paragraph counts by itself, not by what it holds.
			v = 0
			if n.DataAtom != atom.Pre && classify(n, s) == good {
				v = s.runes
			}
		}
		prose[n.Parent] += v
	}
	return prose
}

func onlyElementChild(n *html.Node) bool {
	p := n.Parent
	if p == nil || p.Type != html.ElementNode {
		return false
	}
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		if c != n && (c.Type == html.ElementNode || c.Type == html.TextNode && strings.TrimSpace(c.Data) != "") {
			return false
		}
	}
	return true
}

// Sibling rules: a sibling of the best container joins it when it scores at
// least this share of the best (and at least minSiblingScore), or when it is
// a paragraph of prose.
const (
	siblingShare    = 0.2
	minSiblingScore = 10
)

// withSiblings returns the best container and the siblings that belong to
// the article with it (pages often split an article into several
// containers side by side), in document order.
func withSiblings(top *html.Node, c candidates, st stats, tu Tuning) []*html.Node {
	if top.Parent == nil || top.DataAtom == atom.Body {
		return []*html.Node{top}
	}
	topScore := c.scores[top]
	threshold := max(minSiblingScore, topScore*siblingShare)
	topClass := attr(top, "class")
	var out []*html.Node
	for s := top.Parent.FirstChild; s != nil; s = s.NextSibling {
		if s == top {
			out = append(out, s)
			continue
		}
		if s.Type != html.ElementNode {
			continue
		}
		sc, scored := c.scores[s]
		if scored && topClass != "" && attr(s, "class") == topClass {
			sc += topScore * siblingShare
		}
		if scored && sc >= threshold {
			out = append(out, s)
			continue
		}
		if tu.SiblingProse && s.DataAtom != atom.P {
			if ss := st.of(s); ss.runes > 0 && proseRunes(s, st)*2 >= ss.runes {
				out = append(out, s)
				continue
			}
		}
		if s.DataAtom == atom.P {
			ss := st.of(s)
			ld := ss.linkDensity()
			text := strings.TrimSpace(textOf(s))
			if ss.runes > 80 && ld < 0.25 || ss.runes > 0 && ld == 0 && endsSentence(text) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Cousin rules: an article split into sections that sit at different
// depths (a lead section, then a wrapper holding the rest) is joined up by
// climbing from the best container and taking, in each branch beside the
// path climbed, the branch's best container when it scores at least
// cousinShare of the best and is not link-heavy. cousinLevels holds when
// Tuning does not set CousinLevels (DefaultTuning does).
const (
	cousinShare    = 0.3
	cousinMaxLinks = 0.25
	cousinLevels   = 4
	// A section of an article has paragraphs; a lone block of text beside
	// the article is a caption, a teaser or a bio.
	cousinParagraphs = 3
	// proseCousinLinks is the most link density of a cousin joined for
	// its prose (Tuning.CousinProse): a disclaimer or a bio links its
	// terms and its author's pages, a column of the article hardly links.
	proseCousinLinks = 0.1
)

// withCousins adds to chosen (the best container and its siblings) the
// best container of each branch beside top and its ancestors, up to
// cousinLevels above top, that scores comparably, or (with prose not zero)
// that is mostly prose and scores at least prose percent of top (see
// Tuning.CousinProse); the result is in document order.
func withCousins(body, top *html.Node, chosen []*html.Node, c candidates, st stats, levels, prose int) []*html.Node {
	topScore := c.scores[top]
	if top == body || top.Parent == nil {
		return chosen
	}
	taken := make(map[*html.Node]bool, len(chosen))
	for _, n := range chosen {
		taken[n] = true
	}
	added := false
	on := top
	for level := 0; level < levels && on != body && on.Parent != nil; level++ {
		anc := on.Parent
		for b := anc.FirstChild; b != nil; b = b.NextSibling {
			if b == on || b.Type != html.ElementNode || taken[b] {
				continue
			}
			best, bs := bestWithin(b, c)
			if best == nil || st.of(best).linkDensity() > cousinMaxLinks {
				continue
			}
			if bs < topScore*cousinShare || c.paragraphs[best] < cousinParagraphs {
				if prose == 0 || bs*100 < topScore*float64(prose) || c.paragraphs[best] == 0 || !proseCousin(best, c, st) {
					continue
				}
			}
			taken[best] = true
			added = true
		}
		on = anc
	}
	if !added {
		return chosen
	}
	var out []*html.Node
	htmltree.Walk(on, func(n *html.Node) bool {
		if taken[n] {
			out = append(out, n)
			return false
		}
		return true
	})
	return out
}

// withSameClass returns chosen, in document order, with every element
// outside it whose class attribute is top's and whose text is mostly
// prose (see Tuning.SameClass), but for boxes of teasers (linkedHeading).
func withSameClass(body, top *html.Node, chosen []*html.Node, st stats) []*html.Node {
	class := attr(top, "class")
	if class == "" {
		return chosen
	}
	taken := make(map[*html.Node]bool, len(chosen))
	for _, n := range chosen {
		taken[n] = true
	}
	var out []*html.Node
	htmltree.Walk(body, func(n *html.Node) bool {
		if taken[n] {
			out = append(out, n)
			return false
		}
		if n.Type != html.ElementNode {
			return false
		}
		if n != body && attr(n, "class") == class {
			if s := st.of(n); s.runes > 0 && proseRunes(n, st)*2 >= s.runes && !holdsAny(n, taken) && !linkedHeading(n, st) {
				out = append(out, n)
				return false
			}
		}
		return true
	})
	return out
}

// proseCousin tells a box beside the article that reads as part of it:
// at least half prose, and a good paragraph's worth of it (not a one-line
// promotion), few links, no heading that is nothing but a link (a
// teaser), and not a lone paragraph beside an image (a caption).
func proseCousin(n *html.Node, c candidates, st stats) bool {
	s := st.of(n)
	if s.runes == 0 || s.linkDensity() > proseCousinLinks || c.paragraphs[n] == 1 && holdsImage(n) {
		return false
	}
	prose := proseRunes(n, st)
	return prose >= goodRunes && prose*2 >= s.runes && !linkedHeading(n, st)
}

// linkedHeading tells whether n holds a heading that is nothing but a
// link: a teaser's headline.
func linkedHeading(n *html.Node, st stats) bool {
	for d := range htmltree.All(n) {
		if d.Type == html.ElementNode && isHeading(d.DataAtom) {
			if s := st.of(d); s.runes > 0 && s.linkRunes >= s.runes {
				return true
			}
		}
	}
	return false
}

// holdsAny tells whether any of the nodes in set lies below n.
func holdsAny(n *html.Node, set map[*html.Node]bool) bool {
	for d := range htmltree.All(n) {
		if set[d] {
			return true
		}
	}
	return false
}

// insideLink tells whether n sits inside a link, at or below top.
func insideLink(n, top *html.Node) bool {
	for p := n; p != nil && p != top.Parent; p = p.Parent {
		if p.DataAtom == atom.A {
			return true
		}
	}
	return false
}

// bestWithin returns the highest-scoring candidate at or below n.
func bestWithin(n *html.Node, c candidates) (*html.Node, float64) {
	var best *html.Node
	var bs float64
	for d := range htmltree.All(n) {
		if sc, ok := c.scores[d]; ok && (best == nil || sc > bs) {
			best, bs = d, sc
		}
	}
	return best, bs
}

// withLead returns chosen (in document order) with the nearest paragraph
// before it that reads as prose (classed good by itself), when the
// headings and blocks between them hold fewer than tu.Lead runes: pages
// set their lead paragraph apart from the body, in a header with the
// headline, where it scores as a lone paragraph of its own container.
// A lead is a <p> without links (a byline links its author, a
// disclaimer its sources), not beside an image (a caption), and in a
// container that branches off at most tu.LeadLevels (or leadLevels)
// above the content.
func withLead(body *html.Node, chosen []*html.Node, st stats, tu Tuning) []*html.Node {
	if len(chosen) == 0 || chosen[0] == body {
		return chosen
	}
	maxGap, levels := tu.Lead, cmp.Or(tu.LeadLevels, leadLevels)
	first := chosen[0]
	ancestors := make(map[*html.Node]bool)
	for p := first.Parent; p != nil; p = p.Parent {
		ancestors[p] = true
	}
	var before []*html.Node
	for n := range htmltree.All(body) {
		if n == first {
			break
		}
		if n.Type == html.ElementNode && !ancestors[n] {
			before = append(before, n)
		}
	}
	gap := 0
	for i := len(before) - 1; i >= 0 && gap < maxGap; i-- {
		n := before[i]
		s := st.of(n)
		if !paragraphLike(n, s) && !isHeading(n.DataAtom) || s.runes == 0 || insideParagraph(n, body, st) {
			continue
		}
		if leadBlock(n.DataAtom, tu.LeadBlocks) && s.linkRunes == 0 && near(n, first, levels) && !caption(n, st, tu) &&
			(classify(n, s) == good || tu.LeadHeading > 0 && isHeading(n.DataAtom) && s.runes >= tu.LeadHeading) {
			return append([]*html.Node{n}, chosen...)
		}
		gap += s.runes
	}
	return chosen
}

// leadBlock tells the blocks a lead may be: a <p>, or with blocks a
// <div> or <section> of text or a sub-heading (not the headline).
func leadBlock(a atom.Atom, blocks bool) bool {
	switch a {
	case atom.P:
		return true
	case atom.Div, atom.Section, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return blocks
	}
	return false
}

// leadLevels is how far above the content a lead's container may branch
// off by default (see Tuning.LeadLevels): a lead sits in the article's
// header, not elsewhere on the page.
const leadLevels = 3

// near tells whether n lies below one of the first levels ancestors of c.
func near(n, c *html.Node, levels int) bool {
	a := c
	for range levels {
		if a = a.Parent; a == nil {
			return false
		}
		for p := n.Parent; p != nil; p = p.Parent {
			if p == a {
				return true
			}
		}
	}
	return false
}

// caption tells a paragraph beside an image (see besideImage), with
// tu.LeadImage only when no headline precedes it in their container: a
// heading without links (a teaser card's heading links its story); with
// tu.ImageFirst only when the image precedes it there (a caption follows
// its image, an article's lead comes before the hero image).
func caption(n *html.Node, st stats, tu Tuning) bool {
	if !besideImage(n) {
		return false
	}
	if !tu.LeadImage && !tu.ImageFirst {
		return true
	}
	image := false
	for d := range htmltree.All(n.Parent) {
		if d == n {
			break
		}
		if d.Type != html.ElementNode {
			continue
		}
		if tu.LeadImage && isHeading(d.DataAtom) && st.of(d).runes > 0 && st.of(d).linkRunes == 0 {
			return false
		}
		image = image || d.DataAtom == atom.Img || d.DataAtom == atom.Picture
	}
	return image || !tu.ImageFirst
}

// besideImage tells a paragraph whose container holds an image: a
// caption.
func besideImage(n *html.Node) bool {
	return n.Parent != nil && holdsImage(n.Parent)
}

// holdsImage tells whether there is an image at or below n.
func holdsImage(n *html.Node) bool {
	for d := range htmltree.All(n) {
		if d.Type == html.ElementNode && (d.DataAtom == atom.Img || d.DataAtom == atom.Picture) {
			return true
		}
	}
	return false
}

// insideParagraph tells whether n sits inside a paragraph-like block or a
// heading below body (a <span> of a <p>): that block is the unit, not n.
func insideParagraph(n, body *html.Node, st stats) bool {
	for p := n.Parent; p != nil && p != body; p = p.Parent {
		if paragraphLike(p, st.of(p)) || isHeading(p.DataAtom) {
			return true
		}
	}
	return false
}
