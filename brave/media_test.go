package brave

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

func TestNewsDecodesTheDocumentedExample(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "docs_example_news_search.json"))
	r, err := c.News(context.Background(), &NewsParams{Query: "space exploration"})
	if err != nil {
		t.Fatal(err)
	}
	if got := last().URL; got.Path != "/res/v1/news/search" || got.RawQuery != "q=space+exploration" {
		t.Errorf("request = %s", got)
	}
	want := NewsResult{
		Type: "news_result", Title: "New Developments in Space Exploration", URL: "https://news.example.com/space-exploration",
		Description: "Recent missions have advanced our understanding of...", Age: "2 hours ago",
		PageAge: "2026-01-15T14:30:00", PageFetched: "2026-01-15T15:00:00Z",
		MetaURL: &MetaURL{Scheme: "https", Netloc: "news.example.com", Hostname: "news.example.com",
			Favicon: "https://imgs.search.brave.com/favicon/news.example.com", Path: "/space-exploration"},
		Thumbnail: &Thumbnail{Src: "https://imgs.search.brave.com/..."},
	}
	if r.Type != "news" || r.Query == nil || r.Query.Original != "space exploration" || len(r.Results) != 1 {
		t.Fatalf("response = %+v", r)
	}
	if !reflect.DeepEqual(r.Results[0], want) {
		t.Errorf("result =\n%+v\nwant\n%+v", r.Results[0], want)
	}
}

func TestImagesDecodesTheDocumentedExample(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "docs_example_images_search.json"))
	r, err := c.Images(context.Background(), &ImageParams{Query: "mountain landscape"})
	if err != nil {
		t.Fatal(err)
	}
	if got := last().URL; got.Path != "/res/v1/images/search" || got.RawQuery != "q=mountain+landscape" {
		t.Errorf("request = %s", got)
	}
	want := ImageResult{
		Type: "image_result", Title: "Beautiful Mountain Landscape", URL: "https://example.com/mountain-photo",
		Source: "example.com", PageFetched: "2025-09-15T10:30:00Z",
		Thumbnail: &Thumbnail{Src: "https://imgs.search.brave.com/...", Width: 200, Height: 150},
		Properties: &ImageProperties{URL: "https://example.com/images/mountain.jpg",
			Placeholder: "https://imgs.search.brave.com/placeholder/...", Width: 1920, Height: 1080},
		MetaURL: &MetaURL{Scheme: "https", Netloc: "example.com", Hostname: "example.com",
			Favicon: "https://imgs.search.brave.com/favicon/...", Path: "/mountain-photo"},
		Confidence: "high",
	}
	if r.Type != "images" || r.Query.Altered != "" || r.Extra == nil || r.Extra.MightBeOffensive || len(r.Results) != 1 {
		t.Fatalf("response = %+v", r)
	}
	if !reflect.DeepEqual(r.Results[0], want) {
		t.Errorf("result =\n%+v\nwant\n%+v", r.Results[0], want)
	}
}

func TestVideosDecodesTheDocumentedExample(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "docs_example_videos_search.json"))
	r, err := c.Videos(context.Background(), &VideoParams{Query: "python tutorial"})
	if err != nil {
		t.Fatal(err)
	}
	if got := last().URL; got.Path != "/res/v1/videos/search" || got.RawQuery != "q=python+tutorial" {
		t.Errorf("request = %s", got)
	}
	want := VideoResult{
		Type: "video_result", Title: "Python Tutorial for Beginners", URL: "https://www.youtube.com/watch?v=rfscVS0vtbw",
		Description: "Learn Python programming from scratch...", Age: "February 12, 2025",
		PageAge: "2025-02-12T00:00:00", PageFetched: "2025-02-12T15:00:00Z",
		Thumbnail: &Thumbnail{Src: "https://imgs.search.brave.com/...", Original: "https://i.ytimg.com/vi/rfscVS0vtbw/hqdefault.jpg"},
		Video: &VideoData{Duration: "03:45:00", Views: 1523000, Creator: "freeCodeCamp", Publisher: "YouTube",
			Tags: []string{"python", "programming"}, Author: &VideoAuthor{Name: "freeCodeCamp.org", URL: "https://www.youtube.com/@freecodecamp"}},
		MetaURL: &MetaURL{Scheme: "https", Netloc: "youtube.com", Hostname: "www.youtube.com",
			Favicon: "https://imgs.search.brave.com/...", Path: "› watch"},
	}
	if r.Type != "videos" || len(r.Results) != 1 {
		t.Fatalf("response = %+v", r)
	}
	if !reflect.DeepEqual(r.Results[0], want) {
		t.Errorf("result =\n%+v\nwant\n%+v", r.Results[0], want)
	}
}

func TestMediaSearchesSendEveryParameter(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		call func(*Client) error
		path string
		want map[string]string
	}{
		{"news", func(c *Client) error {
			_, err := c.News(context.Background(), &NewsParams{Query: " mars rover ", Count: 50, Offset: 3, Country: "gb",
				SearchLang: "EN", UILang: "en-gb", SafeSearch: "off", Freshness: "pw", Spellcheck: &no})
			return err
		}, "/res/v1/news/search", map[string]string{"q": "mars rover", "count": "50", "offset": "3", "country": "GB",
			"search_lang": "en", "ui_lang": "en-GB", "safesearch": "off", "freshness": "pw", "spellcheck": "false"}},
		{"videos", func(c *Client) error {
			_, err := c.Videos(context.Background(), &VideoParams{Query: "go generics", Count: 7, Offset: 9, Country: "ALL",
				SearchLang: "pt-br", UILang: "PT-br", SafeSearch: "moderate", Freshness: "2025-01-01to2025-12-31", Spellcheck: &yes})
			return err
		}, "/res/v1/videos/search", map[string]string{"q": "go generics", "count": "7", "offset": "9", "country": "ALL",
			"search_lang": "pt-br", "ui_lang": "pt-BR", "safesearch": "moderate", "freshness": "2025-01-01to2025-12-31", "spellcheck": "true"}},
		{"images", func(c *Client) error {
			_, err := c.Images(context.Background(), &ImageParams{Query: "aurora", Count: 200, Country: "no",
				SearchLang: "nb", SafeSearch: "strict", Spellcheck: &no})
			return err
		}, "/res/v1/images/search", map[string]string{"q": "aurora", "count": "200", "country": "NO",
			"search_lang": "nb", "safesearch": "strict", "spellcheck": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, last := serve(t, 200, jsonHeader, []byte(`{"type":"x","results":[]}`))
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			r := last()
			if r.URL.Path != tt.path || r.Header.Get("X-Subscription-Token") != testKey {
				t.Errorf("path %q, token %q", r.URL.Path, r.Header.Get("X-Subscription-Token"))
			}
			q := r.URL.Query()
			for k, v := range tt.want {
				if got := q.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if len(q) != len(tt.want) {
				t.Errorf("query has extra parameters: %v", q)
			}
		})
	}
}

func TestMediaParamsValidate(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantMsg string // "" means valid
	}{
		{"news count 50", (&NewsParams{Query: "x", Count: 50}).Validate(), ""},
		{"news count 51", (&NewsParams{Query: "x", Count: 51}).Validate(), "between 1 and 50"},
		{"news offset 10", (&NewsParams{Query: "x", Offset: 10}).Validate(), "page index"},
		{"news freshness", (&NewsParams{Query: "x", Freshness: "yesterday"}).Validate(), "freshness"},
		{"news date order", (&NewsParams{Query: "x", Freshness: "2025-02-01to2025-01-01"}).Validate(), "after the end date"},
		{"news ui_lang", (&NewsParams{Query: "x", UILang: "english"}).Validate(), "ui_lang"},
		{"news empty", (&NewsParams{Query: "  "}).Validate(), "must not be empty"},
		{"videos count 50", (&VideoParams{Query: "x", Count: 50}).Validate(), ""},
		{"videos count 51", (&VideoParams{Query: "x", Count: 51}).Validate(), "between 1 and 50"},
		{"videos safesearch", (&VideoParams{Query: "x", SafeSearch: "on"}).Validate(), "safesearch"},
		{"videos negative count", (&VideoParams{Query: "x", Count: -1}).Validate(), "count"},
		{"images count 200", (&ImageParams{Query: "x", Count: 200}).Validate(), ""},
		{"images count 201", (&ImageParams{Query: "x", Count: 201}).Validate(), "between 1 and 200"},
		{"images safesearch moderate", (&ImageParams{Query: "x", SafeSearch: "moderate"}).Validate(), "off or strict"},
		{"images country", (&ImageParams{Query: "x", Country: "Norway"}).Validate(), "country"},
		{"images long query", (&ImageParams{Query: strings.Repeat("y", 401)}).Validate(), "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.wantMsg == "" && tt.err != nil:
				t.Errorf("unexpected error %v", tt.err)
			case tt.wantMsg != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.wantMsg)):
				t.Errorf("err = %v, want it to mention %q", tt.err, tt.wantMsg)
			}
		})
	}
}

func TestMediaSearchesMakeNoRequestForBadParams(t *testing.T) {
	srv := tooltest.NewServer(t, tooltest.Reply{Status: 200, Header: jsonHeader, Body: []byte(`{}`)})
	c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Images(context.Background(), &ImageParams{Query: "x", SafeSearch: "moderate"}); err == nil {
		t.Fatal("no error")
	}
	if _, err := c.News(context.Background(), &NewsParams{Query: "x", Count: 99}); err == nil {
		t.Fatal("no error")
	}
	if _, err := c.Videos(context.Background(), &VideoParams{Query: "x", Freshness: "p1"}); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestMediaSearchErrorsAreTyped(t *testing.T) {
	rate := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"1, 2000"},
		"X-Ratelimit-Remaining": {"0, 1977"}, "X-Ratelimit-Reset": {"1, 389223"}, "Retry-After": {"2"}}
	t.Run("422 token invalid", func(t *testing.T) {
		c, _ := serve(t, 422, jsonHeader, fixture(t, "docs_example_422_subscription_token_invalid.json"))
		_, err := c.Videos(context.Background(), &VideoParams{Query: "x"})
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 422 || e.Code != CodeTokenInvalid {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("429 with rate-limit headers", func(t *testing.T) {
		c, _ := serve(t, 429, rate, fixture(t, "error_429_rate_limited.json"))
		_, err := c.News(context.Background(), &NewsParams{Query: "x"})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRateLimited || e.RetryAfter.Seconds() != 2 || len(e.RateLimit.Windows) != 2 {
			t.Errorf("err = %#v", err)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		c, _ := serve(t, 200, jsonHeader, []byte(`{"type":"images","results":[{"title":`))
		_, err := c.Images(context.Background(), &ImageParams{Query: "x"})
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrorResponse in a 200", func(t *testing.T) {
		c, _ := serve(t, 200, jsonHeader, []byte(`{"type":"ErrorResponse","error":{"code":"OPTION_NOT_IN_PLAN","detail":"not in plan"}}`))
		_, err := c.Images(context.Background(), &ImageParams{Query: "x"})
		var e *Error
		if !errors.As(err, &e) || e.Code != "OPTION_NOT_IN_PLAN" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("the key is redacted from details", func(t *testing.T) {
		c, _ := serve(t, 422, jsonHeader, []byte(`{"error":{"code":"VALIDATION","detail":"bad token `+testKey+`"}}`))
		_, err := c.News(context.Background(), &NewsParams{Query: "x"})
		if err == nil || strings.Contains(err.Error(), testKey) {
			t.Errorf("err = %v", err)
		}
	})
}
