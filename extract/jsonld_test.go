package extract

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadJSONLD(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxJSONLDDepth) + `1` + strings.Repeat(`}`, maxJSONLDDepth)
	tests := []struct {
		name   string
		blocks []string
		want   linkedData
	}{
		{"none", nil, linkedData{}},
		{"news article", []string{`{"@context":"https://schema.org","@type":"NewsArticle","headline":"Rates rise again","publisher":{"@type":"Organization","name":"The Daily"}}`},
			linkedData{headline: "Rates rise again", publisher: "The Daily"}},
		{"article name when no headline", []string{`{"@type":"BlogPosting","name":"Notes on Go"}`}, linkedData{headline: "Notes on Go"}},
		{"type array and prefixed type", []string{`{"@type":["schema:ScholarlyArticle","Thing"],"headline":"On Proofs"}`}, linkedData{headline: "On Proofs"}},
		{"type as URL", []string{`{"@type":"https://schema.org/Report","headline":"Annual report"}`}, linkedData{headline: "Annual report"}},
		{"graph", []string{`{"@context":"https://schema.org","@graph":[
			{"@type":"WebSite","name":"Example Site","url":"https://example.org/"},
			{"@type":"WebPage","name":"Page | Example Site"},
			{"@type":"Article","headline":"The headline","publisher":{"@id":"#org"}},
			{"@type":"Person","name":"Jane Roe"}]}`},
			linkedData{headline: "The headline", pageName: "Page | Example Site", siteName: "Example Site"}},
		{"top-level array", []string{`[{"@type":"Organization","name":"Acme"},{"@type":"NewsArticle","headline":"Acme wins","publisher":[{"name":""},{"name":"Acme Press"}]}]`},
			linkedData{headline: "Acme wins", publisher: "Acme Press"}},
		{"publisher as a string", []string{`{"@type":"Article","headline":"H","publisher":"Plain Press"}`}, linkedData{headline: "H", publisher: "Plain Press"}},
		{"language variants", []string{`{"@type":"Article","headline":[{"@value":"Titre","@language":"fr"},"Title"]}`}, linkedData{headline: "Titre"}},
		{"first block wins", []string{`{"@type":"Article","headline":"First"}`, `{"@type":"Article","headline":"Second","publisher":{"name":"P"}}`},
			linkedData{headline: "First", publisher: "P"}},
		{"entities and white space", []string{`{"@type":"Article","headline":"  Fish &amp;amp; chips\n today "}`}, linkedData{headline: "Fish &amp; chips today"}},
		{"other types' names are not titles", []string{`{"@type":"Product","name":"Shoe"}`, `{"@type":"BreadcrumbList","name":"Home"}`, `{"name":"untyped"}`}, linkedData{}},
		{"malformed block skipped", []string{`{"@type":"Article","headline":"Broken"`, `{"@type":"Article","headline":"Whole"}`}, linkedData{headline: "Whole"}},
		{"wrong field types ignored", []string{`{"@type":7,"headline":"x"}`, `{"@type":"Article","headline":{"a":1},"name":3}`}, linkedData{}},
		{"comment wrapper", []string{"<!--\n{\"@type\":\"Article\",\"headline\":\"Wrapped\"}\n-->"}, linkedData{headline: "Wrapped"}},
		{"CDATA wrapper", []string{`//<![CDATA[` + "\n" + `{"@type":"Article","headline":"Old CMS"}` + "\n" + `//]]>`}, linkedData{headline: "Old CMS"}},
		{"too deep skipped", []string{`{"@type":"Article","headline":"Deep","x":` + deep + `}`}, linkedData{}},
		{"at the depth bound read", []string{`{"@type":"Article","headline":"Shallow","x":` + strings.Repeat(`[`, maxJSONLDDepth-1) + strings.Repeat(`]`, maxJSONLDDepth-1) + `}`}, linkedData{headline: "Shallow"}},
		{"oversized block skipped", []string{`{"@type":"Article","headline":"Big","pad":"` + strings.Repeat("x", maxJSONLDBlock) + `"}`}, linkedData{}},
		{"overlong headline dropped", []string{`{"@type":"Article","headline":"` + strings.Repeat("w ", maxLDText) + `"}`}, linkedData{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readJSONLD(tt.blocks); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestReadJSONLDBudget: a page cannot make the reader decode more than the
// total budget, however many blocks it has.
func TestReadJSONLDBudget(t *testing.T) {
	filler := `{"@type":"Thing","pad":"` + strings.Repeat("x", maxJSONLDBlock-64) + `"}`
	var blocks []string
	for range maxJSONLDTotal/len(filler) + 1 {
		blocks = append(blocks, filler)
	}
	blocks = append(blocks, `{"@type":"Article","headline":"Past the budget"}`)
	if got := readJSONLD(blocks); got.headline != "" {
		t.Errorf("read a block past the budget: %+v", got)
	}
}

func TestTitleAndSiteNameSources(t *testing.T) {
	ld := func(s string) string { return `<script type="application/ld+json">` + s + `</script>` }
	article := `{"@type":"NewsArticle","headline":"LD headline","publisher":{"name":"LD Publisher"}}`
	tests := []struct {
		name, head, body, title, site string
	}{
		{"og over everything", `<meta property="og:title" content="OG title"><meta property="og:site_name" content="OG site"><title>T | S</title>` + ld(article), "", "OG title", "OG site"},
		{"JSON-LD headline over <title>", `<title>T | S</title>` + ld(article), "", "LD headline", "LD Publisher"},
		{"JSON-LD in the body", `<title>T | S</title>`, ld(article), "LD headline", "LD Publisher"},
		{"og:site_name with JSON-LD title", `<meta property="og:site_name" content="OG site">` + ld(article), "", "LD headline", "OG site"},
		{"og:title with JSON-LD site", `<meta property="og:title" content="OG title">` + ld(`{"@graph":[{"@type":"WebSite","name":"LD site"},{"@type":"Article","headline":"x","publisher":{"name":"LD Publisher"}}]}`), "", "OG title", "LD site"},
		{"<title> over a page's name", `<title>Plain</title>` + ld(`{"@type":"WebPage","name":"Page name"}`), "", "Plain", ""},
		{"page's name over <h1>", ld(`{"@type":"WebPage","name":"Page name"}`), "<h1>Heading</h1>", "Page name", ""},
		{"malformed JSON-LD falls back", `<title>Plain</title>` + ld(`{"@type":"Article",`), "", "Plain", ""},
		{"other script types ignored", `<title>Plain</title><script type="application/json">{"@type":"Article","headline":"No"}</script>`, "", "Plain", ""},
	}
	const text = `<p>Some article text that is long enough to count as the content of the page and then some more words.</p>`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := "<html><head>" + tt.head + "</head><body><article>" + tt.body + text + text + "</article></body></html>"
			doc, err := Extract(context.Background(), []byte(page), mustURL(t, "https://example.com/a"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Title != tt.title || doc.SiteName != tt.site {
				t.Errorf("title %q, site %q; want %q, %q", doc.Title, doc.SiteName, tt.title, tt.site)
			}
			if strings.Contains(doc.Markdown, "LD headline") || strings.Contains(doc.Markdown, "@type") {
				t.Errorf("JSON-LD leaked into the content:\n%s", doc.Markdown)
			}
		})
	}
}

func FuzzReadJSONLD(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `"x"`, `{"@graph":{"@graph":[]}}`,
		`{"@type":"NewsArticle","headline":"H","publisher":{"name":"P"}}`,
		`[{"@type":["WebSite"],"name":"S"},{"@type":"WebPage","name":["a",{"@value":"b"}]}]`,
		`<!--{"@type":"Article","headline":"&amp;"}-->`,
		`{"a":"\"[[[[","@type":"Article","headline":"q"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		ld := readJSONLD([]string{block, block})
		for _, s := range []string{ld.headline, ld.pageName, ld.publisher, ld.siteName} {
			if len(s) > maxLDText || !utf8.ValidString(s) && utf8.ValidString(block) {
				t.Fatalf("bad value %q from %q", s, block)
			}
			if s != strings.Join(strings.Fields(s), " ") {
				t.Fatalf("white space not collapsed: %q", s)
			}
		}
	})
}
