package webui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestTranslationsComplete checks the page's string tables: Hebrew has every
// English key, with the same {placeholders}, and every key the scripts and
// the page's markup ask for exists.
func TestTranslationsComplete(t *testing.T) {
	src, err := os.ReadFile("static/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	heAt := strings.Index(text, "\n  he: {")
	if heAt < 0 {
		t.Fatal("no he table in i18n.js")
	}
	entry := regexp.MustCompile(`(?m)^\s+'([A-Za-z0-9]+)': '((?:[^'\\]|\\.)*)',$|^\s+'([A-Za-z0-9]+)': "([^"]*)",$`)
	table := func(s string) map[string]string {
		m := map[string]string{}
		for _, g := range entry.FindAllStringSubmatch(s, -1) {
			if g[1] != "" {
				m[g[1]] = g[2]
			} else {
				m[g[3]] = g[4]
			}
		}
		return m
	}
	en, he := table(text[:heAt]), table(text[heAt:])
	if len(en) < 100 {
		t.Fatalf("read %d English strings; the table's format changed?", len(en))
	}
	holes := regexp.MustCompile(`\{\w+\}`)
	for k, v := range en {
		h, ok := he[k]
		if !ok {
			t.Errorf("Hebrew lacks %q", k)
			continue
		}
		a, b := holes.FindAllString(v, -1), holes.FindAllString(h, -1)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%q: English has placeholders %v, Hebrew %v", k, a, b)
		}
	}
	for k := range he {
		if _, ok := en[k]; !ok {
			t.Errorf("Hebrew has %q, which English lacks", k)
		}
	}
	// Keys used by the scripts (t('…') and tr('…')) and the markup.
	used := map[string]bool{}
	files, _ := os.ReadDir("static/js")
	call := regexp.MustCompile(`\b(?:t|tr)\('([A-Za-z0-9]+)'`)
	// Keys kept in tables rather than passed to t() literally: the tools'
	// names (cards.js LABEL_KEYS) and the statuses (STATUS_KEY, settings.js
	// STATUS_LABEL).
	tabled := regexp.MustCompile(`'((?:tool|status|settingsStatus)[A-Z][A-Za-z0-9]*)'`)
	for _, f := range files {
		b, err := os.ReadFile("static/js/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range call.FindAllStringSubmatch(string(b), -1) {
			used[g[1]] = true
		}
		for _, g := range tabled.FindAllStringSubmatch(string(b), -1) {
			used[g[1]] = true
		}
	}
	page, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range regexp.MustCompile(`data-i18n(?:-[a-z-]+)?="([A-Za-z0-9]+)"`).FindAllStringSubmatch(string(page), -1) {
		used[g[1]] = true
	}
	if len(used) < 50 {
		t.Fatalf("found %d keys in use; the lookup pattern is stale?", len(used))
	}
	for k := range used {
		if _, ok := en[k]; !ok {
			t.Errorf("key %q is used but has no string", k)
		}
	}
}

// TestMarkupTextIsTranslated checks the page's markup: every element with
// text of its own (letters, not only white space) takes it from the string
// table (data-i18n), so that the Hebrew page has no English left in its
// frame. The exceptions are names, which read the same in every language.
func TestMarkupTextIsTranslated(t *testing.T) {
	f, err := os.Open("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	// Names: the product, and the export formats (whose buttons' labels,
	// "Export as Markdown", are translated through data-i18n-aria-label).
	names := map[string]bool{"Toolport": true, "Markdown": true, "JSON": true}
	letter := regexp.MustCompile(`\pL`)
	checked := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data != "title" && n.Data != "script" && n.Data != "style" {
			var own strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					own.WriteString(c.Data)
				}
			}
			text := strings.TrimSpace(own.String())
			if letter.MatchString(text) && !names[text] {
				checked++
				i18n := false
				for _, a := range n.Attr {
					if a.Key == "data-i18n" {
						i18n = true
					}
				}
				if !i18n {
					t.Errorf("<%s id=%q class=%q> has the text %q without data-i18n", n.Data, attr(n, "id"), attr(n, "class"), text)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if checked < 30 {
		t.Fatalf("checked %d texts; the markup's layout changed?", checked)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
