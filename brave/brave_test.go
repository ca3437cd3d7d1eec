package brave

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

const testKey = "BSA-test-key-0123456789"

// fixture reads a recorded answer from testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "brave", name)
}

// serve starts a server answering every request with status, headers and body,
// and returns a client pointed at it plus the last request seen.
func serve(t *testing.T, status int, header http.Header, body []byte) (*Client, func() tooltest.Request) {
	t.Helper()
	srv := tooltest.NewServer(t, tooltest.Reply{Status: status, Header: header, Body: body})
	c, err := NewClient(srv.Client(), testKey, WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	return c, func() tooltest.Request { return srv.Last(t) }
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func TestSearchSendsTheDocumentedRequest(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "web_search_what_is_semantic_kernel.json"))
	_, err := c.Search(context.Background(), &SearchParams{
		Query: "  what is semantic kernel ", Count: 10, Offset: 2,
		Country: "de", SearchLang: "PT-BR", SafeSearch: "strict", Freshness: "2024-01-01to2024-02-01",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := last()
	if r.URL.Path != "/res/v1/web/search" {
		t.Errorf("path = %q", r.URL.Path)
	}
	want := map[string]string{
		"q": "what is semantic kernel", "count": "10", "offset": "2", "country": "DE",
		"search_lang": "pt-br", "safesearch": "strict", "freshness": "2024-01-01to2024-02-01",
	}
	q := r.URL.Query()
	for k, v := range want {
		if got := q.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if len(q) != len(want) {
		t.Errorf("query has extra parameters: %v", q)
	}
	if got := r.Header.Get("X-Subscription-Token"); got != testKey {
		t.Errorf("X-Subscription-Token = %q", got)
	}
	if got := r.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}
	if got := r.Header.Get("User-Agent"); got != DefaultUserAgent {
		t.Errorf("User-Agent = %q", got)
	}
	if strings.Contains(r.URL.String(), testKey) {
		t.Error("the key is in the URL")
	}
}

func TestSearchOmitsZeroParameters(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, []byte(`{"type":"search"}`))
	if _, err := c.Search(context.Background(), &SearchParams{Query: "go"}); err != nil {
		t.Fatal(err)
	}
	if got := last().URL.RawQuery; got != "q=go" {
		t.Errorf("query = %q, want q=go", got)
	}
}

func TestSearchDecodesRecordedResponse(t *testing.T) {
	c, _ := serve(t, 200, tooltest.HeaderFixture(t, "brave", "rate_limit_headers_measured.txt"), fixture(t, "web_search_what_is_semantic_kernel.json"))
	resp, err := c.Search(context.Background(), &SearchParams{Query: "What is Semantic Kernel"})
	if err != nil {
		t.Fatal(err)
	}
	res := resp.Results()
	if len(res) != 10 {
		t.Fatalf("got %d results, want 10", len(res))
	}
	if res[0].URL != "https://learn.microsoft.com/en-us/semantic-kernel/overview/" || res[0].Title != "Introduction to Semantic Kernel | Microsoft Learn" {
		t.Errorf("first result = %+v", res[0])
	}
	if !resp.MoreResultsAvailable() {
		t.Error("MoreResultsAvailable = false, the recording says true")
	}
	sec, _ := resp.RateLimit.Shortest()
	month, _ := resp.RateLimit.Longest()
	if sec != (RateWindow{Limit: 1, Remaining: 0, Reset: time.Second, Window: time.Second}) {
		t.Errorf("per-second window = %+v", sec)
	}
	if month != (RateWindow{Limit: 2000, Remaining: 1977, Reset: 389223 * time.Second, Window: 2592000 * time.Second}) {
		t.Errorf("monthly window = %+v", month)
	}
}

func TestSearchWithoutWebBlockIsEmpty(t *testing.T) {
	c, _ := serve(t, 200, jsonHeader, []byte(`{"type":"search","query":{"original":"zzqx","more_results_available":false},"mixed":{"main":[]}}`))
	resp, err := c.Search(context.Background(), &SearchParams{Query: "zzqx"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Results() != nil || resp.MoreResultsAvailable() {
		t.Errorf("got %v results, more=%v", resp.Results(), resp.MoreResultsAvailable())
	}
}

func TestSearchToleratesBOM(t *testing.T) {
	body := append([]byte("\xef\xbb\xbf"), fixture(t, "web_search_what_is_semantic_kernel.json")...)
	c, _ := serve(t, 200, jsonHeader, body)
	resp, err := c.Search(context.Background(), &SearchParams{Query: "sk"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results()) != 10 {
		t.Errorf("got %d results", len(resp.Results()))
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		fixture    string
		status     int
		header     http.Header
		code       string
		detail     string
		quota      bool
		retryAfter time.Duration
	}{
		{"docs_example_422_subscription_token_invalid.json", 422, nil, CodeTokenInvalid, "The provided subscription token is invalid.", false, 0},
		{"error_422_validation.json", 422, nil, CodeValidation, "Unable to validate request parameter(s)", false, 0},
		{"docs_example_404_subscription_not_found.json", 404, nil, CodeSubscriptionNotFound, "No subscription found.", false, 0},
		// The per-second limit: retry when its window resets (X-RateLimit-Reset, first entry).
		{"error_429_rate_limited.json", 429, tooltest.HeaderFixture(t, "brave", "rate_limit_headers_measured.txt"), CodeRateLimited, "Request rate limit exceeded for plan", false, time.Second},
		{"docs_example_429_rate_limited.json", 429, http.Header{"Retry-After": {"3"}}, CodeRateLimited, "Request rate limit exceeded for plan.", false, 3 * time.Second},
		{"docs_example_429_rate_limited.json", 429, nil, CodeRateLimited, "Request rate limit exceeded for plan.", false, 0},
		// The monthly quota: the reset is the monthly window's.
		{"docs_example_429_quota_limited.json", 429, tooltest.HeaderFixture(t, "brave", "rate_limit_headers_docs_example.txt"), CodeQuotaLimited, "Request quota limit exceeded for plan.", true, 1419704 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			c, _ := serve(t, tt.status, tt.header, fixture(t, tt.fixture))
			_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.StatusCode != tt.status || e.Code != tt.code || e.Detail != tt.detail {
				t.Errorf("got %d %q %q, want %d %q %q", e.StatusCode, e.Code, e.Detail, tt.status, tt.code, tt.detail)
			}
			if e.QuotaExceeded() != tt.quota {
				t.Errorf("QuotaExceeded = %v", e.QuotaExceeded())
			}
			if e.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Error("the key is in the error text")
			}
		})
	}
}

func TestQuotaInferredFromHeaders(t *testing.T) {
	// A 429 without a code, whose monthly window is spent, is the quota.
	h := http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"1, 0"}, "X-Ratelimit-Reset": {"1, 86400"}}
	c, _ := serve(t, 429, h, []byte("Too Many Requests"))
	_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
	var e *Error
	if !errors.As(err, &e) || !e.QuotaExceeded() || e.RetryAfter != 24*time.Hour {
		t.Fatalf("err = %#v", err)
	}
}

func TestSearchFailsOnBadBodies(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
		want        func(error) bool
	}{
		{"malformed JSON", "application/json", []byte(`{"web": {"results": [`), func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe) && strings.Contains(err.Error(), "malformed JSON")
		}},
		{"HTML instead of JSON", "text/html; charset=utf-8", []byte(`<html><body>captive portal</body></html>`), func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe) && strings.Contains(err.Error(), "text/html")
		}},
		{"wrong shape", "application/json", []byte(`{"web": {"results": "none"}}`), func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe)
		}},
		{"huge", "application/json", bytes.Repeat([]byte(" "), DefaultMaxBodyBytes+1), func(err error) bool {
			return errors.Is(err, ErrBodyTooLarge)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, 200, http.Header{"Content-Type": {tt.contentType}}, tt.body)
			_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
			if err == nil || !tt.want(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestMaxBodyBytes(t *testing.T) {
	srv := tooltest.NewServer(t, tooltest.Reply{Body: fixture(t, "web_search_what_is_semantic_kernel.json")})
	c, err := NewClient(nil, testKey, WithBaseURL(srv.URL), WithMaxBodyBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(context.Background(), &SearchParams{Query: "q"}); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	other := tooltest.NewServer(t, tooltest.Reply{})
	c, _ := serve(t, http.StatusFound, http.Header{"Location": {other.URL + "/steal"}}, nil)
	_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusFound {
		t.Fatalf("err = %v, want a 302 *Error", err)
	}
	for _, r := range other.Requests() {
		if r.Header.Get("X-Subscription-Token") != "" {
			t.Error("the token was sent to the redirect target")
		}
	}
}

func TestNewClientRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"", "api.search.brave.com", "ftp://x", "http://", "http://h/?q=1", "http://u:p@h",
		"https://user:s3cret@api.search.brave.com", "https://h/?token=s3cret"} {
		_, err := NewClient(nil, "k", WithBaseURL(u))
		if err == nil {
			t.Errorf("WithBaseURL(%q) accepted", u)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("WithBaseURL(%q) error repeats the URL's secret: %v", u, err)
		}
	}
	c, err := NewClient(nil, "k", WithBaseURL("http://127.0.0.1:8081/prefix/"))
	if err != nil || c.core.BaseURL().String() != "http://127.0.0.1:8081/prefix" {
		t.Errorf("got %v, %v", c, err)
	}
}

func TestValidate(t *testing.T) {
	ok := []SearchParams{
		{Query: "go"}, {Query: "go", Count: 20, Offset: 9}, {Query: "go", Country: "ALL"}, {Query: "go", Country: "us"},
		{Query: "go", SearchLang: "zh-hans"}, {Query: "go", SafeSearch: "off"},
		{Query: "go", Freshness: "pd"}, {Query: "go", Freshness: "2024-02-29to2024-02-29"},
		{Query: "go", ExtraSnippets: true, Goggles: []string{"https://example.org/a.goggle", "$discard\n$site=example.org"}},
		{Query: "go", ResultFilter: []string{"web", "faq", "discussions", "infobox", "news", "videos", "query", "summarizer", "locations"}},
	}
	for _, p := range ok {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	bad := []SearchParams{
		{Query: "  "}, {Query: strings.Repeat("a", 401)}, {Query: strings.Repeat("a ", 51)},
		{Query: "go", Count: 21}, {Query: "go", Count: -1}, {Query: "go", Offset: 10}, {Query: "go", Offset: -1},
		{Query: "go", Country: "USA"}, {Query: "go", SearchLang: "english"}, {Query: "go", SafeSearch: "on"},
		{Query: "go", Freshness: "pq"}, {Query: "go", Freshness: "2023-02-29to2023-03-01"},
		{Query: "go", Freshness: "2024-03-01to2024-02-01"}, {Query: "go", Freshness: "2024-1-1to2024-2-1"},
		{Query: "go", Goggles: make([]string, MaxGoggles+1)}, {Query: "go", Goggles: []string{" "}},
		{Query: "go", Goggles: []string{strings.Repeat("g", MaxGoggleBytes+1)}},
		{Query: "go", ResultFilter: []string{"web", "images"}}, {Query: "go", ResultFilter: []string{"Web"}},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: accepted", p)
		}
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Semantic Kernel <strong>combines prompts</strong>", "Semantic Kernel combines prompts"},
		{"translating the model&#x27;s request", "translating the model's request"},
		{"<strong>Semantic</strong> <strong>Kernel</strong>&#x27;s book", "Semantic Kernel's book"},
		{"a &lt;div&gt; tag &amp; more", "a <div> tag & more"},
		{"1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"line\n  break\t tab", "line break tab"},
		{"unterminated <strong", "unterminated"},
		// A browser shows a text '<' and a bold "strong>".
		{"<<strong>strong>", "<strong>"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   []RateWindow
	}{
		{"docs example", tooltest.HeaderFixture(t, "brave", "rate_limit_headers_docs_example.txt"), []RateWindow{
			{Limit: 1, Remaining: 1, Reset: time.Second, Window: time.Second},
			{Limit: 15000, Remaining: 1000, Reset: 1419704 * time.Second, Window: 2592000 * time.Second},
		}},
		{"no policy", http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0, 5"}, "X-Ratelimit-Reset": {"1, 60"}}, []RateWindow{
			{Limit: 1, Remaining: 0, Reset: time.Second}, {Limit: 2000, Remaining: 5, Reset: time.Minute},
		}},
		{"absent", http.Header{}, nil},
		{"lengths differ", http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1, 60"}}, nil},
		{"garbage", http.Header{"X-Ratelimit-Limit": {"x"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"}}, nil},
		{"negative", http.Header{"X-Ratelimit-Limit": {"-1"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseRateLimit(tt.header).Windows
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("window %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
