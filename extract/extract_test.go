package extract

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"testing"
)

// article wraps body content in a page with the usual boilerplate around
// it, and enough text for the extractors to recognise an article.
func article(body string) string {
	return `<!DOCTYPE html><html><head><title>Test Article Title</title>
<meta property="og:site_name" content="Example News"></head><body>
<nav class="main-nav"><ul><li><a href="/">Home</a></li><li><a href="/world">World news section</a></li><li><a href="/sport">Sport section</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. Accept all cookies?</div>
<main><article>
<h1>Test Article Title</h1>
<p>The first paragraph of the article explains what happened in some detail, so that the extractors see a real body of text here.</p>
` + body + `
<p>The last paragraph wraps the story up with a few closing remarks that belong to the article and should be kept.</p>
</article></main>
<footer class="site-footer"><p>Copyright 2024 Example News. All rights reserved. Contact us at the newsroom.</p></footer>
</body></html>`
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestExtractStructure(t *testing.T) {
	filler := `<p>Another paragraph of ordinary article text keeps the main content long enough to be found by the extractor.</p>`
	tests := []struct {
		name    string
		page    string
		pageURL string
		want    []string // substrings of the Markdown
		notWant []string
	}{
		{
			name: "paragraphs on separate lines",
			page: article(filler),
			want: []string{"explains what happened in some detail, so that the extractors see a real body of text here.\n\nAnother paragraph"},
		},
		{
			name:    "boilerplate dropped",
			page:    article(filler),
			want:    []string{"The last paragraph wraps the story up"},
			notWant: []string{"World news section", "Sport section", "We use cookies", "All rights reserved"},
		},
		{
			name:    "code block keeps newlines, indentation and language",
			page:    article(filler + "<pre><code class=\"language-go\">func main() {\n\tif x {\n\t\tfmt.Println(\"hi\")\n\t}\n}</code></pre>" + filler),
			want:    []string{"```go\nfunc main() {\n\tif x {\n\t\tfmt.Println(\"hi\")\n\t}\n}\n```"},
			notWant: []string{"`func main"},
		},
		{
			name: "pre without code element is a code block",
			page: article(filler + "<pre>line one\n    indented two\nline three</pre>" + filler),
			want: []string{"```\nline one\n    indented two\nline three\n```"},
		},
		{
			name: "table cells kept apart",
			page: article(filler + `<table><tr><th>City</th><th>Population</th></tr><tr><td>Paris</td><td>2100000</td></tr><tr><td>Lyon</td><td>520000</td></tr></table>` + filler),
			want: []string{"| City | Population |", "| Paris | 2100000 |"},
		},
		{
			name:    "table with br in cells is kept",
			page:    article(filler + `<table><tr><th>Name</th><th>Address</th></tr><tr><td>Office</td><td>1 Main Street<br>Springfield</td></tr><tr><td>Depot</td><td>9 Side Road<br>Shelbyville</td></tr></table>` + filler),
			want:    []string{"Office", "1 Main Street", "Springfield", "Shelbyville"},
			notWant: []string{"StreetSpringfield", "OfficeMain"},
		},
		{
			name:    "links resolved against the page URL",
			page:    article(`<p>Read the <a href="/reports/2024.pdf">annual report</a> and the <a href="notes.html">notes</a> for the full numbers behind this story.</p>` + filler),
			pageURL: "https://news.example.com/world/story.html",
			want:    []string{"[annual report](https://news.example.com/reports/2024.pdf)", "[notes](https://news.example.com/world/notes.html)"},
		},
		{
			name:    "links resolved against base href",
			page:    strings.Replace(article(`<p>Read the <a href="report.pdf">annual report</a> for the full numbers behind this story and more.</p>`+filler), "<head>", `<head><base href="https://cdn.example.org/files/">`, 1),
			pageURL: "https://news.example.com/world/story.html",
			want:    []string{"[annual report](https://cdn.example.org/files/report.pdf)"},
		},
		{
			name:    "soft hyphens removed, no-break spaces made plain",
			page:    article(`<p>Die Donau&shy;dampf&shy;schiff&shy;fahrt fuhr 10&nbsp;km weit, um 8&#8239;Uhr, mit vielen Gästen an Bord.</p>` + filler),
			want:    []string{"Donaudampfschifffahrt", "10 km weit", "8 Uhr"},
			notWant: []string{"\u00ad", "\u00a0", "\u202f", "&nbsp;", "&shy;"},
		},
		{
			name: "lists kept",
			page: article(filler + `<ul><li>first point of the list with words</li><li>second point of the list with words</li></ul>` + filler),
			want: []string{"- first point of the list with words\n- second point of the list with words"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := mustURL(t, "https://news.example.com/story")
			if tt.pageURL != "" {
				u = mustURL(t, tt.pageURL)
			}
			doc, err := Extract(context.Background(), []byte(tt.page), u, Options{})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(doc.Markdown, w) {
					t.Errorf("Markdown lacks %q\n--- got:\n%s", w, doc.Markdown)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(doc.Markdown, w) {
					t.Errorf("Markdown has %q\n--- got:\n%s", w, doc.Markdown)
				}
			}
		})
	}
}

func TestExtractTitle(t *testing.T) {
	tests := []struct {
		name, head, body, want string
	}{
		{"title element", "<title>Plain Title</title>", "", "Plain Title"},
		{"og:title preferred", `<title>Plain Title | Site</title><meta property="og:title" content="The Real Title">`, "", "The Real Title"},
		{"h1 when no title", "", "<h1>Heading Title</h1>", "Heading Title"},
	}
	const text = `<p>Some article text that is long enough to count as the content of the page and then some more words.</p>`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := "<html><head>" + tt.head + "</head><body><article>" + tt.body + text + text + "</article></body></html>"
			doc, err := Extract(context.Background(), []byte(page), mustURL(t, "https://example.com/a"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Title != tt.want {
				t.Errorf("Title = %q, want %q", doc.Title, tt.want)
			}
		})
	}
}

func TestExtractCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Extract(ctx, []byte(article("")), nil, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestExtractDeepNesting(t *testing.T) {
	const depth = 100000
	page := "<html><body><p>Some text before the deep part of the page, long enough to count.</p>" +
		strings.Repeat("<div>", depth) + "deep text" + strings.Repeat("</div>", depth) + "</body></html>"
	doc, err := Extract(context.Background(), []byte(page), nil, Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if !strings.Contains(doc.Markdown, "Some text before") {
		t.Errorf("text lost:\n%s", doc.Markdown)
	}
}

// A page may hold a form (or a comment box) per element: pruning forms with
// the words around them must take time in proportion to the page, as the
// rest of the extractor does (a list of forms searched per element took
// minutes here).
func TestExtractManyForms(t *testing.T) {
	const forms = 60000
	page := article(strings.Repeat(`<div><form><label>Subscribe</label><input></form></div>`, forms/2) +
		strings.Repeat(`<div><textarea></textarea></div>`, forms/2))
	doc, err := Extract(context.Background(), []byte(page), nil, Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	for _, w := range []string{"The first paragraph of the article", "The last paragraph wraps the story up"} {
		if !strings.Contains(doc.Markdown, w) {
			t.Errorf("the article's %q is lost", w)
		}
	}
}

func TestExtractMaxNodes(t *testing.T) {
	// Past MaxNodes the page is rendered whole instead of extracted (less
	// its navigation and footer, which are dropped before anything else).
	page := article(strings.Repeat("<p><span>word</span> and more words in a paragraph.</p>", 50))
	doc, err := Extract(context.Background(), []byte(page), nil, Options{MaxNodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"We use cookies", "The first paragraph of the article", "The last paragraph wraps the story up"} {
		if !strings.Contains(doc.Markdown, w) {
			t.Errorf("whole-page rendering lacks %q", w)
		}
	}
}

func TestExtractNoContent(t *testing.T) {
	for _, page := range []string{"", "<html><body>  </body></html>", "<script>var a = 1;</script>"} {
		if _, err := Extract(context.Background(), []byte(page), nil, Options{}); !errors.Is(err, ErrNoContent) {
			t.Errorf("Extract(%q): err = %v, want ErrNoContent", page, err)
		}
	}
}

func TestPruneInertKeepsContentAndJSONLD(t *testing.T) {
	root, err := html.Parse(strings.NewReader(`<html><head><style>p{}</style><script>var x</script>
<script type="application/ld+json">{"headline":"H"}</script><link rel=stylesheet href=a.css></head>
<body><!-- c --><noscript>enable js</noscript><svg><text>chart</text></svg><p>Kept text</p><iframe src=x></iframe></body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	pruneInert(root)
	var b strings.Builder
	html.Render(&b, root)
	got := b.String()
	for _, gone := range []string{"<style", "var x", "<link", "<!--", "enable js", "<svg", "<iframe"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q survived: %s", gone, got)
		}
	}
	for _, kept := range []string{`{"headline":"H"}`, "<p>Kept text</p>"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q removed: %s", kept, got)
		}
	}
}

// TestCoverage: PageRunes counts the text a page shows (not scripts,
// styles or hidden elements), ContentRunes what the extraction kept, and
// Coverage their ratio.
func TestCoverage(t *testing.T) {
	const para = `<p>Rivers carry water from the hills down to the sea, and with it the soil of the valleys they cross.</p>`
	tests := []struct {
		name           string
		body           string
		page, content  int // expected PageRunes and ContentRunes (a para has 79 non-space runes)
		minCov, maxCov float64
	}{
		{"all kept", `<article>` + para + para + para + `</article>`, 3 * 79, 3 * 79, 1, 1},
		{"hidden, scripts and styles not counted", `<article>` + para + para + para + `</article><div hidden>secret words</div><script>var x = 1;</script><style>p{color:red}</style><p style="display: none">gone</p>`, 3 * 79, 3 * 79, 1, 1},
		{"navigation counted as shown, not kept", `<nav><a href="/a">Home page</a> <a href="/b">Archive</a></nav><article>` + para + para + para + `</article>`, 3*79 + 15, 3 * 79, 0.9, 0.99},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Extract(context.Background(), []byte("<html><head><title>T</title></head><body>"+tt.body+"</body></html>"), mustURL(t, "https://example.com/"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.PageRunes != tt.page || doc.ContentRunes != tt.content {
				t.Errorf("PageRunes, ContentRunes = %d, %d, want %d, %d\n%s", doc.PageRunes, doc.ContentRunes, tt.page, tt.content, doc.Markdown)
			}
			if c := doc.Coverage(); c < tt.minCov || c > tt.maxCov {
				t.Errorf("Coverage = %.3f, want %.2f–%.2f", c, tt.minCov, tt.maxCov)
			}
		})
	}
	if c := (&Document{}).Coverage(); c != 1 {
		t.Errorf("Coverage of a page with no text = %v, want 1", c)
	}
}
