package extract

import (
	"context"
	"strings"
	"testing"

	maincontent "github.com/toolport/toolport/extract/internal/content"
)

func TestCleanContent(t *testing.T) {
	para := `<p>An ordinary paragraph of the article, with enough words in it to be read as body text by anyone.</p>`
	tests := []struct {
		name    string
		body    string
		want    []string
		notWant []string
	}{
		{
			name:    "title heading dropped (it is Document.Title)",
			body:    `<h1>Test Article Title</h1>` + para + para,
			notWant: []string{"# Test Article Title"},
		},
		{
			name:    "standfirst before the first paragraph dropped",
			body:    `<h1>Test Article Title</h1><h2>A long summary line that tells the reader in one sentence what the story says.</h2>` + para + para,
			notWant: []string{"A long summary line"},
		},
		{
			name: "short section heading kept",
			body: `<h2>Background</h2>` + para + `<h2>What happens next</h2>` + para,
			want: []string{"## Background", "## What happens next"},
		},
		{
			name:    "trailing related links and headings dropped",
			body:    para + para + `<h3>Related stories</h3><ul><li><a href="/a">Another story about something else entirely</a></li><li><a href="/b">Yet another story people clicked on</a></li></ul><h3>Newsletter</h3>`,
			want:    []string{"An ordinary paragraph"},
			notWant: []string{"Related stories", "Another story", "Newsletter"},
		},
		{
			name: "list of linked points inside the article kept",
			body: para + `<ul><li><a href="/a">The first source</a>, which the story quotes at length.</li><li><a href="/b">The second source</a>, which disagrees.</li></ul>` + para,
			want: []string{"The first source", "which disagrees"},
		},
		{
			name:    "list of bare links inside the article dropped (a related-stories box)",
			body:    para + `<ul><li><a href="/a">Another story about something else entirely</a></li><li><a href="/b">Yet another story people clicked on</a></li></ul>` + para,
			want:    []string{"An ordinary paragraph"},
			notWant: []string{"Another story about something else entirely"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := `<html><head><title>Test Article Title</title></head><body><article>` + tt.body + `</article></body></html>`
			doc, err := Extract(context.Background(), []byte(page), mustURL(t, "https://example.com/x"), Options{})
			if err != nil {
				t.Fatal(err)
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

// TestCleanContentStandfirst: with Tuning.Standfirst the standfirst that
// cleanContent drops by default stays.
func TestCleanContentStandfirst(t *testing.T) {
	para := `<p>An ordinary paragraph of the article, with enough words in it to be read as body text by anyone.</p>`
	page := `<html><head><title>Test Article Title</title></head><body><article><h1>Test Article Title</h1><h2>A long summary line that tells the reader in one sentence what the story says.</h2>` + para + para + `</article></body></html>`
	for _, keep := range []bool{false, true} {
		tu := maincontent.DefaultTuning()
		tu.Standfirst = keep
		doc, err := extractWith(context.Background(), []byte(page), mustURL(t, "https://example.com/x"), Options{}, ownFinder(tu))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(doc.Markdown, "A long summary line"); got != keep {
			t.Errorf("Standfirst %v: standfirst in the Markdown %v, want %v\n--- got:\n%s", keep, got, keep, doc.Markdown)
		}
	}
}
