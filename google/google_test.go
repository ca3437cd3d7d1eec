package google

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
)

const testKey = "AIzaSy-test-key-0123456789"

// fixture reads a recorded answer from testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, "google", name)
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

var jsonHeader = http.Header{"Content-Type": {"application/json; charset=UTF-8"}}

func TestSearchSendsTheDocumentedRequest(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, fixture(t, "cse_what_is_semantic_kernel.json"))
	_, err := c.Search(context.Background(), &SearchParams{
		Query: " semantic kernel ", EngineID: "cx123", Num: 5, Start: 11, SiteSearch: "learn.microsoft.com", SiteSearchFilter: SiteExclude,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := last()
	if r.URL.Path != "/customsearch/v1" {
		t.Errorf("path = %q", r.URL.Path)
	}
	want := map[string]string{"key": testKey, "cx": "cx123", "q": "semantic kernel", "num": "5", "start": "11",
		"siteSearch": "learn.microsoft.com", "siteSearchFilter": "e"}
	q := r.URL.Query()
	for k, v := range want {
		if got := q.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	if len(q) != len(want) {
		t.Errorf("query has extra parameters: %v", q)
	}
	if r.Header.Get("User-Agent") != DefaultUserAgent || r.Header.Get("Accept") != "application/json" {
		t.Errorf("headers = %v", r.Header)
	}
}

func TestSearchDecodesRecordedResponse(t *testing.T) {
	for _, bom := range []bool{false, true} {
		body := fixture(t, "cse_what_is_semantic_kernel.json")
		if bom {
			// The recorded site-filter body starts with a UTF-8 BOM; so does this copy.
			body = append([]byte("\xef\xbb\xbf"), body...)
		}
		c, _ := serve(t, 200, jsonHeader, body)
		resp, err := c.Search(context.Background(), &SearchParams{Query: "sk", EngineID: "cx"})
		if err != nil {
			t.Fatalf("bom=%v: %v", bom, err)
		}
		if len(resp.Items) != 4 || resp.Items[0].Link != "https://learn.microsoft.com/en-us/semantic-kernel/overview/" {
			t.Fatalf("bom=%v: items = %+v", bom, resp.Items)
		}
		if resp.SearchInformation == nil || resp.SearchInformation.TotalResults != "16200000" || resp.Queries.NextPage[0].StartIndex != 5 {
			t.Errorf("bom=%v: metadata = %+v %+v", bom, resp.SearchInformation, resp.Queries)
		}
	}
}

func TestSearchWithoutItemsIsEmpty(t *testing.T) {
	c, _ := serve(t, 200, jsonHeader, []byte(`{"kind":"customsearch#search","searchInformation":{"totalResults":"0"}}`))
	resp, err := c.Search(context.Background(), &SearchParams{Query: "zzqx", EngineID: "cx"})
	if err != nil || len(resp.Items) != 0 {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		fixture            string
		status             int
		header             http.Header
		reasons            []string
		quota, daily, auth bool
		retryAfter         time.Duration
	}{
		{"error_403_dailyLimitExceeded_legacy.json", 403, nil, []string{"dailyLimitExceeded"}, true, true, false, 0},
		{"error_429_quota_exceeded_resource_exhausted.json", 429, nil, []string{"rateLimitExceeded"}, true, true, false, 0},
		{"error_429_quota_exceeded_resource_exhausted.json", 429, http.Header{"Retry-After": {"2"}}, []string{"rateLimitExceeded"}, true, true, false, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			c, _ := serve(t, tt.status, tt.header, fixture(t, tt.fixture))
			_, err := c.Search(context.Background(), &SearchParams{Query: "q", EngineID: "cx"})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.StatusCode != tt.status || strings.Join(e.Reasons, ",") != strings.Join(tt.reasons, ",") || e.Message == "" {
				t.Errorf("got %+v", e)
			}
			if e.QuotaExceeded() != tt.quota || e.DailyQuota() != tt.daily || e.KeyInvalid() != tt.auth || e.RetryAfter != tt.retryAfter {
				t.Errorf("quota=%v daily=%v auth=%v retryAfter=%v", e.QuotaExceeded(), e.DailyQuota(), e.KeyInvalid(), e.RetryAfter)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Error("the key is in the error text")
			}
		})
	}
}

func TestKeyInvalid(t *testing.T) {
	// Google's answer to a bad key; the upstream text is scrubbed of the key
	// should it ever echo it.
	body := `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key. (` + testKey + `)","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`
	c, _ := serve(t, 400, jsonHeader, []byte(body))
	_, err := c.Search(context.Background(), &SearchParams{Query: "q", EngineID: "cx"})
	var e *Error
	if !errors.As(err, &e) || !e.KeyInvalid() || e.QuotaExceeded() {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the key is in the error text: %v", err)
	}
}

func TestTransportErrorsHideTheKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	c, err := NewClient(nil, testKey, WithBaseURL("http://"+addr))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Search(context.Background(), &SearchParams{Query: "q", EngineID: "cx"})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the key is in the error text: %v", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) {
		t.Errorf("err %T is no longer a net.Error", err)
	}
}

func TestSearchFailsOnBadBodies(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
		want        func(error) bool
	}{
		{"malformed JSON", "application/json", []byte(`{"items": [{"title": `), func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe) && strings.Contains(err.Error(), "malformed JSON")
		}},
		{"HTML instead of JSON", "text/html", []byte(`<!doctype html><p>sorry`), func(err error) bool {
			var pe *ParseError
			return errors.As(err, &pe) && strings.Contains(err.Error(), "text/html")
		}},
		{"huge", "application/json", make([]byte, DefaultMaxBodyBytes+10), func(err error) bool {
			return errors.Is(err, ErrBodyTooLarge)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := serve(t, 200, http.Header{"Content-Type": {tt.contentType}}, tt.body)
			_, err := c.Search(context.Background(), &SearchParams{Query: "q", EngineID: "cx"})
			if err == nil || !tt.want(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := []SearchParams{
		{Query: "q", EngineID: "cx"}, {Query: "q", EngineID: "cx", Num: 10, Start: 90}, {Query: "q", EngineID: "cx", Num: 9, Start: 91},
		{Query: "q", EngineID: "cx", SiteSearch: "a.com"}, {Query: "q", EngineID: "cx", SiteSearch: "a.com", SiteSearchFilter: SiteExclude},
	}
	for _, p := range ok {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	bad := []SearchParams{
		{Query: " ", EngineID: "cx"}, {Query: "q"}, {Query: "q", EngineID: "cx", Num: 11}, {Query: "q", EngineID: "cx", Start: -1},
		{Query: "q", EngineID: "cx", Start: 91}, // with the default num of 10: 101
		{Query: "q", EngineID: "cx", Start: 95, Num: 6},
		{Query: "q", EngineID: "cx", SiteSearchFilter: SiteInclude}, {Query: "q", EngineID: "cx", SiteSearch: "a", SiteSearchFilter: "x"},
		{Query: strings.Repeat("q", MaxQueryBytes+1), EngineID: "cx"},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: accepted", p)
		}
	}
}

func TestWithBaseURL(t *testing.T) {
	for _, u := range []string{"", "customsearch.googleapis.com", "ftp://x", "http://", "http://h/?q=1",
		"https://user:s3cret@customsearch.googleapis.com", "https://h/#s3cret"} {
		_, err := NewClient(nil, testKey, WithBaseURL(u))
		if err == nil {
			t.Errorf("WithBaseURL(%q) accepted", u)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("WithBaseURL(%q) error repeats the URL's secret: %v", u, err)
		}
	}
	c, err := NewClient(nil, testKey, WithBaseURL("http://127.0.0.1:8082/prefix/"))
	if err != nil || c.core.BaseURL().String() != "http://127.0.0.1:8082/prefix" {
		t.Fatalf("got %v, %v", c, err)
	}
}
