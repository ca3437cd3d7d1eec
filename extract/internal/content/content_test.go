package content

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func parse(t testing.TB, page string) *html.Node {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// prose is a paragraph that reads as article text: long, with commas, few links.
const prose = `<p>The council met on Tuesday, after weeks of delay, and voted to rebuild the old bridge over the river, which has been closed to traffic since the spring floods damaged its piers.</p>`

// second and teaser are prose of another section, and of another article.
const (
	second = `<p>The contractor, chosen last year after a long tender, said the work would take two summers, cost less than feared, and keep one lane open for most of that time.</p>`
	teaser = `<p>In other news, the library will stay open late on Thursdays, after a petition signed by hundreds of students, parents and teachers asked for longer hours.</p>`
)

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []string
		notWant []string
	}{
		{
			name:    "article chosen over navigation and sidebar",
			body:    `<nav><a href="/">Home</a> <a href="/news">News</a></nav><div class="sidebar"><p>Most read stories of the week, listed here for you to click on.</p></div><div class="story">` + prose + prose + `</div><footer>© 2024 Example</footer>`,
			want:    []string{"The council met"},
			notWant: []string{"Home", "Most read", "© 2024"},
		},
		{
			name:    "the container with more prose wins",
			body:    `<div id="a"><p>A short teaser, one line only, about something else.</p></div><div id="b">` + prose + prose + prose + `</div>`,
			want:    []string{"The council met"},
			notWant: []string{"A short teaser"},
		},
		{
			name:    "comments named as such dropped even inside the article",
			body:    `<article>` + prose + prose + `<div class="comment-content"><p>I disagree with this, strongly, and I have said so many times before, at length.</p></div></article>`,
			want:    []string{"The council met"},
			notWant: []string{"I disagree"},
		},
		{
			name:    "an embedded post kept though its wrapper is named social, a comment quoting it not",
			body:    `<article>` + prose + `<div class="social-embed"><blockquote class="tweet"><p>The bridge is closed again, and nobody has told us why.</p>— Resident (@resident) <a href="/s/1">May 2</a></blockquote></div>` + prose + `<div class="comments"><p>I agree with every word of this article, and so does my whole street.</p><blockquote>The bridge is closed again.</blockquote></div></article>`,
			want:    []string{"nobody has told us why", "May 2"},
			notWant: []string{"I agree"},
		},
		{
			name: "a quotation closing the article kept with its links",
			body: `<div>` + prose + prose + `<blockquote><p>We will reopen it in spring.</p>— The Council (@council) <a href="/s/2">May 3</a></blockquote></div>`,
			want: []string{"We will reopen it", "May 3"},
		},
		{
			name: "a wrapper named like boilerplate but holding the article kept",
			body: `<div class="sidebar-layout"><div class="main">` + prose + prose + `</div></div>`,
			want: []string{"The council met"},
		},
		{
			name:    "hidden elements dropped",
			body:    `<div>` + prose + `<p style="display: none">Hidden text that a reader never sees on the page at all.</p>` + prose + `<div hidden><p>Also hidden from every reader of the page, always.</p></div></div>`,
			want:    []string{"The council met"},
			notWant: []string{"Hidden text", "Also hidden"},
		},
		{
			name:    "link list inside the content dropped",
			body:    `<div>` + prose + `<p><a href="/1">Another story</a> <a href="/2">And another one</a> <a href="/3">One more</a></p>` + prose + `</div>`,
			want:    []string{"The council met"},
			notWant: []string{"Another story"},
		},
		{
			name: "a list of linked points inside the article kept, a related-stories list inside it dropped",
			body: `<div>` + prose + `<ul><li><a href="/a">The bridge reopens in May</a>, the council said, after repairs.</li><li><a href="/b">Tolls stay</a>, for now at least.</li></ul>` + prose +
				`<ul><li><a href="/c">Ten bridges to see before you die</a></li><li><a href="/d">Our best photos of the week</a></li></ul>` + prose + `</div>`,
			want:    []string{"The bridge reopens in May", "Tolls stay"},
			notWant: []string{"Ten bridges", "best photos"},
		},
		{
			name: "a linked section heading in the article's text kept, linked teaser headings beside it not",
			body: `<div><div class="text">` + prose + `<h3><a href="/p">The new bridge</a></h3>` + second + prose + `</div>` +
				`<div class="more"><div class="card"><h4><a href="/o">In other news</a></h4>` + teaser + `</div></div></div>`,
			want:    []string{"The new bridge", "The contractor"},
			notWant: []string{"In other news"},
		},
		{
			name:    "a hover card of links inside a sentence dropped, the sentence and its own links kept",
			body:    `<div><p>The mayor, <span class="person"><a href="/p/m">Ann Lee</a><span class="card"><a href="/p/m">Ann Lee</a> <a href="/s/1">Lee wins again</a> <a href="/s/2">Lee on taxes</a> <a href="/p/m">MORE</a></span></span>, said on Tuesday that the bridge would <a href="/s/3">reopen</a> next spring, after repairs to its piers and its deck.</p>` + prose + `</div>`,
			want:    []string{"The mayor, Ann Lee, said on Tuesday", "reopen"},
			notWant: []string{"Lee wins again", "MORE"},
		},
		{
			name:    "a source cited by its address inside the article kept, an address after its end not",
			body:    `<div>` + prose + `<p><a href="https://example.org/report-2024">https://example.org/report-2024</a></p>` + prose + `<p>Follow us at <a href="https://example.com/follow">https://example.com/follow</a></p></div>`,
			want:    []string{"https://example.org/report-2024"},
			notWant: []string{"Follow us"},
		},
		{
			name:    "byline in a block of its own before the article's text trimmed",
			body:    `<div><div class="info"><p>By Jane Doe</p></div><div class="text">` + prose + prose + `</div></div>`,
			want:    []string{"The council met"},
			notWant: []string{"Jane Doe"},
		},
		{
			name:    "short lead paragraphs in the article's text container kept, the labels outside it not",
			body:    `<div><div class="kicker"><p>Politics</p></div><div class="text"><p>BERLIN</p><p>A short lead, in one line.</p><ul><li>First point</li></ul>` + prose + prose + `</div></div>`,
			want:    []string{"BERLIN", "A short lead", "First point", "The council met"},
			notWant: []string{"Politics"},
		},
		{
			name: "section heading before the first prose block kept",
			body: `<div><h2>The vote</h2>` + prose + prose + `</div>`,
			want: []string{"The vote", "The council met"},
		},
		{
			name:    "share links after the last prose block trimmed, a plain sign-off kept",
			body:    `<div>` + prose + prose + `<p>Reporting by Jane Doe.</p><p>Share: <a href="/t">Twitter</a></p></div>`,
			want:    []string{"Reporting by Jane Doe"},
			notWant: []string{"Twitter"},
		},
		{
			name: "text written straight into a container beside its blocks",
			body: `<div class="x"><div class="menu-ish"><a href="/">Home</a></div><div class="body-text">The council met on Tuesday, after weeks of delay, and voted to rebuild the old bridge.<div class="br"></div>It has been closed to traffic since the spring floods damaged its piers, officials said.</div></div>`,
			want: []string{"voted to rebuild", "officials said"},
		},
		{
			name:    "prose in a script without spaces",
			body:    `<div class="nav"><a href="/">首页</a></div><div>` + strings.Repeat(`<p>市议会周二在推迟数周后举行会议，投票决定重建河上的旧桥，这座桥自春季洪水损坏桥墩以来一直禁止通行。</p>`, 3) + `</div>`,
			want:    []string{"市议会周二"},
			notWant: []string{"首页"},
		},
		{
			name: "code block kept wherever it is",
			body: `<div>` + prose + `<pre>go test ./...</pre>` + prose + `</div>`,
			want: []string{"go test ./..."},
		},
		{
			name: "an article split into sections at different depths joined up, a teaser inside a link left out",
			body: `<div class="post"><section><div><div class="lead">` + strings.Repeat(prose, 8) + `</div></div></section>` +
				`<div class="wrap"><div class="c"><div class="inner"><section><div class="rest">` + strings.Repeat(second, 4) + `</div></section></div></div></div>` +
				`<div class="cards"><a href="/other"><div>` + strings.Repeat(teaser, 6) + `</div></a></div></div>`,
			want:    []string{"The council met", "The contractor"},
			notWant: []string{"In other news"},
		},
		{
			name: "a page without an article keeps its text",
			body: `<div><a href="/a">Sports</a></div><div><p>Weather: sunny.</p><p>Markets: up.</p></div>`,
			want: []string{"Weather: sunny.", "Markets: up."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkContent(t, Find(parse(t, "<html><body>"+tt.body+"</body></html>")), tt.want, tt.notWant)
		})
	}
}

// checkContent fails t unless the content found holds every string of
// want and none of notWant.
func checkContent(t *testing.T, got *html.Node, want, notWant []string) {
	t.Helper()
	if got == nil {
		t.Fatal("no content found")
	}
	text := textOf(got)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("content lacks %q; got %q", w, text)
		}
	}
	for _, w := range notWant {
		if strings.Contains(text, w) {
			t.Errorf("content has %q; got %q", w, text)
		}
	}
}

// TestFindWith covers the mechanisms Tuning switches on one at a time:
// Fallback (content that holds a small part of the page's text, after
// pruning, gives way to that text) and Lead (a lead paragraph set apart
// from the article's body, in a header beside the headline, joins it).
func TestFindWith(t *testing.T) {
	var steps strings.Builder
	for i := range 60 {
		fmt.Fprintf(&steps, "<li>Stir the pot, step %d of the method</li>", i+1)
	}
	recipe := `<nav><a href="/">Home</a> <a href="/recipes">Recipes</a></nav><div class="intro">` + prose + second + `</div><div><ol>` + steps.String() + `</ol></div>`
	article := `<nav><a href="/">Home</a> <a href="/recipes">Recipes</a></nav><div class="story">` + prose + second + `</div><div><p>Short note.</p></div>`
	const lead = `<p class="lead">The old bridge will be rebuilt, the council decided on Tuesday.</p>`
	body := strings.Repeat(prose+second, 3)
	near := `<div class="head"><h1>Bridge to be rebuilt</h1>` + lead + `<span>By A. Writer</span></div><div class="body">` + body + `</div>`
	far := `<div class="head"><h1>Bridge to be rebuilt</h1>` + lead + `<h2>A long, long subtitle that says a great deal more about the story than a headline should say</h2><h3>By A. Writer, staff reporter at the town hall</h3></div><div class="body">` + body + `</div>`
	teaserBefore := `<div class="other">` + teaser + `</div><div class="body">` + body + `</div>`
	caption := `<div class="head"><h1>Bridge to be rebuilt</h1><div class="image"><img src="/b.jpg" alt="The bridge"><p>The old bridge, seen from the east bank on a winter morning last year.</p></div></div><div class="body">` + body + `</div>`
	byline := `<div class="head"><h1>Bridge to be rebuilt</h1><p>By <a href="/staff/writer">A. Writer</a>, on Tuesday the 4th of May at eleven in the morning.</p></div><div class="body">` + body + `</div>`
	tests := []struct {
		name           string
		page           string
		fallback, lead int
		want, notWant  []string
	}{
		{"fallback off: the prose container alone", recipe, 0, 0, []string{"The council met"}, []string{"step 60", "Home"}},
		{"fallback on: the page less its boilerplate when it has four times the text", recipe, 400, 0, []string{"The council met", "step 1 of", "step 60"}, []string{"Home"}},
		{"fallback on: an article holding most of the page is kept as chosen", article, 400, 0, []string{"The council met", "The contractor"}, []string{"Short note", "Home"}},
		{"lead off: the body alone", near, 0, 0, []string{"The council met"}, []string{"will be rebuilt"}},
		{"lead on: the lead joins the body", near, 0, 100, []string{"will be rebuilt", "The council met"}, []string{"By A. Writer"}},
		{"lead on: not across more text than allowed", far, 0, 100, []string{"The council met"}, []string{"will be rebuilt"}},
		{"lead on: across the text allowed", far, 0, 200, []string{"will be rebuilt", "The council met"}, nil},
		{"lead on: a caption beside an image is not a lead", caption, 0, 100, []string{"The council met"}, []string{"seen from the east bank"}},
		{"lead on: a paragraph with a link (a byline) is not a lead", byline, 0, 100, []string{"The council met"}, []string{"eleven in the morning"}},
		{"lead on: prose right before the content joins it, whatever it is", teaserBefore, 0, 200, []string{"In other news", "The council met"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := DefaultTuning()
			tu.Fallback, tu.Lead = tt.fallback, tt.lead
			tu.LeadHeading = 0 // the subtitles here are not the leads (see TestFindWithKnobs)
			checkContent(t, FindWith(parse(t, "<html><body>"+tt.page+"</body></html>"), tu), tt.want, tt.notWant)
		})
	}
}

// TestFindWithKnobs covers the later Tuning mechanisms, each off (as
// before it) and on: LeadBlocks, HeaderLinks, CousinLevels, LeadImage and
// LeadHeading, LinkedProse, SameClass, WholeLead, TextTailBoxes, TailLevels, FormBox, BoxTitle,
// Intro, TailLinks, TableLinks, InlineNames, Orphan, CousinProse, ImageFirst, Narrow, FallbackText
// (kept), ParentProse, Tail, LeadKept, Captions, Teasers, TextTail, ReplyForm, MidLinks and
// WholeProse (tried, not kept).
func TestFindWithKnobs(t *testing.T) {
	body := strings.Repeat(prose+second, 3)
	const standfirst = "The old bridge will be rebuilt, the council decided on Tuesday."
	divLead := `<div class="head"><h1>Bridge to be rebuilt</h1><div class="standfirst">` + standfirst + `</div></div><div class="body">` + body + `</div>`
	deck := `<div class="head"><h1>Bridge to be rebuilt</h1><h2>` + standfirst + `</h2></div><div class="body">` + body + `</div>`
	headline := `<div class="head"><h1>` + standfirst + `</h1></div><div class="body">` + body + `</div>`
	header := `<header><h1>Bridge to be rebuilt</h1><p>` + standfirst + `</p></header><div class="body">` + body + `</div>`
	siteHeader := `<header><a href="/">Home</a> <a href="/news">News and more news</a> <a href="/sport">Sport</a><p>` + standfirst + `</p></header><div class="body">` + body + `</div>`
	// The best container four wrappers down (each beside a stub, so that
	// none is an only child), and a section of the article beside the
	// outermost: five levels above the best container.
	var deep strings.Builder
	deep.WriteString(`<div id="page">`)
	for range 5 {
		deep.WriteString(`<div><div>stub</div>`)
	}
	deep.WriteString(`<div id="main">` + body + `</div>`)
	for range 5 {
		deep.WriteString(`</div>`)
	}
	deep.WriteString(`<div class="part">` + teaser + teaser + teaser + teaser + `</div></div>`)
	// The same nine wrappers down: a section nine levels above.
	var deeper strings.Builder
	deeper.WriteString(`<div id="page">`)
	for range 9 {
		deeper.WriteString(`<div><div>stub</div>`)
	}
	deeper.WriteString(`<div id="main">` + body + `</div>`)
	for range 9 {
		deeper.WriteString(`</div>`)
	}
	deeper.WriteString(`<div class="part">` + teaser + teaser + teaser + teaser + `</div></div>`)
	// The best container, and beside it in the same wrapper a paragraph
	// two levels down (too weak to join as a sibling or a cousin).
	wrapped := `<div id="page"><div id="wrap"><div id="main">` + body + `</div><div><div>` + teaser + `</div></div></div><div>stub</div></div>`
	var teasers strings.Builder
	teasers.WriteString(`<div class="story">` + body + `<h2>Read on</h2>`)
	for i := range 3 {
		fmt.Fprintf(&teasers, `<h3><a href="/%d">Library hours, story %d</a></h3>%s`, i, i, teaser)
	}
	teasers.WriteString(`</div>`)
	const deckText = "The old bridge over the river will be rebuilt within two years while one lane stays open to traffic"
	hero := `<div class="head"><img src="/b.jpg" alt="The bridge"><h1>Bridge to be rebuilt</h1><p>` + standfirst + `</p></div><div class="body">` + body + `</div>`
	bylineFirst := `<div class="head"><h1>Bridge to be rebuilt</h1><h2>` + deckText + `</h2></div><div class="body"><div>By A. Writer</div>` + body + body + `</div>` // past ShortContent at 1,200 (the rows turn it off)
	const sources = `<p>Read the <a href="/r">full council report</a> and the <a href="/m">meeting minutes</a> for the details of the vote.</p>`
	linkedEnd := `<div class="story">` + body + sources + `</div>`
	const longCaption = "The old bridge, seen from the east bank, where the floods of the spring tore two piers away and left the road above them hanging over the river."
	linkedSection := `<div class="story">` + body + `<h2>Sources</h2>` + strings.Repeat(sources, 3) + prose + `</div>`
	// Two boxes of one class far apart in the tree (the second too weak
	// and too far to join as a sibling or a cousin), and a box of that
	// class holding teasers.
	sameClass := `<div id="page"><div><div><div><div><div class="box">` + body + `</div><div>stub</div></div><div>stub</div></div><div>stub</div></div><div>stub</div></div>` +
		`<div><div><div class="box">` + teaser + `</div></div><div>stub</div></div>` +
		`<div class="box"><h3><a href="/other">Another story</a></h3>` + second + `</div></div>`
	// A post without paragraphs to speak of (no container holds
	// minContent runes of them), past ShortContent at 1,200 (the rows turn it off).
	noArticle := `<div><h2>Bridge works, day one</h2><div>Tuesday</div></div><div>` + strings.Repeat("<div><span>a few words</span></div>", 200) + `</div><div>` + prose + `</div>`
	figure := `<div class="story">` + prose + `<figure><img src="/b.jpg" alt=""><figcaption>` + longCaption + `</figcaption></figure><figure><img src="/c.jpg" alt=""><figcaption>Photo: A. Writer</figcaption></figure>` + body + `</div>`
	// A lead before the hero image, the headline outside their container.
	imageAfter := `<h1>Bridge to be rebuilt</h1><div class="head"><p>` + standfirst + `</p><img src="/b.jpg" alt="The bridge"></div><div class="body">` + body + `</div>`
	// A container marked as the article body around its text and a
	// note before it.
	named := `<div class="article-content" itemprop="articleBody"><div class="intro"><p>We want to hear what you think about this story, so <a href="/letters">write to us</a> today.</p></div><div class="text">` + body + `</div></div>`
	// A short article under a long list of links, with its heading.
	var linkList strings.Builder
	linkList.WriteString(`<div class="top"><h2>Most read</h2><ul>`)
	for i := range 60 {
		fmt.Fprintf(&linkList, `<li><a href="/%d">Library hours, story number %d</a></li>`, i, i)
	}
	linkList.WriteString(`</ul></div><div class="story">` + prose + second + `</div>`)
	card := `<div class="card"><img src="/b.jpg" alt="The bridge"><h3><a href="/bridge">Bridge to be rebuilt</a></h3><p>` + standfirst + `</p></div><div class="body">` + body + `</div>`
	openDeck := `<div class="head"><h1>Bridge to be rebuilt</h1><h2>` + deckText + `</h2></div><div class="body">` + body + `</div>`
	// The article's text container, with a short closing line, then a
	// lone paragraph outside it (an advertisement's summary, joined as a
	// paragraph sibling); and two such paragraphs, a text container of
	// their own (a section of the article).
	const ad = `<p>Find out how, with our planning tools, you can plan your sales for the year ahead, week by week.</p>`
	boxes := `<div class="post"><div class="text">` + body + `<p>Updated Tuesday</p></div><h3>You may also like</h3>` + ad + `</div>`
	section := `<div class="post"><div class="text">` + body + `<p>Updated Tuesday</p></div><h3>You may also like</h3>` + ad + ad + `</div>`
	// Paragraphs each in a wrapper of their own, then a box with a short
	// line after them.
	paras := `<div class="post">` + strings.Repeat(`<div class="para">`+prose+`</div><div class="para">`+second+`</div>`, 3) +
		`<div class="box"><div>Most read this week</div></div></div>`
	// A comment form inside the article's container, its note beside
	// the text box.
	form := `<div class="post">` + body + `<div class="box"><p>You must be logged in to post a comment</p><textarea></textarea></div></div>`
	// A newsletter's sign-up inside the article's container, and a search
	// form written straight into it.
	signup := `<div class="post">` + body + `<div class="box"><p>Our news in your inbox every week</p><form><input type="email"></form></div></div>`
	search := `<div class="post">` + body + `<form><input type="search"></form><p>Updated Tuesday</p></div>`
	// Boxes between the article's paragraphs: one of linked headlines
	// (trimmed as a link list), one named as related stories (pruned),
	// each under a title; and a box whose title heads prose of its own.
	const links = `<ul><li><a href="/a">Library hours extended on Thursdays</a></li><li><a href="/b">Ferry timetable changes in May</a></li></ul>`
	titled := `<div class="post">` + prose + `<div class="box"><h4>Read also</h4>` + links + `</div>` + second +
		`<div class="box"><h3>Most read</h3><div class="related">` + teaser + `</div></div>` + body +
		`<div class="box"><h3>The tender</h3>` + second + `</div>` + prose + `</div>`
	// A line introducing a link list written into the article's text,
	// and one introducing the article's own paragraph.
	// A closing line with a link after the article's last paragraph, and
	// one that is mostly a link.
	closing := `<div class="post">` + body + `<p>Written by A. Writer, who blogs at <a href="/w">her site</a></p><p>Photos and more at <a href="/t">the town site</a></p></div>`
	// Tables between the article's paragraphs: one comparing linked
	// models (more than half links), one of links only.
	const row = `<tr><td><a href="/m">Riverside Model A Deluxe</a></td><td>two lanes wide</td></tr>`
	tables := `<div class="post">` + prose + `<table>` + row + row + `</table>` + second +
		`<table><tr><td><a href="/x">Ferry timetable</a></td><td><a href="/y">Bus timetable</a></td></tr></table>` + body + `</div>`
	// A sentence of the article's text between its paragraphs, mostly
	// its links.
	people := `<div class="post">` + prose + `<p>It was signed by <a href="/a">Anna Berg</a>, <a href="/b">Carl Dahl</a> and <a href="/c">Eva Falk</a>.</p>` + body + `</div>`
	// A dateline named as such inside the first paragraph, and a byline
	// alone in one.
	dateline := `<div class="post"><p><span class="byline">By A. Writer</span></p><p><span class="dateline">KOBE –</span> ` + strings.TrimPrefix(prose, "<p>") + second + body + `</div>`
	// An author's box under its title between sections, an
	// advertisement between a section's title and its text, and a short
	// table (a title by its length) before a box of related links.
	orphan := `<div class="post">` + prose + `<h4>About the author</h4><div class="author">A. Writer covers roads and bridges.</div><h2>The vote</h2>` + second +
		`<h4>The tender</h4><div class="ad">Buy now</div>` + body +
		`<table><tr><th>Span</th><td>80 m</td></tr></table><div class="related"><a href="/x">Other bridges</a></div></div>`
	intro := `<div class="post">` + prose + `<p><strong>Read also:</strong></p>` + links + second + `<p>The plan:</p>` + body + `</div>`
	// Two paragraphs of prose in a box beside the article, short of
	// cousinParagraphs (a page builder's column, or a bio), and a box
	// of one teaser under a linked heading.
	cousin := `<div class="post"><article>` + strings.Repeat(prose, 8) + `</article><div class="embed"><div><div><div class="c1">` + strings.Repeat(second, 2) + `</div></div></div></div>` +
		`<div class="more"><div><h3><a href="/other">Another story</a></h3>` + teaser + `</div></div></div>`
	tests := []struct {
		name          string
		page          string
		tune          func(*Tuning)
		want, notWant []string
	}{
		{"lead blocks off: a <div> lead is left out", divLead, func(tu *Tuning) { tu.LeadBlocks = false }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"lead blocks on: a <div> lead joins the body", divLead, func(tu *Tuning) { tu.LeadBlocks = true }, []string{standfirst, "The council met"}, []string{"Bridge to be"}},
		{"lead blocks off: a deck is left out", deck, func(tu *Tuning) { tu.LeadBlocks = false }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"lead blocks on: a deck joins the body", deck, func(tu *Tuning) { tu.LeadBlocks = true }, []string{standfirst, "The council met"}, nil},
		{"lead blocks on: the headline is not a lead", headline, func(tu *Tuning) { tu.LeadBlocks = true }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"header links off: an article's <header> is pruned", header, func(tu *Tuning) { tu.HeaderLinks = 0 }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"header links on: an article's <header> keeps its lead", header, func(tu *Tuning) { tu.HeaderLinks = 20 }, []string{standfirst, "The council met"}, nil},
		{"header links on: the site's <header>, mostly links, is pruned", siteHeader, func(tu *Tuning) { tu.HeaderLinks = 20 }, []string{"The council met"}, []string{"will be rebuilt", "Home"}},
		{"cousin levels 4: a section five levels up is left out", deep.String(), func(tu *Tuning) { tu.CousinLevels = 4 }, []string{"The council met"}, []string{"In other news"}},
		{"cousin levels 6: a section five levels up joins", deep.String(), func(tu *Tuning) { tu.CousinLevels = 6 }, []string{"The council met", "In other news"}, nil},
		{"cousin levels 6: a section nine levels up is left out", deeper.String(), func(tu *Tuning) { tu.CousinLevels = 6 }, []string{"The council met"}, []string{"In other news"}},
		{"cousin levels 10: a section nine levels up joins", deeper.String(), func(tu *Tuning) { tu.CousinLevels = 10 }, []string{"The council met", "In other news"}, nil},
		{"lead image off: a paragraph beside the hero image is a caption", hero, func(tu *Tuning) { tu.LeadImage = false }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"lead image on: beside the hero image and the headline, it is the lead", hero, func(tu *Tuning) { tu.LeadImage = true }, []string{standfirst, "The council met"}, nil},
		{"lead image on: a teaser card's paragraph, under its linked heading, is not a lead", card, func(tu *Tuning) { tu.LeadImage = true }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"image first off: a paragraph before the hero image is a caption", imageAfter, func(tu *Tuning) { tu.ImageFirst = false }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"image first on: it is the lead", imageAfter, func(tu *Tuning) { tu.ImageFirst = true }, []string{standfirst, "The council met"}, nil},
		{"image first on: a paragraph after the image is still a caption", hero, func(tu *Tuning) { tu.ImageFirst = true; tu.LeadImage = false }, []string{"The council met"}, []string{"will be rebuilt"}},
		{"narrow off: the best container's note is kept", named, func(tu *Tuning) { tu.Narrow = 0 }, []string{"The council met", "hear what you think"}, nil},
		{"narrow 90: the child holding the prose is the content", named, func(tu *Tuning) { tu.Narrow = 90 }, []string{"The council met"}, []string{"hear what you think"}},
		{"fallback text off: the page of links is four times the article, the fallback wins (its heading kept: box titles and orphans off)", linkList.String(), func(tu *Tuning) { tu.Fallback, tu.FallbackText, tu.BoxTitle, tu.Orphan = 400, 0, 0, 0 }, []string{"The council met", "Most read"}, nil},
		{"fallback text 300: the page's text outside links is not, the article stays", linkList.String(), func(tu *Tuning) { tu.Fallback, tu.FallbackText, tu.BoxTitle, tu.Orphan = 400, 300, 0, 0 }, []string{"The council met", "The contractor"}, []string{"Most read"}},
		{"lead heading off: a deck without a full stop is left out", openDeck, func(tu *Tuning) { tu.LeadHeading = 0 }, []string{"The council met"}, []string{"one lane stays open"}},
		{"lead heading on: a long deck joins however it ends", openDeck, func(tu *Tuning) { tu.LeadHeading = 60 }, []string{deckText, "The council met"}, nil},
		{"lead heading on: a short sub-heading is not a lead", openDeck, func(tu *Tuning) { tu.LeadHeading = 100 }, []string{"The council met"}, []string{"one lane stays open"}},
		{"lead kept off: a deck before the body's byline is trimmed with it", bylineFirst, func(tu *Tuning) { tu.LeadKept, tu.ShortContent = false, 0 }, []string{"The council met"}, []string{"one lane stays open", "By A. Writer"}},
		{"lead kept on: the deck stays, the byline goes", bylineFirst, func(tu *Tuning) { tu.LeadKept, tu.ShortContent = true, 0 }, []string{deckText, "The council met"}, []string{"By A. Writer"}},
		{"linked prose off: a closing paragraph two-fifths links is trimmed", linkedEnd, func(tu *Tuning) { tu.LinkedProse = 0 }, []string{"The council met"}, []string{"meeting minutes"}},
		{"linked prose 50: the closing paragraph is the article's", linkedEnd, func(tu *Tuning) { tu.LinkedProse = 50 }, []string{"The council met", "full council report and the meeting minutes for the details"}, nil},
		{"linked prose 40: not past its bound", linkedEnd, func(tu *Tuning) { tu.LinkedProse = 40 }, []string{"The council met"}, []string{"meeting minutes"}},
		{"captions off: every <figcaption> is pruned", figure, func(tu *Tuning) { tu.Captions = 0 }, []string{"The council met"}, []string{"east bank", "Photo:"}},
		{"captions 100: a long caption stays, a credit goes", figure, func(tu *Tuning) { tu.Captions = 100 }, []string{"The council met", longCaption}, []string{"Photo:"}},
		{"teasers on: the content ends at the heading over linked headlines", teasers.String(), func(tu *Tuning) { tu.Teasers = 10 }, []string{"The council met"}, []string{"Read on", "In other news"}},
		{"teasers on: a section whose prose links its sources is not teasers", linkedSection, func(tu *Tuning) { tu.Teasers = 10 }, []string{"The council met", "Sources", "meeting minutes"}, nil},
		{"same class off: a box of the best container's class far away is left out", sameClass, func(tu *Tuning) { tu.SameClass = false; tu.CousinProse = 0 }, []string{"The council met"}, []string{"In other news"}},
		{"same class on: the box joins, the teaser box of that class does not", sameClass, func(tu *Tuning) { tu.SameClass = true }, []string{"The council met", "In other news"}, []string{"Another story"}},
		{"whole lead off: a page without an article loses what precedes its first prose", noArticle, func(tu *Tuning) { tu.WholeLead, tu.ShortContent = false, 0 }, []string{"The council met"}, []string{"Bridge works, day one"}},
		{"whole lead on: a page without an article keeps it", noArticle, func(tu *Tuning) { tu.WholeLead, tu.ShortContent = true, 0 }, []string{"Bridge works, day one", "The council met"}, nil},
		{"whole prose off: a page without an article is returned whole", noArticle, func(tu *Tuning) { tu.WholeProse = 0 }, []string{"Bridge works, day one", "a few words", "The council met"}, nil},
		{"whole prose 90: the element holding its prose is returned", noArticle, func(tu *Tuning) { tu.WholeProse = 90 }, []string{"The council met"}, []string{"Bridge works, day one", "a few words"}},
		{"parent prose off: the best container alone", wrapped, func(tu *Tuning) { tu.ParentProse = 0 }, []string{"The council met"}, []string{"In other news"}},
		{"parent prose on: the wrapper, adding prose only, is the content", wrapped, func(tu *Tuning) { tu.ParentProse = 90 }, []string{"The council met", "In other news"}, []string{"stub"}},
		{"text tail boxes off: the box after the article is kept", boxes, func(tu *Tuning) { tu.TextTailBoxes = 0 }, []string{"The council met", "Updated Tuesday", "plan your sales for the year"}, nil},
		{"text tail boxes on: the content ends with the article's container", boxes, func(tu *Tuning) { tu.TextTailBoxes = 10 }, []string{"The council met", "Updated Tuesday"}, []string{"plan your sales for the year"}},
		{"text tail boxes on: a box of two paragraphs is a text container", section, func(tu *Tuning) { tu.TextTailBoxes = 10 }, []string{"The council met", "plan your sales for the year"}, nil},
		{"text tail on: the article's closing line goes too", boxes, func(tu *Tuning) { tu.TextTail = 10; tu.TextTailBoxes = 0 }, []string{"The council met"}, []string{"Updated Tuesday", "plan your sales for the year"}},
		{"tail levels off: a short line in a box after the last prose block is kept", paras, func(tu *Tuning) { tu.TailLevels = 0 }, []string{"The council met", "Most read this week"}, nil},
		{"tail levels 1: it is not the article's", paras, func(tu *Tuning) { tu.TailLevels = 1 }, []string{"The council met", "The contractor"}, []string{"Most read this week"}},
		{"tail levels 1: a sign-off in the last paragraph's container stays", boxes, func(tu *Tuning) { tu.TailLevels = 1 }, []string{"The council met", "Updated Tuesday"}, nil},
		{"reply form off: the form's note stays", form, func(tu *Tuning) { tu.ReplyForm = 0 }, []string{"The council met", "logged in"}, nil},
		{"reply form 100: the note goes with the form", form, func(tu *Tuning) { tu.ReplyForm = 100 }, []string{"The council met"}, []string{"logged in"}},
		{"form box off: a sign-up's words stay", signup, func(tu *Tuning) { tu.FormBox, tu.Orphan = 0, 0 }, []string{"The council met", "in your inbox"}, nil},
		{"form box 100: they go with the form", signup, func(tu *Tuning) { tu.FormBox = 100 }, []string{"The council met"}, []string{"in your inbox"}},
		{"form box 100: a form in the article takes only itself", search, func(tu *Tuning) { tu.FormBox = 100 }, []string{"The council met", "Updated Tuesday"}, nil},
		{"box title off: a box's title outlives its links", titled, func(tu *Tuning) { tu.BoxTitle, tu.Orphan = 0, 0 }, []string{"The council met", "Read also", "Most read"}, []string{"Library hours", "In other news"}},
		{"box title on: the title goes with them", titled, func(tu *Tuning) { tu.BoxTitle = 100 }, []string{"The council met", "The tender"}, []string{"Read also", "Most read", "Library hours", "In other news"}},
		{"intro off: a link list's introduction outlives it", intro, func(tu *Tuning) { tu.Intro = 0 }, []string{"The council met", "Read also:", "The plan:"}, []string{"Library hours"}},
		{"intro on: it goes with the list, an introduction to prose stays", intro, func(tu *Tuning) { tu.Intro = 40 }, []string{"The council met", "The plan:"}, []string{"Read also:", "Library hours"}},
		{"tail links off: a closing line with a link is trimmed", closing, func(tu *Tuning) { tu.TailLinks = 0 }, []string{"The council met"}, []string{"Written by", "Photos and more"}},
		{"tail links 35: it stays, a line two-fifths links does not", closing, func(tu *Tuning) { tu.TailLinks = 35 }, []string{"The council met", "Written by A. Writer, who blogs at her site"}, []string{"Photos and more"}},
		{"table links off: a table more than half links is trimmed", tables, func(tu *Tuning) { tu.TableLinks = 0 }, []string{"The council met"}, []string{"Riverside Model A", "Ferry timetable"}},
		{"table links 70: it stays, a table of links does not", tables, func(tu *Tuning) { tu.TableLinks = 70 }, []string{"The council met", "Riverside Model A", "two lanes wide"}, []string{"Ferry timetable"}},
		{"mid links off: a sentence of links between paragraphs is trimmed", people, func(tu *Tuning) { tu.MidLinks = 0 }, []string{"The council met"}, []string{"Carl Dahl"}},
		{"mid links 90: it stays", people, func(tu *Tuning) { tu.MidLinks = 90 }, []string{"The council met", "It was signed by Anna Berg, Carl Dahl and Eva Falk."}, nil},
		{"inline names off: a dateline named as such is pruned from its sentence", dateline, func(tu *Tuning) { tu.InlineNames = 0 }, []string{"The council met"}, []string{"KOBE", "By A. Writer"}},
		{"inline names 20: it stays, a byline alone in its paragraph does not", dateline, func(tu *Tuning) { tu.InlineNames = 20 }, []string{"KOBE – The council met"}, []string{"By A. Writer"}},
		{"orphan off: the author box's title outlives it", orphan, func(tu *Tuning) { tu.Orphan = 0 }, []string{"The council met", "About the author", "The tender"}, []string{"covers roads", "Buy now"}},
		{"orphan 30: it goes with the box, a section title over prose stays", orphan, func(tu *Tuning) { tu.Orphan = 30 }, []string{"The council met", "The vote", "The tender", "80 m"}, []string{"About the author", "covers roads", "Buy now", "Other bridges"}},
		{"cousin prose off: two paragraphs beside the article are not a section of it", cousin, func(tu *Tuning) { tu.CousinProse = 0 }, []string{"The council met"}, []string{"The contractor", "In other news"}},
		{"cousin prose 20: they join, a teaser under a linked heading does not", cousin, func(tu *Tuning) { tu.CousinProse = 20 }, []string{"The council met", "The contractor"}, []string{"In other news"}},
		{"tail off: teasers after the article are kept", teasers.String(), func(tu *Tuning) { tu.Tail = 0 }, []string{"The council met", "In other news"}, nil},
		{"tail on: the content ends at the teasers' heading", teasers.String(), func(tu *Tuning) { tu.Tail = 10 }, []string{"The council met"}, []string{"Read on", "In other news", "Library hours"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := DefaultTuning()
			tu.Fallback = 0 // the content chosen, not the page's text
			tt.tune(&tu)
			checkContent(t, FindWith(parse(t, "<html><body>"+tt.page+"</body></html>"), tu), tt.want, tt.notWant)
		})
	}
}

func TestFindNoText(t *testing.T) {
	for _, page := range []string{"", "<html><body></body></html>", "<div><img src=x></div>", "<script>var a = 1</script>"} {
		if got := Find(parse(t, page)); got != nil {
			t.Errorf("Find(%q) = %q, want nil", page, textOf(got))
		}
	}
}

func TestNamedBoilerplate(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"", false},
		{"comments", true},
		{"comment-content", true}, // a strong word wins over a content word
		{"article-body", false},
		{"nav", true},
		{"nav main-content", false}, // a weak word is rescued by a content word
		{"site-header", true},
		{"header-image", true},
		{"shadow download", false}, // "ad" only as a whole word
		{"ad-slot", true},
		{"Social_Share", true},
		{"entry-meta", false},
		{"post-meta byline", true},
		{"PromoSmall-wrapper", true}, // camel case splits into words
		{"GoogleDfpAd-adCaption", true},
		{"articleBody", false},
		{"OUTBRAIN", true},
		{"Xbox360Ads", true},
		{"shadowBox", false},
	}
	for _, tt := range tests {
		if got := namedBoilerplate(tt.name); got != tt.want {
			t.Errorf("namedBoilerplate(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	long := strings.Repeat("word ", 40)
	tests := []struct {
		name string
		html string
		want class
	}{
		{"long prose", "<p>" + long + "</p>", good},
		{"sentence", "<p>The bridge will reopen next year, the council said on Tuesday.</p>", good},
		{"too short a sentence", "<p>The bridge will reopen, they said.</p>", short},
		{"short label", "<p>Photo gallery</p>", short},
		{"long but unfinished and short", "<p>Related coverage from around the region this week</p>", short},
		{"link list", `<p><a href="/a">` + long + `</a></p>`, bad},
		{"copyright", "<p>© 2024 Example Media. All rights reserved.</p>", bad},
		{"code", "<pre>x</pre>", good},
		{"mostly links but long prose around them", `<p>` + long + long + `<a href="/a">` + long + `</a></p>`, short},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := findBody(parse(t, "<body>"+tt.html+"</body>"))
			st := measure(body)
			n := body.FirstChild
			if got := classify(n, st.of(n)); got != tt.want {
				t.Errorf("classify = %v, want %v (stat %+v)", got, tt.want, st.of(n))
			}
		})
	}
}

func TestTextStat(t *testing.T) {
	tests := []struct {
		in            string
		runes, commas int
	}{
		{"", 0, 0},
		{"  a b\n\tc ", 3, 0},
		{"a, b, c", 5, 2},
		{"市议会，投票、重建", 9, 2},
		{"a\u00a0b", 2, 0}, // a no-break space is space
	}
	for _, tt := range tests {
		s := textStat(tt.in)
		if s.runes != tt.runes || s.commas != tt.commas {
			t.Errorf("textStat(%q) = %d runes %d commas, want %d, %d", tt.in, s.runes, s.commas, tt.runes, tt.commas)
		}
	}
}

func TestEndsSentence(t *testing.T) {
	for s, want := range map[string]bool{
		"It rained.": true, "Did it?": true, "“Yes,” he said.”": true, "重建。": true, "Menu": false, "": false, "Read more »": false,
	} {
		if got := endsSentence(s); got != want {
			t.Errorf("endsSentence(%q) = %v, want %v", s, got, want)
		}
	}
}
