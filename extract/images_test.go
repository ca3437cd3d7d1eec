package extract

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

func TestImagesRestored(t *testing.T) {
	para := func(s string) string {
		return "<p>" + s + " This paragraph carries enough words to be the article's text, and more of them follow here so that the extractor keeps it as content rather than boilerplate.</p>"
	}
	tests := []struct {
		name    string
		body    string
		want    []string
		notWant []string
	}{
		{"between paragraphs", para("First.") + `<img src="/a.jpg" alt="A harbour at dawn">` + para("Second."),
			[]string{"![A harbour at dawn](https://example.org/a.jpg)"}, nil},
		{"lead image before any text", `<img src="/lead.jpg" alt="The lead picture">` + para("First.") + para("Second."),
			[]string{"![The lead picture](https://example.org/lead.jpg)"}, nil},
		{"figure with caption", para("First.") + `<figure><img src="/f.png" alt="Chart of sales by year"><figcaption>Sales rose every year since the shop opened.</figcaption></figure>` + para("Second."),
			[]string{"![Chart of sales by year](https://example.org/f.png)"}, nil},
		{"lazy source", para("First.") + `<img src="data:image/gif;base64,R0lGOD" data-src="/lazy.jpg" alt="A lazily loaded view">` + para("Second."),
			[]string{"![A lazily loaded view](https://example.org/lazy.jpg)"}, nil},
		{"linked to its larger self", para("First.") + `<a href="/big.jpg"><img src="/small.jpg" alt="A mountain pass"></a>` + para("Second."),
			[]string{"![A mountain pass](https://example.org/small.jpg)"}, nil},
		{"share button dropped", para("First.") + `<a href="https://social.example/share"><img src="/s.png" alt="Share on social"></a>` + para("Second."),
			nil, []string{"Share on social"}},
		{"one-word label dropped", para("First.") + `<img src="/p.jpg" alt="photo">` + para("Second."), nil, []string{"photo"}},
		{"logo dropped", para("First.") + `<img src="/l.png" alt="Example News logo">` + para("Second."), nil, []string{"logo"}},
		{"tracking pixel dropped", para("First.") + `<img src="/t.gif" alt="tracking pixel image" width="1" height="1">` + para("Second."), nil, []string{"tracking"}},
		{"no alt dropped", para("First.") + `<img src="/n.jpg">` + para("Second."), nil, []string{"n.jpg"}},
		{"repeated alt kept once", para("First.") + `<img src="/r1.jpg" alt="Same words twice">` + para("Second.") + `<img src="/r2.jpg" alt="Same words twice">` + para("Third."),
			[]string{"![Same words twice](https://example.org/r1.jpg)"}, []string{"r2.jpg"}},
		{"image in dropped boilerplate dropped", para("First.") + para("Second.") + `<aside><p>Our sponsor makes the finest products of their kind in the world.</p><img src="/ad.jpg" alt="Buy our product now"></aside>`,
			nil, []string{"Buy our product"}},
	}
	base, _ := url.Parse("https://example.org/post")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := "<html><head><title>Post</title></head><body><article>" + tt.body + "</article></body></html>"
			doc, err := Extract(context.Background(), []byte(page), base, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(doc.Markdown, w) {
					t.Errorf("want %q in\n%s", w, doc.Markdown)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(doc.Markdown, w) {
					t.Errorf("did not want %q in\n%s", w, doc.Markdown)
				}
			}
		})
	}
}
