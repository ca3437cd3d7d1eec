package webui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
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
	for _, f := range files {
		b, err := os.ReadFile("static/js/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range call.FindAllStringSubmatch(string(b), -1) {
			used[g[1]] = true
		}
	}
	html, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range regexp.MustCompile(`data-i18n(?:-[a-z-]+)?="([A-Za-z0-9]+)"`).FindAllStringSubmatch(string(html), -1) {
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
