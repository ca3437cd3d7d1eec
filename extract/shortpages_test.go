package extract

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShortPages extracts each page of the short and odd page corpus
// (testdata/shortpages, written for this project and labelled in
// expect.json) and checks what its Markdown must and must not contain,
// and logs the known gaps (what it should contain but does not yet).
func TestShortPages(t *testing.T) {
	dir := filepath.Join("testdata", "shortpages")
	raw, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]struct {
		Kind    string   `json:"kind"`
		Must    []string `json:"must"`
		MustNot []string `json:"mustNot"`
		// Gap lists what the page should give but the extractor does not
		// yet: logged as known gaps, and a failure once found, so that the
		// label moves to Must.
		Gap []string `json:"gap"`
		// GapNot is the same for what it should not contain but does.
		GapNot []string `json:"gapNot"`
	}
	if err := json.Unmarshal(raw, &expect); err != nil {
		t.Fatalf("expect.json: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	// Every page is labelled and every label has its page.
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	for name := range expect {
		if !slices.Contains(names, name) {
			t.Errorf("expect.json labels %s, which is not in %s", name, dir)
		}
	}
	for _, name := range names {
		t.Run(strings.TrimSuffix(name, ".html"), func(t *testing.T) {
			want, ok := expect[name]
			if !ok {
				t.Fatalf("%s has no entry in expect.json", name)
			}
			page, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Extract(context.Background(), page, mustURL(t, "https://pages.example/"+name), Options{})
			if err != nil {
				t.Fatalf("%s (%s): %v", name, want.Kind, err)
			}
			for _, s := range want.Must {
				if !strings.Contains(doc.Markdown, s) {
					t.Errorf("%s: Markdown lacks %q", want.Kind, s)
				}
			}
			for _, s := range want.MustNot {
				if strings.Contains(doc.Markdown, s) {
					t.Errorf("%s: Markdown has %q", want.Kind, s)
				}
			}
			for _, s := range want.Gap {
				if strings.Contains(doc.Markdown, s) {
					t.Errorf("%s: known gap %q is found now: move it to must in expect.json", want.Kind, s)
				} else {
					t.Logf("%s: known gap: lacks %q", want.Kind, s)
				}
			}
			for _, s := range want.GapNot {
				if !strings.Contains(doc.Markdown, s) {
					t.Errorf("%s: known gap %q is gone now: move it to mustNot in expect.json", want.Kind, s)
				} else {
					t.Logf("%s: known gap: has %q", want.Kind, s)
				}
			}
			if t.Failed() {
				t.Logf("Markdown:\n%s", doc.Markdown)
			}
		})
	}
}
