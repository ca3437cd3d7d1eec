package content

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// class is a leaf block's verdict (step 3), after jusText's classes.
type class int

const (
	short class = iota // too short to judge alone: its neighbours decide
	good               // prose: long enough, few links
	bad                // mostly links, or a copyright line
)

// Paragraph classing constants, in runes of text (whitespace not counted,
// so that they mean the same for scripts written without spaces).
const (
	goodRunes         = 150 // a block this long with few links is prose
	sentenceRunes     = 50  // a block this long ending like a sentence is prose
	maxGoodLinks      = 0.3 // link density above which a block is not prose
	badLinks          = 0.5 // link density above which a block is a link list
	copyrightMaxRunes = 200
	listLinkMax       = 0.9 // link density from which a list item inside the article is a link list entry
)

// leafBlock is a block of the content that is not split further.
type leafBlock struct {
	n       *html.Node
	heading bool
	class   class
}

// atomic tells the blocks whose inside is never split further.
func atomic(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Pre, atom.Table, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Blockquote:
		return true
	}
	return false
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// leafBlocks lists the leaf blocks below root in document order, each
// classed by itself.
func leafBlocks(root *html.Node, st stats) []leafBlock {
	var out []leafBlock
	htmltree.Walk(root, func(n *html.Node) bool {
		if n == root || n.Type != html.ElementNode {
			return n.Type == html.ElementNode
		}
		if !isBlock(n.DataAtom) {
			return true
		}
		s := st.of(n)
		if !atomic(n.DataAtom) && s.blockChild {
			return true
		}
		if s.runes == 0 {
			return false
		}
		out = append(out, leafBlock{n: n, heading: isHeading(n.DataAtom), class: classify(n, s)})
		return false
	})
	return out
}

// classify classes one block by itself.
func classify(n *html.Node, s stat) class {
	ld := s.linkDensity()
	switch {
	case n.DataAtom == atom.Pre:
		return good // code is content wherever it is
	case ld > badLinks:
		return bad
	case s.runes < copyrightMaxRunes && strings.ContainsRune(textOf(n), '©'):
		return bad
	case ld <= maxGoodLinks && (s.runes >= goodRunes || s.runes >= sentenceRunes && endsSentence(textOf(n))):
		return good
	}
	return short
}

// trimBlocks drops what the chosen content still holds around the article:
// link lists and copyright lines anywhere, and the blocks before the first
// prose block (bylines, dates, labels) and after the last one (share bars,
// tag lists), except short paragraphs written into the first prose block's
// own container, a heading right before what is kept, and short lines of
// plain text at the end (a sign-off, a correction note).
//
// With lead false (short content), the blocks before the first prose block
// are kept: a short page's heading, table and introduction belong with its
// code block. With tu.CodeLead, the same holds when the first block classed
// good is a code block: code is content, but not the prose that tells
// where an article starts, and a docs page opens with what explains it.
// With tu.LinkedProse, a paragraph ending like a sentence with links under
// that share counts as prose (see Tuning.LinkedProse); with tu.Tail, the
// content ends at a box of teasers (cutTail).
// Blocks at or below keep are never removed. Removals are recorded in j.
func trimBlocks(root *html.Node, lead bool, keep *html.Node, tu Tuning, j *journal) {
	codeLead := tu.CodeLead
	st := measure(root)
	bs := leafBlocks(root, st)
	if tu.Tail > 0 {
		bs = cutTail(bs, st, tu.Tail, false, j)
	}
	if tu.Teasers > 0 {
		bs = cutTail(bs, st, tu.Teasers, true, j)
	}
	if tu.TextTail > 0 {
		bs = cutTextTail(bs, st, tu.TextTail, false, keep, j)
	}
	if tu.TextTailBoxes > 0 {
		bs = cutTextTail(bs, st, tu.TextTailBoxes, true, keep, j)
	}
	if tu.LinkedProse > 0 {
		for i, b := range bs {
			s := st.of(b.n)
			if b.class == short && b.n.DataAtom == atom.P && s.runes >= sentenceRunes &&
				s.linkRunes*100 <= s.runes*tu.LinkedProse && endsSentence(textOf(b.n)) {
				bs[i].class = good
			}
		}
	}
	first, last := -1, -1
	for i, b := range bs {
		if b.class == good {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return // nothing reads as prose: keep it all rather than guess
	}
	if codeLead && bs[first].n.DataAtom == atom.Pre {
		lead = false
	}
	// Short paragraphs written into the article's own text container
	// before its first long one (a one-line lead, a dateline, a
	// disclosure) are the article's: the trimming is for what sits
	// outside that container.
	start := first
	for start > 0 && inContainer(bs[start-1], bs[first].n.Parent) {
		start--
	}
	var lists []removal // link lists removed, for tu.BoxTitle
	for i, b := range bs {
		// A list inside the article whose items link their sources but
		// say something of their own is part of it; items that are
		// nothing but a link are a related-stories box, and outside the
		// article any link list is navigation.
		drop := b.class == bad && !(b.n.DataAtom == atom.Li && i > first && i < last && st.of(b.n).linkDensity() < listLinkMax)
		// A heading that introduces prose in the article's own text
		// container is a section title even when it is a link (a
		// product's name in a buyer's guide): jusText's heading rule.
		if b.heading && i > start && i < last && bs[i+1].class == good && bs[i+1].n.Parent == b.n.Parent &&
			(b.n.Parent == bs[first].n.Parent || b.n.Parent == bs[last].n.Parent) {
			drop = false
		}
		inText := b.n.Parent == bs[first].n.Parent || b.n.Parent == bs[last].n.Parent
		s := st.of(b.n)
		// A paragraph of the article's own text container between its
		// prose blocks, ending like a sentence, is a sentence of the
		// article however much of it links (a list of people, each
		// linked to a profile; a question linking its answer).
		if drop && tu.MidLinks > 0 && i > first && i < last && inText && b.n.DataAtom == atom.P &&
			s.linkRunes*100 <= s.runes*tu.MidLinks && endsSentence(textOf(b.n)) {
			drop = false
		}
		// A table between the article's prose blocks is a table of the
		// article (products compared, each linked), unless it is nearly
		// all links.
		if drop && tu.TableLinks > 0 && i > first && i < last && b.n.DataAtom == atom.Table && s.linkRunes*100 < s.runes*tu.TableLinks {
			drop = false
		}
		switch {
		case i < start && !lead:
		case i < start:
			drop = drop || !(b.heading && i == start-1)
		case i > last:
			// A quotation closing the article (an embedded post, with its
			// links to the author and the date) is the article's.
			// A short line written into the last prose block's container
			// with few links is a closing line pointing somewhere (a
			// sign-off with a link to the author's site), not a box of links.
			// Links showing their address count here: after the article,
			// one is a "follow us" line, not a cited source.
			closing := tu.TailLinks > 0 && b.class == short && b.n.Parent == bs[last].n.Parent && runesIn(b.n, st, atom.A)*100 <= s.runes*tu.TailLinks
			drop = drop || (hasLink(b.n, st) && b.n.DataAtom != atom.Blockquote && !closing) || b.heading
			if tu.TailLevels > 0 && b.n.DataAtom != atom.Blockquote {
				drop = drop || !within(b.n, ancestor(bs[last].n, tu.TailLevels))
			}
		}
		if drop && !within(b.n, keep) {
			n := len(*j)
			j.remove(b.n)
			if b.class == bad && len(*j) > n {
				lists = append(lists, (*j)[n])
			}
		}
	}
	if tu.BoxTitle > 0 || tu.Intro > 0 || tu.Orphan > 0 {
		dropTitles(root, st, lists, tu, keep, j)
	}
}

// ancestor returns n's ancestor levels up, or the topmost one when the
// tree is not that deep.
func ancestor(n *html.Node, levels int) *html.Node {
	for ; levels > 0 && n.Parent != nil; levels-- {
		n = n.Parent
	}
	return n
}

// within tells whether n is a or lies below it.
func within(n, a *html.Node) bool {
	for ; a != nil && n != nil; n = n.Parent {
		if n == a {
			return true
		}
	}
	return false
}

// minTailLinks is the fewest links below a heading that make a box of
// teasers (see Tuning.Tail), minTeasers the fewest linked headlines
// (Tuning.Teasers).
const (
	minTailLinks = 3
	minTeasers   = 2
)

// cutTail removes the first heading after the first good block below
// which at least tail percent of the text is links, in at least
// minTailLinks links, and everything after it; it returns the blocks
// left.
//
// With teasers, the heading must not be a link itself and must head at
// least minTeasers headings that are nothing but a link (the teasers'
// headlines).
func cutTail(bs []leafBlock, st stats, tail int, teasers bool, j *journal) []leafBlock {
	first := slices.IndexFunc(bs, func(b leafBlock) bool { return b.class == good })
	if first < 0 {
		return bs
	}
	runes, linkRunes, links, linked := 0, 0, 0, 0
	cut := -1
	for i := len(bs) - 1; i > first; i-- {
		s := st.of(bs[i].n)
		runes += s.runes
		linkRunes += s.linkRunes
		for d := range htmltree.All(bs[i].n) {
			if d.Type == html.ElementNode && d.DataAtom == atom.A && st.of(d).linkRunes > 0 {
				links++
			}
		}
		if teasers && bs[i].heading && s.runes > 0 && s.linkRunes >= s.runes {
			linked++
			continue
		}
		if cut < 0 && bs[i].heading && links >= minTailLinks && linkRunes*100 >= runes*tail && (!teasers || linked >= minTeasers) {
			cut = i
		}
	}
	if cut < 0 {
		return bs
	}
	for _, b := range bs[cut:] {
		j.remove(b.n)
	}
	return bs[:cut]
}

// cutTextTail removes the blocks after the last good block whose parent
// holds another good block as a child (the article's text container),
// when the good blocks among them hold at most share percent of the good
// blocks' runes; it returns the blocks left. Blocks at or below keep
// stay, and with boxes only, those inside the text container.
func cutTextTail(bs []leafBlock, st stats, share int, boxes bool, keep *html.Node, j *journal) []leafBlock {
	goods := make(map[*html.Node]int) // good blocks by parent
	total := 0
	for _, b := range bs {
		if b.class == good {
			goods[b.n.Parent]++
			total += st.of(b.n).runes
		}
	}
	end := -1
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].class == good && goods[bs[i].n.Parent] >= 2 {
			end = i
			break
		}
	}
	if end < 0 || end == len(bs)-1 {
		return bs
	}
	after := 0
	for _, b := range bs[end+1:] {
		if b.class == good {
			after += st.of(b.n).runes
		}
	}
	if after*100 > total*share {
		return bs
	}
	left := bs[:end+1]
	for _, b := range bs[end+1:] {
		if within(b.n, keep) || boxes && within(b.n, bs[end].n.Parent) {
			left = append(left, b)
			continue
		}
		j.remove(b.n)
	}
	return left
}

// inContainer tells a short paragraph or list item that is a child of the
// container c (a list item: of a list that is).
func inContainer(b leafBlock, c *html.Node) bool {
	if b.class == bad || c == nil {
		return false
	}
	switch b.n.DataAtom {
	case atom.P:
		return b.n.Parent == c
	case atom.Li:
		return b.n.Parent != nil && b.n.Parent.Parent == c
	}
	return false
}

// runesIn counts the runes of n's text inside elements of kind a (the
// outermost, when they nest): inside links, be they addresses or names;
// inside quotations.
func runesIn(n *html.Node, st stats, a atom.Atom) int {
	total := 0
	htmltree.Walk(n, func(c *html.Node) bool {
		if c.Type == html.ElementNode && c.DataAtom == a {
			total += st.of(c).runes
			return false
		}
		return c.Type == html.ElementNode
	})
	return total
}

// hasLink tells whether n holds a link with text, be it an address or a
// name.
func hasLink(n *html.Node, st stats) bool {
	for c := range htmltree.All(n) {
		if c.Type == html.ElementNode && c.DataAtom == atom.A && st.of(c).runes > 0 {
			return true
		}
	}
	return false
}

// textOf returns the text below n.
func textOf(n *html.Node) string {
	var b strings.Builder
	for c := range htmltree.All(n) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// endsSentence tells whether s ends like a sentence, in the scripts the
// reader is used with.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, " \t\n\r\u00a0\"'”’»)")
	r, _ := utf8.DecodeLastRuneInString(s)
	switch r {
	case '.', '!', '?', '。', '！', '？', '؟', '।', '…', ':':
		return true
	}
	return false
}
