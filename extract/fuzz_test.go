package extract

import (
	"context"
	"net/url"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"",
	"<html><head><title>x</title></head><body><p>hello</p></body></html>",
	`<meta charset="shift_jis"><p>` + "\x82\xa0\x82\xa2" + `</p>`,
	"<pre><code class=\"language-go\">a\n\tb</code></pre>",
	"<table><tr><td>a<br>b</td></tr></table>",
	"<svg><path/><math><mi/></math></svg><div><div><div>",
	"<base href=\"//x\"><a href=\"y\">z</a>",
	"\xff\xfe<\x00p\x00>\x00",
}

func FuzzExtract(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(article("<p>Some <a href='/x'>link</a> text.</p><pre>a\n b</pre>")))
	f.Add([]byte(article("<figure><img src='/a.png' alt='a described picture'><figcaption>A caption long enough to anchor.</figcaption></figure><a href='/b'><img src=b.png alt='share this page'></a><img data-src='//c/d.jpg' alt='lazy loaded image'>")))
	u, _ := url.Parse("https://example.com/dir/page.html")
	f.Fuzz(func(t *testing.T, page []byte) {
		if !utf8.Valid(page) {
			var err error
			if page, err = DecodeHTML(page, ""); err != nil {
				return
			}
		}
		doc, err := Extract(context.Background(), page, u, Options{})
		if err != nil {
			return
		}
		if !utf8.ValidString(doc.Markdown) {
			t.Errorf("Markdown is not valid UTF-8: %q", doc.Markdown)
		}
	})
}

func FuzzDecodeHTML(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "text/html; charset=shift_jis")
	}
	f.Add([]byte("caf\xe9"), "text/html; charset=utf-16")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		out, err := DecodeHTML(body, contentType)
		if err != nil {
			return
		}
		if !utf8.Valid(out) {
			t.Errorf("output is not valid UTF-8: %q", out)
		}
	})
}
