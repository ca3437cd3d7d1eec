package searxng

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

// fixture reads a body of testdata: every one is CONSTRUCTED (no recorded
// SearXNG answer was found; see testdata/SOURCES.md).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "searxng", name)
}

func serve(t *testing.T, h http.Handler) (*Client, *tooltest.Server) {
	t.Helper()
	srv := tooltest.NewServer(t, h)
	c, err := NewClient(srv.Client(), WithBaseURL(srv.URL+"/searx"))
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func TestNewClientNeedsABaseURL(t *testing.T) {
	if _, err := NewClient(nil); !errors.Is(err, ErrNoBaseURL) {
		t.Fatalf("err = %v, want ErrNoBaseURL", err)
	}
	if _, err := NewClient(nil, WithBaseURL("ftp://x")); err == nil {
		t.Fatal("an ftp base URL was accepted")
	}
}

func TestSearchSendsTheDocumentedRequest(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "constructed_search_general.json")})
	_, err := c.Search(context.Background(), &SearchParams{
		Query: " semantic kernel ", PageNo: 3, Language: "en-US", SafeSearch: SafeSearchStrict, TimeRange: TimeRangeWeek,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Last(t)
	if r.Method != http.MethodGet || r.URL.Path != "/searx/search" {
		t.Errorf("request = %s %s", r.Method, r.URL.Path)
	}
	want := map[string]string{"q": "semantic kernel", "format": "json", "pageno": "3", "language": "en-US",
		"safesearch": "2", "time_range": "week", "categories": "general"}
	for k, v := range want {
		if got := r.Query.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if len(r.Query) != len(want) {
		t.Errorf("query has other parameters: %v", r.Query)
	}
	if r.Header.Get("User-Agent") != DefaultUserAgent || r.Header.Get("Accept") != "application/json" {
		t.Errorf("headers = %v", r.Header)
	}
}

func TestSearchLeavesDefaultsToTheInstance(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "constructed_search_general.json")})
	if _, err := c.Search(context.Background(), &SearchParams{Query: "q", SafeSearch: SafeSearchDefault}); err != nil {
		t.Fatal(err)
	}
	q := srv.Last(t).Query
	for _, k := range []string{"language", "safesearch", "time_range"} {
		if q.Has(k) {
			t.Errorf("%s sent: %v", k, q)
		}
	}
	if q.Get("pageno") != "1" {
		t.Errorf("pageno = %q", q.Get("pageno"))
	}
}

func TestSearchDecodesTheResponse(t *testing.T) {
	c, _ := serve(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "constructed_search_general.json")})
	resp, err := c.Search(context.Background(), &SearchParams{Query: "semantic kernel", SafeSearch: SafeSearchDefault})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Query != "semantic kernel" || len(resp.Results) != 4 {
		t.Fatalf("query %q, %d results", resp.Query, len(resp.Results))
	}
	r0, r1 := resp.Results[0], resp.Results[1]
	if r0.URL != "https://learn.microsoft.com/en-us/semantic-kernel/overview/" || r0.Engine != "duckduckgo" ||
		strings.Join(r0.Engines, ",") != "duckduckgo,brave,startpage" || r0.Score != 9 || r0.Category != "general" || r0.PublishedDate != "" {
		t.Errorf("result 0 = %+v", r0)
	}
	if r1.PublishedDate != "2024-10-01T00:00:00" {
		t.Errorf("publishedDate = %q", r1.PublishedDate)
	}
	if len(resp.Answers) != 1 || resp.Answers[0].Text != "Semantic Kernel is an SDK from Microsoft." ||
		resp.Answers[0].URL != "https://en.wikipedia.org/wiki/Semantic_Kernel" {
		t.Errorf("answers = %+v", resp.Answers)
	}
	if len(resp.Suggestions) != 2 {
		t.Errorf("suggestions = %v", resp.Suggestions)
	}
	if len(resp.UnresponsiveEngines) != 1 || resp.UnresponsiveEngines[0] != (UnresponsiveEngine{Name: "google", Reason: "CAPTCHA"}) {
		t.Errorf("unresponsive = %+v", resp.UnresponsiveEngines)
	}
}

func TestDecodeLegacyStringAnswers(t *testing.T) {
	resp, err := DecodeSearchResponse(fixture(t, "constructed_search_legacy_answers.json"), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Answers) != 1 || resp.Answers[0].Text != "2" || resp.NumberOfResults != 12 {
		t.Fatalf("resp = %+v", resp)
	}
}

func TestDecodeOutage(t *testing.T) {
	resp, err := DecodeSearchResponse(fixture(t, "constructed_search_outage.json"), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 0 || len(resp.UnresponsiveEngines) != 3 || resp.UnresponsiveEngines[1].Reason != "Suspended: too many requests" {
		t.Fatalf("resp = %+v", resp)
	}
}

func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name           string
		reply          tooltest.Reply
		formatDisabled bool
		rateLimited    bool
		retryAfter     time.Duration
		message        string
	}{
		// CONSTRUCTED: SearXNG answers format=json with a bare 403 when
		// search.formats lacks json.
		{name: "403 format disabled", reply: tooltest.Reply{Status: 403, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
			Body: []byte("<!doctype html><title>403 Forbidden</title><h1>Forbidden</h1>")}, formatDisabled: true},
		// CONSTRUCTED: the limiter's refusal.
		{name: "429 limiter", reply: tooltest.Reply{Status: 429, Header: http.Header{"Content-Type": {"text/plain"}, "Retry-After": {"30"}},
			Body: []byte("Too Many\n  Requests")}, rateLimited: true, retryAfter: 30 * time.Second, message: "Too Many Requests"},
		// CONSTRUCTED: a proxy in front of a stopped instance.
		{name: "502", reply: tooltest.Reply{Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<h1>Bad Gateway</h1>")}},
		{name: "500 plain", reply: tooltest.Reply{Status: 500, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(strings.Repeat("x", 1000))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, tt.reply)
			_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %T %v", err, err)
			}
			if e.StatusCode != tt.reply.Status || e.FormatDisabled() != tt.formatDisabled || e.RateLimited() != tt.rateLimited || e.RetryAfter != tt.retryAfter {
				t.Errorf("error = %+v", e)
			}
			if tt.message != "" && e.Message != tt.message {
				t.Errorf("message = %q, want %q", e.Message, tt.message)
			}
			if strings.Contains(e.Message, "<") || len(e.Message) > maxMessage+len("…") {
				t.Errorf("message kept markup or is unbounded: %q", e.Message)
			}
			if tt.formatDisabled && !strings.Contains(e.Error(), "search.formats") {
				t.Errorf("Error() = %q does not say how to enable json", e.Error())
			}
		})
	}
}

func TestMalformedBodies(t *testing.T) {
	for name, rep := range map[string]tooltest.Reply{
		"truncated":      {Header: jsonHeader, Body: []byte(`{"query":"q","results":[{"url":`)},
		"null":           {Header: jsonHeader, Body: []byte(`null`)},
		"no results key": {Header: jsonHeader, Body: []byte(`{"query":"q"}`)},
		"html page":      {Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>search</html>")},
		"wrong type":     {Header: jsonHeader, Body: []byte(`{"results":[{"url":1}]}`)},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := serve(t, rep)
			_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %T %v, want *ParseError", err, err)
			}
		})
	}
}

func TestBodyCap(t *testing.T) {
	srv := tooltest.NewServer(t, tooltest.Reply{Header: jsonHeader, Body: fixture(t, "constructed_search_general.json")})
	c, err := NewClient(srv.Client(), WithBaseURL(srv.URL), WithMaxBodyBytes(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(context.Background(), &SearchParams{Query: "q"}); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

func TestTimeout(t *testing.T) {
	// The handler holds the request until the client gives up, so the
	// deadline, not a sleep, decides the order.
	c, _ := serve(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Search(ctx, &SearchParams{Query: "q"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	c, srv := serve(t, tooltest.Reply{Status: 302, Header: http.Header{"Location": {"/login"}}})
	_, err := c.Search(context.Background(), &SearchParams{Query: "q"})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 302 || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v, %d requests", err, len(srv.Requests()))
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []SearchParams{
		{Query: "  "},
		{Query: strings.Repeat("a", MaxQueryBytes+1)},
		{Query: "q", PageNo: -1},
		{Query: "q", SafeSearch: 3},
		{Query: "q", TimeRange: "decade"},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", p)
		}
	}
}
