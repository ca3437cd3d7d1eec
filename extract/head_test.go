package extract_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/toolport/toolport/extract"
)

// structured is an article with every construct web_fetch must keep.
const structured = `<!doctype html><html lang="en_GB"><head><title>Pipelines in Go</title>
<link rel="alternate" href="/feed.xml"><link rel="Canonical" href="/articles/pipelines#top">
</head><body><nav><a href="/">Home</a></nav><article>
<h1>Pipelines in Go</h1>
<p>Go's concurrency primitives make it easy to construct streaming data pipelines that make efficient use of I/O and multiple CPUs. This article presents examples of such pipelines, highlights subtleties that arise when operations fail, and introduces techniques for dealing with failures cleanly. See <a href="/ref/spec">the language specification</a> for details.</p>
<h2>Stages</h2>
<p>A pipeline is a series of stages connected by channels, where each stage is a group of goroutines running the same function. In each stage, the goroutines receive values from upstream via inbound channels.</p>
<ul><li>receive values from upstream</li><li>perform some function on that data</li></ul>
<ol><li>first stage</li><li>last stage</li></ol>
<pre><code>func gen(nums ...int) &lt;-chan int {
    out := make(chan int)
    return out
}</code></pre>
<figure><img src="/img/pipeline.png" alt="Three stages joined by channels"><figcaption>A three-stage pipeline.</figcaption></figure>
<table><thead><tr><th>Stage</th><th>Goroutines</th></tr></thead><tbody><tr><td>gen</td><td>1</td></tr><tr><td>sq</td><td>2</td></tr></tbody></table>
<p>Each stage closes its outbound channels when all the send operations are done, and keeps receiving values from inbound channels until those channels are closed.</p>
</article><footer>© Example</footer></body></html>`

// TestStructureKept: headings, lists, code, links, tables and described
// images survive extraction.
func TestStructureKept(t *testing.T) {
	base, _ := url.Parse("https://example.org/blog/pipelines?utm=x")
	doc, err := extract.Extract(context.Background(), []byte(structured), base, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]string{
		"heading":        "## Stages",
		"unordered list": "- receive values from upstream",
		"ordered list":   "1. first stage",
		"code block":     "func gen(nums ...int) <-chan int {",
		"link":           "[the language specification](https://example.org/ref/spec)",
		"table":          "| gen | 1 |",
		"image":          "![Three stages joined by channels](https://example.org/img/pipeline.png)",
	} {
		if !strings.Contains(doc.Markdown, want) {
			t.Errorf("%s lost: want %q in\n%s", what, want, doc.Markdown)
		}
	}
	if doc.Canonical != "https://example.org/articles/pipelines" {
		t.Errorf("canonical %q", doc.Canonical)
	}
	if doc.Lang != "en-GB" {
		t.Errorf("lang %q", doc.Lang)
	}
}

func TestHeadDeclarations(t *testing.T) {
	body := `<body><article><p>` + strings.Repeat("Enough words for the extractor to keep this paragraph as content. ", 8) + `</p></article></body></html>`
	tests := []struct {
		name, head, canonical, lang string
	}{
		{"none", `<html><head>`, "", ""},
		{"absolute canonical", `<html lang="fr"><head><link rel="canonical" href="https://other.example/a">`, "https://other.example/a", "fr"},
		{"relative canonical", `<html><head><link rel="canonical" href="../b">`, "https://example.org/b", ""},
		{"javascript canonical dropped", `<html><head><link rel="canonical" href="javascript:alert(1)">`, "", ""},
		{"credentials dropped", `<html><head><link rel="canonical" href="https://u:p@example.org/">`, "", ""},
		{"first canonical wins", `<html><head><link rel="canonical" href="/one"><link rel="canonical" href="/two">`, "https://example.org/one", ""},
		{"meta content-language", `<html><head><meta http-equiv="Content-Language" content="de-AT, en">`, "", "de-AT"},
		{"html lang over meta", `<html lang="he"><head><meta http-equiv="content-language" content="en">`, "", "he"},
		{"invalid lang", `<html lang="not a language!"><head>`, "", ""},
	}
	base, _ := url.Parse("https://example.org/x/page")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := extract.Extract(context.Background(), []byte(tt.head+`<title>T</title></head>`+body), base, extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// With no declaration, the extractor may still detect a language.
			if doc.Canonical != tt.canonical || tt.lang != "" && doc.Lang != tt.lang {
				t.Errorf("canonical %q lang %q; want %q %q", doc.Canonical, doc.Lang, tt.canonical, tt.lang)
			}
		})
	}
}
