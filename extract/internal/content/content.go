// Package content finds the main content of a parsed HTML page: the
// article, without the navigation, sidebars, comment threads, share bars
// and link lists around it.
//
// It is written from the published descriptions of three approaches and
// combines them in three steps:
//
//  1. Boilerplate removal by markup (trafilatura's documented approach):
//     elements whose tag, ARIA role or class/id words name navigation,
//     comments, sharing, related links and the like are dropped, unless
//     they hold most of the page's text or an <article>.
//  2. Container choice by scoring (readability's approach): every text
//     paragraph scores by its length and commas; the score flows to its
//     parent and, halved, to its grandparent and great-grandparent; a
//     container's score is scaled by the share of its text outside links.
//     The best container and its siblings that score close to it, or that
//     are themselves good paragraphs, are the content, with the best
//     container of each branch beside its ancestors that scores comparably
//     and has paragraphs of its own (an article split into sections at
//     different depths). Text inside a link never scores: it is a teaser.
//  3. Paragraph-level decisions (jusText's approach, without stop-word
//     lists): each leaf block of the chosen content is classed good, short
//     or bad by its length, link density and whether it reads as prose;
//     link-dense blocks are dropped (but for a heading that introduces
//     prose, and list items with words beside their link), and runs of
//     non-good blocks before the first good one and after the last good
//     one are trimmed (but for short paragraphs written into the first
//     good one's own container, and a closing quotation).
//
// Links whose text is their address are cited sources, not link text; a
// card of links set inside a paragraph, and elements whose class or id
// words (camel case split) name boilerplate, are pruned in step 1 — but a
// name alone never prunes an element whose own content reads as the
// article, 300 runes of prose ("widget" is on every block of Elementor
// pages, "paywall" on the rest of a story), and labels stay as text (a
// recipe's ingredients beside checkboxes).
// Pruning or trimming that leaves nothing is undone; content of at most
// 10,000 runes keeps what precedes its first prose block (a short docs
// page's heading, table and code together; an article's opening lines). Text inside scripts (JSON-LD)
// never counts. When the chosen content holds under a quarter of the
// page's text after pruning, that text is returned instead (trafilatura's
// fallback: a second reading of the page that wins when it is much
// longer), and the nearest prose paragraph before the content joins it
// when little text lies between (a lead set apart in the article's
// header, be it a <p>, a <div> of text or a sub-heading written as a
// sentence, or a long sub-heading however it ends; beside the hero image
// in a header with the headline, or before it, which a caption is not). A <header> whose text is at most a fifth links is the
// article's (headline, standfirst), not the site's menu, and is not
// pruned; a paragraph ending like a sentence counts as prose when
// trimming while at most half of it is links (an article's closing
// paragraphs that point to their sources), and boxes of the best
// container's class elsewhere on the page that are mostly prose join it
// (an article's sections in a page builder's boxes); so do the best
// containers of the branches beside the content that are mostly prose,
// score a fifth of the best and have a paragraph of their own (a page
// builder's column, a tab panel), though the fallback weighs the content
// without them. The best container gives way to its child holding nine
// tenths of its prose (a box named or marked as the article around the
// text and a note or a form beside it). A page without an
// article container is returned whole with its first blocks. The
// chosen content ends with the article's text container (the last element
// holding two prose blocks as children) when what follows it in other
// boxes holds at most a tenth of its prose: a lone summary under a
// teaser's headline, an advertisement, an author's box; and a short line
// after the last prose block is kept only inside that block's parent (a
// sign-off written into the article, not "Comments" or "Most read" in a
// box after it). Neither applies to a page returned whole. A <form> goes
// with its highest ancestor of at most 100 runes: a sign-up's or a login's
// words around it, not only its controls. A box that pruning or a link
// list's removal leaves holding only a title of at most 100 runes goes
// too ("Most read"), as does a line of at most 40 runes ending with a
// colon right before what was removed ("Read also:"); a short closing
// line at most 35% links in the last prose block's container, a table
// between prose blocks under 70% links and an inline element named as
// boilerplate inside a paragraph of 20 other runes (a dateline) stay.
// Each of these was kept because it raised F on the folds of
// trafilatura's judged pages it was not fitted on (Tuning, BENCHMARKS.md);
// Tuning has more mechanisms, off, that were tried and not kept.
//
// No regular expressions and no tables are built at package initialisation:
// word lists are switch statements, so importing the package costs nothing
// at start-up.
package content

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/toolport/toolport/extract/internal/htmltree"
)

// minContent is the fewest runes of text a chosen container must hold to be
// taken for the article rather than a fragment of a page that has none.
const minContent = 250

// Tuning holds the settings of the mechanisms that were chosen by
// cross-validation on trafilatura's judged pages (extract's
// comparison_test.go; the table of every candidate is in BENCHMARKS.md).
// Find uses DefaultTuning; the tests try others.
type Tuning struct {
	// NamedProse is the fewest runes of prose (see proseRunes) that keep an
	// element named as boilerplate by a class or id word: its own content
	// reads as an article, whatever it is called (Elementor's
	// "elementor-widget", a "paywall" box around the rest of the story).
	// Zero prunes by name alone.
	NamedProse int
	// ShortPage is the most runes of text (after pruning) for which a page
	// is returned whole, prose, tables and code together: a short page has
	// no boilerplate worth choosing against. Zero turns it off.
	ShortPage int
	// NamedShare, when not zero, keeps an element named as boilerplate
	// whose prose (at least one good paragraph) is at least this share of
	// its text, in percent: what it holds reads as an article, however
	// short the page.
	NamedShare int
	// PageProse, when not zero, keeps an element named as boilerplate that
	// holds at least this share (percent) of the page's prose: it is the
	// article, even when link lists around it outweigh it in text.
	PageProse int
	// SiblingProse, when set, joins to the best container each sibling
	// whose text is mostly prose (see proseRunes), as a paragraph sibling
	// joins: an article split into blocks side by side whose names lower
	// their scores (a page builder's widgets).
	SiblingProse bool
	// Labels, when set, keeps <label> elements as text: a form's labels
	// are dropped with its controls, but a list of checkboxes is a recipe's
	// ingredients or a checklist, whose words are in the labels.
	Labels bool
	// NamedText is the fewest runes of text, with at most maxGoodLinks of
	// it in links, that keep an element named as boilerplate by a class or
	// id word: a long text that is not a link list is content, whatever it
	// is called ("print-full" around a recipe). Zero turns it off.
	NamedText int
	// NamePenalty, when set, lets a class or id word naming boilerplate
	// lower a container's score only when the container's own content looks
	// like boilerplate (as for NamedProse and NamedText); otherwise the name
	// alone does.
	NamePenalty bool
	// ShortContent is the most runes of chosen content whose leading
	// blocks are all kept: the trimming of what comes before the first
	// prose block is skipped, so a short page's heading, table and
	// introduction stay with its code. Zero turns it off.
	ShortContent int
	// CodeLead, when set, keeps what comes before a code block that is the
	// first block classed good (see trimBlocks).
	CodeLead bool
	// Restore, when set, undoes pruning and trimming that leave nothing:
	// the uncleaned container, else the whole body, is returned rather
	// than no content.
	Restore bool
	// Fallback, when not zero, returns the page's text less its
	// boilerplate (as for ShortPage) instead of the chosen content when
	// that text is at least Fallback percent of the chosen content's:
	// trafilatura's published fallback, a second reading of the page that
	// wins when it is much longer than the first, with the pruned page as
	// the second reading. A container holding a small part of a page's
	// text is more often a fragment of the article (a lead, one section)
	// than the article among much boilerplate, which pruning has removed.
	Fallback int
	// Lead, when not zero, adds to the chosen content the nearest prose
	// paragraph before it (see withLead) when less than Lead runes of
	// other text lie between them: a standfirst or lead paragraph set
	// apart from the article's body, in the header beside the headline.
	Lead int
	// FallbackShare, when not zero, makes the fallback (see Fallback)
	// return the lowest ancestor of the best container that holds at least
	// this share (percent) of the page's text, rather than the whole page:
	// the article's column without the page's header and sidebars.
	FallbackShare int
	// LeadLevels, when not zero, is how far above the content the lead's
	// container may branch off (see Lead); zero means leadLevels.
	LeadLevels int
	// LeadBlocks, when set, lets the lead (see Lead) be any block that
	// reads as a paragraph, not only a <p>: a <div> of text or a
	// sub-heading written as a sentence (a standfirst, a deck, an
	// excerpt), as pages mark their leads up.
	LeadBlocks bool
	// HeaderLinks, when not zero, keeps a <header> element whose text is
	// at most this share (percent) links: an article's header (headline,
	// standfirst) rather than the site's, which is a menu of links.
	HeaderLinks int
	// CousinLevels, when not zero, is how far above the best container
	// withCousins looks for the article's other sections; zero means
	// cousinLevels.
	CousinLevels int
	// ParentProse, when not zero, widens the best container to its parent
	// (and on up) while at least this share (percent) of the text the
	// parent adds is prose (see proseRunes): a container that holds only
	// part of the article, its other paragraphs beside it in a wrapper,
	// gives way to the wrapper when what the wrapper adds reads as the
	// article rather than as links and labels.
	ParentProse int
	// Tail, when not zero, ends the content at the first heading after
	// its first prose block below which at least this share (percent) of
	// the text is links, in at least minTailLinks links: a "read more"
	// box of teasers after the article, each a linked headline and its
	// summary, whose summaries read as prose.
	Tail int
	// LeadImage, when set, takes a paragraph beside an image for a
	// caption (and not a lead) only when no headline (a heading without
	// links) precedes it in their container: an article's header holds
	// its headline and hero image before the lead, a caption's container
	// the image and the caption, a teaser card a linked heading.
	LeadImage bool
	// LeadHeading, when not zero, takes a sub-heading of at least this
	// many runes, without links, for a lead however it ends: decks are
	// written without a full stop, and headings are seldom that long.
	LeadHeading int
	// LeadKept, when set, exempts the lead (see Lead) from the trimming
	// of what precedes the first prose block: it was chosen as prose, and
	// a deck is short by the trimming's measure.
	LeadKept bool
	// SameClass, when set, joins to the content every element elsewhere
	// on the page whose class is the best container's and whose text is
	// mostly prose: a page builder sets an article's sections apart in
	// boxes of one kind, at depths withCousins does not reach. A box
	// with a heading that is nothing but a link holds teasers of other
	// articles and does not join.
	SameClass bool
	// WholeLead, when set, keeps what precedes the first prose block of
	// a page that has no article container and is returned whole: there
	// is no article start to trim to, and the page's first blocks (a
	// short post, a recipe's ingredients) are as much its content as the
	// rest.
	WholeLead bool
	// Teasers is Tail for a box of teasers told by its headlines: the
	// heading that ends the content is not a link and heads at least
	// minTeasers headings that are nothing but a link.
	Teasers int
	// LinkedProse, when not zero, takes a paragraph of at least
	// sentenceRunes that ends like a sentence for prose when at most this
	// share (percent) of it is links, where maxGoodLinks is the bound
	// otherwise: an article's closing paragraphs that point to their
	// sources in several links are still its text.
	LinkedProse int
	// Captions, when not zero, keeps a <figcaption> of at least this many
	// runes, with at most maxGoodLinks of them links: a caption that long
	// tells the story (a slideshow's text), where a short one credits a
	// photo.
	Captions int
	// TextTail, when not zero, ends the content at the last prose block
	// of a text container (an element holding two or more prose blocks as
	// its children) when the prose after it is at most this share
	// (percent) of the content's prose: what follows the article's own
	// paragraphs in other boxes is teasers with their summaries, an
	// advertisement, an author's box or a comment, each a lone paragraph
	// in a card of its own.
	TextTail int
	// TextTailBoxes is TextTail removing only the blocks outside the text
	// container: a sign-off or a note in the article's own container stays.
	TextTailBoxes int
	// TailLevels, when not zero, keeps a short block after the last prose
	// block (a sign-off, a correction note) only when it lies within that
	// block's ancestor this many levels up: written into the article's
	// text, not a box after it ("Comments", "Most read", a poll).
	TailLevels int
	// ReplyForm, when not zero, prunes with each <textarea> its highest
	// ancestor holding at most this many runes of text: a comment form's
	// heading and notes, not only its controls.
	ReplyForm int
	// FormBox is ReplyForm for every <form>: a newsletter's sign-up, a
	// search box or a login with the words around them.
	FormBox int
	// CousinProse, when not zero, also joins a branch's best container
	// (see withCousins) that scores at least this share (percent) of the
	// best, has a paragraph of its own and is mostly prose, without a
	// heading that is nothing but a link: a page builder's column or a tab
	// panel holding one or two paragraphs of the article, short of
	// cousinParagraphs. The fallback (see Fallback) weighs the content
	// chosen without them.
	CousinProse int
	// ImageFirst, when set, takes a paragraph beside an image for a
	// caption (and not a lead) only when the image precedes it in their
	// container: a caption follows its image, and a lead set in the
	// article's header before the hero image is the lead.
	ImageFirst bool
	// Narrow, when not zero, narrows the best container to its child
	// (and on down) holding at least this share (percent) of its prose: a
	// container that scores best by its name or markup (articleBody,
	// "content") holds the boxes beside the article's text too, and the
	// siblings, cousins and lead are looked for around the text.
	Narrow int
	// WholeProse, when not zero, returns for a page without an article
	// container (see WholeLead) the lowest element holding at least this
	// share (percent) of the page's prose, rather than the whole page: the
	// posts' column without the site's header, menus and footer.
	WholeProse int
	// FallbackText, when not zero, lets the fallback (see Fallback) win
	// only when the page's text outside links is also at least this share
	// (percent) of the content's: a page whose extra text is menus and
	// link lists has nothing the content lacks.
	FallbackText int
	// Standfirst, when set, keeps a standfirst: the sentence-long
	// headings before the first paragraph, which the extract package's
	// cleaning drops otherwise (it reads the setting; Find does not).
	Standfirst bool
	// BoxTitle, when not zero, removes with boilerplate that pruning or
	// trimming (a link list) takes out the highest box around it left
	// holding at most this many runes, when what is left reads as a
	// title ("Read more", "Most read"): a related-stories box's heading
	// outlives its links otherwise.
	BoxTitle int
	// Intro, when not zero, removes with boilerplate that pruning or
	// trimming (a link list) takes out the line of at most this many
	// runes ending with a colon right before it: "Read also:" introduces
	// the links, not the article's text.
	Intro int
	// TailLinks, when not zero, keeps a short block after the last prose
	// block, in that block's own container, when at most this share
	// (percent) of it is links: a closing line that points somewhere,
	// which is otherwise dropped for holding a link.
	TailLinks int
	// MidLinks, when not zero, keeps a paragraph of the article's text
	// container between its prose blocks that ends like a sentence and is
	// at most this share (percent) links, where a link-dense block is
	// dropped otherwise.
	MidLinks int
	// TableLinks, when not zero, keeps a table between the article's
	// prose blocks unless at least this share (percent) of it is links.
	TableLinks int
	// InlineNames, when not zero, keeps an inline element named as
	// boilerplate (a "dateline" <span>) that is written into a paragraph
	// holding at least this many runes of text besides it: the sentence
	// reads through it.
	InlineNames int
	// Orphan, when not zero, removes with boilerplate that pruning or
	// trimming (a link list) takes out the title of at most this many
	// runes right before it, when nothing but a heading or the end of
	// their container follows: "About the author" over an author's box.
	Orphan int
}

// DefaultTuning is what Find uses.
func DefaultTuning() Tuning {
	return Tuning{Restore: true, NamedProse: 300, Labels: true, ShortContent: 10000, Fallback: 400, Lead: 100, LeadLevels: 8,
		LeadBlocks: true, HeaderLinks: 20, CousinLevels: 10, LeadImage: true, LeadHeading: 60, LinkedProse: 50, SameClass: true, WholeLead: true, TextTailBoxes: 10, TailLevels: 1, FormBox: 100,
		BoxTitle: 100, Intro: 40, TailLinks: 35, TableLinks: 70, InlineNames: 20, CousinProse: 20, ImageFirst: true, Narrow: 90}
}

// Find returns the main content of the document below root, as a new <div>
// holding the chosen nodes (moved out of root's tree, or copies of them),
// or nil when the page has no text at all. root is modified: boilerplate
// is removed from it.
func Find(root *html.Node) *html.Node { return FindWith(root, DefaultTuning()) }

// FindWith is Find with the given tuning.
func FindWith(root *html.Node, tu Tuning) *html.Node {
	body := findBody(root)
	st := measure(body)
	before := st.of(body).runes
	var undo journal
	prune(body, st, tu, &undo)
	st = measure(body)
	if after := st.of(body).runes; tu.Restore && after < minContent && before >= 2*minContent {
		// Pruning took (nearly) every word: the page is all "boilerplate"
		// by its markup and names, which is a wrong reading of it; the body
		// as it was is better than nothing.
		undo.restore()
		st = measure(body)
	}
	pageRunes := st.of(body).runes
	if pageRunes == 0 {
		return nil
	}
	top, cands := bestCandidate(body, st, tu)
	short := tu.ShortPage > 0 && pageRunes <= tu.ShortPage
	if short || top == nil || st.of(top).runes < minContent {
		// No article here (a portal, a list page), or a page so short that
		// all of it is the content: the page's text, less its boilerplate,
		// is the best there is.
		root := body
		if !short && tu.WholeProse > 0 {
			root = proseRoot(body, st, tu.WholeProse)
		}
		return whole(root, tu, short || tu.WholeLead)
	}
	if tu.ParentProse > 0 {
		top = widen(body, top, cands, st, tu.ParentProse)
	}
	if tu.Narrow > 0 {
		top = narrow(top, cands, st, tu.Narrow)
	}
	// choose returns the nodes chosen with cousins that are mostly prose
	// joined at prose (see Tuning.CousinProse), and whether a lead joined.
	choose := func(prose int) ([]*html.Node, bool) {
		chosen := withCousins(body, top, withSiblings(top, cands, st, tu), cands, st,
			cmp.Or(tu.CousinLevels, cousinLevels), prose)
		if tu.SameClass {
			chosen = withSameClass(body, top, chosen, st)
		}
		if tu.Lead > 0 {
			n := len(chosen)
			chosen = withLead(body, chosen, st, tu)
			return chosen, len(chosen) > n
		}
		return chosen, false
	}
	// finish gathers and trims the chosen nodes. With a fallback, they are
	// copied rather than moved, so that the page stays whole for the
	// second reading.
	finish := func(chosen []*html.Node, lead bool) *html.Node {
		out := gather(chosen, tu.Fallback > 0)
		var keep *html.Node
		if lead && tu.LeadKept {
			keep = out.FirstChild
		}
		return trimmed(out, false, keep, tu)
	}
	chosen, lead := choose(tu.CousinProse)
	out := finish(chosen, lead)
	// The fallback weighs the content as the scores chose it: a
	// container holding a small part of the page is a fragment (a bio,
	// a comment) however many short cousins join it. Weighing the content
	// with them lost whole articles the fallback had found (CV in
	// BENCHMARKS.md).
	scored := out
	if tu.CousinProse > 0 && tu.Fallback > 0 {
		if c0, lead0 := choose(0); !slices.Equal(c0, chosen) {
			scored = finish(c0, lead0)
		}
	}
	if tu.Fallback > 0 && fallbackWins(st.of(body), measure(scored).of(scored), tu) {
		wide := body
		if tu.FallbackShare > 0 {
			for wide = top; wide != body && st.of(wide).runes*100 < pageRunes*tu.FallbackShare; {
				wide = wide.Parent
			}
		}
		return whole(wide, tu, true)
	}
	return out
}

// fallbackWins tells whether the page's text (page) is at least
// tu.Fallback percent of the content's (content) and, with
// tu.FallbackText, its text outside links at least that share of the
// content's: the content's measure taken once for both.
func fallbackWins(page, content stat, tu Tuning) bool {
	if page.runes*100 < content.runes*tu.Fallback {
		return false
	}
	return tu.FallbackText == 0 || (page.runes-page.linkRunes)*100 >= (content.runes-content.linkRunes)*tu.FallbackText
}

// whole returns the children of body as the content (trimmed, its lead
// kept when keepLead is set).
func whole(body *html.Node, tu Tuning, keepLead bool) *html.Node {
	// The body's children, not the body: a <body> inside a <div> would
	// hide the blocks from whoever walks the result.
	var chosen []*html.Node
	// The page has no text container that is the article (or it is the
	// fallback's second reading, which wins by being longer): the blocks
	// after one are not another box's to cut.
	tu.TextTail, tu.TextTailBoxes, tu.TailLevels = 0, 0, 0
	for c := body.FirstChild; c != nil; c = c.NextSibling {
		chosen = append(chosen, c)
	}
	return trimmed(gather(chosen, false), keepLead, nil, tu)
}

// trimmed trims out (see trimBlocks), keeping its lead when keepLead is
// set or out is short content (Tuning.ShortContent) and the blocks at or
// below keep (when not nil) in any case, and undoes the
// trimming if it leaves nothing (Tuning.Restore).
func trimmed(out *html.Node, keepLead bool, keep *html.Node, tu Tuning) *html.Node {
	if tu.ShortContent > 0 && measure(out).of(out).runes <= tu.ShortContent {
		keepLead = true
	}
	var j journal
	trimBlocks(out, !keepLead, keep, tu, &j)
	if tu.Restore && measure(out).of(out).runes == 0 {
		j.restore()
	}
	return out
}

// gather returns a new <div> holding nodes, moved out of their tree, or
// copies of them when clone is set.
func gather(nodes []*html.Node, clone bool) *html.Node {
	out := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, n := range nodes {
		if clone {
			n = cloneTree(n)
		} else {
			n.Parent.RemoveChild(n)
		}
		out.AppendChild(n)
	}
	return out
}

// cloneTree returns a deep copy of the tree below n, without recursion
// (pages nest hundreds of levels deep).
func cloneTree(n *html.Node) *html.Node {
	copies := make(map[*html.Node]*html.Node)
	var root *html.Node
	for c := range htmltree.All(n) {
		d := &html.Node{Type: c.Type, DataAtom: c.DataAtom, Data: c.Data, Namespace: c.Namespace, Attr: slices.Clone(c.Attr)}
		copies[c] = d
		if c == n {
			root = d
			continue
		}
		copies[c.Parent].AppendChild(d)
	}
	return root
}

// journal records removals so that they can be undone, last first.
type journal []removal

type removal struct{ n, parent, next *html.Node }

// remove takes n out of its parent, recording where it was.
func (j *journal) remove(n *html.Node) {
	if n.Parent == nil {
		return
	}
	*j = append(*j, removal{n: n, parent: n.Parent, next: n.NextSibling})
	n.Parent.RemoveChild(n)
}

// restore puts back what was removed, last first, and reports whether
// there was anything.
func (j *journal) restore() bool {
	if len(*j) == 0 {
		return false
	}
	for i := len(*j) - 1; i >= 0; i-- {
		r := (*j)[i]
		if r.next != nil && r.next.Parent == r.parent {
			r.parent.InsertBefore(r.n, r.next)
		} else {
			r.parent.AppendChild(r.n)
		}
	}
	*j = nil
	return true
}

// findBody returns root's <body>, or root when there is none.
func findBody(root *html.Node) *html.Node {
	for n := range htmltree.All(root) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return n
		}
	}
	return root
}

// stat is what the heuristics know about one element: the runes of its text
// (whitespace not counted), those inside links, its commas, and whether it
// has block-level children.
type stat struct {
	runes, linkRunes, commas int
	blockChild               bool
	// inline is the part of the text outside block children: text written
	// straight into a container beside its blocks.
	inline struct{ runes, linkRunes, commas int }
}

// stats maps elements to their stat. Text nodes are not in it.
type stats map[*html.Node]*stat

func (s stats) of(n *html.Node) stat {
	if p := s[n]; p != nil {
		return *p
	}
	return stat{}
}

func (s stat) linkDensity() float64 {
	if s.runes == 0 {
		return 0
	}
	return float64(min(s.linkRunes, s.runes)) / float64(s.runes)
}

// measure computes the stat of every element below root in one pass: the
// nodes are listed in document order and folded into their parents from the
// last to the first, so that every child is done before its parent.
func measure(root *html.Node) stats {
	var nodes []*html.Node
	for n := range htmltree.All(root) {
		nodes = append(nodes, n)
	}
	st := make(stats, len(nodes)/2)
	get := func(n *html.Node) *stat {
		p := st[n]
		if p == nil {
			p = &stat{}
			st[n] = p
		}
		return p
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		var s stat
		switch n.Type {
		case html.TextNode:
			if n.Parent != nil && n.Parent.DataAtom == atom.Script {
				// JSON-LD, kept for its metadata, is not text the page
				// shows: its commas must not vote for its container.
				continue
			}
			s = textStat(n.Data)
		case html.ElementNode:
			s = *get(n)
			if n.DataAtom == atom.A && !showsAddress(n) {
				s.linkRunes = s.runes
				st[n].linkRunes = s.runes
			}
		default:
			continue
		}
		if n == root || n.Parent == nil {
			continue
		}
		p := get(n.Parent)
		p.runes += s.runes
		p.linkRunes += s.linkRunes
		p.commas += s.commas
		if n.Type == html.ElementNode && isBlock(n.DataAtom) {
			p.blockChild = true
		} else {
			p.inline.runes += s.runes
			p.inline.linkRunes += s.linkRunes
			p.inline.commas += s.commas
		}
	}
	return st
}

// showsAddress tells a link whose text is its address ("https://...",
// "www..."): a source the text cites, which a reader reads as part of it,
// unlike a link named for where it leads (a teaser, a menu entry). Its
// text does not count as link text.
func showsAddress(a *html.Node) bool {
	c := a.FirstChild
	if c == nil || c.Type != html.TextNode {
		return false
	}
	t := strings.TrimSpace(c.Data)
	return strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") || strings.HasPrefix(t, "www.")
}

// textStat counts the non-space runes and the commas of a text.
func textStat(s string) stat {
	var st stat
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f'):
		case r == ',' || r == '，' || r == '、' || r == '،':
			st.commas++
			st.runes++
		case unicode.IsSpace(r):
		default:
			st.runes++
		}
	}
	return st
}

// isBlock tells the elements a browser lays out as blocks of their own.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer, atom.Aside, atom.Nav,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd,
		atom.Table, atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr, atom.Td, atom.Th, atom.Blockquote, atom.Pre,
		atom.Figure, atom.Figcaption, atom.Form, atom.Fieldset, atom.Hr, atom.Address, atom.Details, atom.Center:
		return true
	}
	return false
}

// attr returns the value of n's attribute key.
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
