package opendata

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestUpstreamErrors(t *testing.T) {
	const html = "text/html; charset=utf-8"
	const js = "application/json"
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		code        tool.Code
		retryable   bool
		wantCalls   int // 2 when the registry retried
		wantMessage string
	}{
		{"404 with data.gov.il's Hebrew Not Found",
			tooltest.Respond(404, js, tooltest.JSONFixture(t, "ckan", "data.gov.il/error_not_found_resource_he.json")),
			tool.CodeNotFound, false, 1, "package_search: Not Found Error: לא נמצא: Resource was not found."},
		{"200 with success false",
			tooltest.Respond(200, js, []byte(`{"help":"h","success":false,"error":{"__type":"Not Found Error","message":"Not found"}}`)),
			tool.CodeNotFound, false, 1, "package_search: Not Found Error: Not found"},
		{"409 Validation Error with field errors",
			tooltest.Respond(409, js, tooltest.JSONFixture(t, "ckan", "data.gov.il/error_validation_filters.json")),
			tool.CodeValidation, false, 1, "package_search: Validation Error: filters: Cannot parse JSON"},
		{"400 Search Query Error",
			tooltest.Respond(400, js, []byte(`{"success":false,"error":{"__type":"Search Query Error","message":"Search Query is invalid: \"Invalid search query: unbalanced parentheses\""}}`)),
			tool.CodeValidation, false, 1, `Search Query Error: Search Query is invalid`},
		{"403 Authorization Error",
			tooltest.Respond(403, js, []byte(`{"success":false,"error":{"__type":"Authorization Error","message":"Access denied"}}`)),
			tool.CodeAuthInvalid, false, 1, "Authorization Error: Access denied"},
		{"403 from a CDN, HTML body",
			tooltest.Respond(403, html, []byte("<html><body>Access Denied</body></html>")),
			tool.CodeBlocked, false, 1, "package_search: HTTP 403 Forbidden"},
		{"500 with a CKAN error object",
			tooltest.Respond(500, js, []byte(`{"success":false,"error":{"__type":"Internal Error","message":"boom"}}`)),
			tool.CodeAPI, false, 1, "package_search: Internal Error: boom"},
		{"500 HTML", tooltest.Respond(500, html, []byte("<h1>Internal Server Error</h1>")),
			tool.CodeHTTP, false, 1, "package_search: HTTP 500 Internal Server Error"},
		{"503 HTML is retried once", tooltest.Respond(503, html, []byte("<h1>down</h1>")),
			tool.CodeHTTP, true, 2, "package_search: HTTP 503 Service Unavailable"},
		{"429 is retried once", tooltest.Respond(429, "text/plain", []byte("slow down")),
			tool.CodeRateLimit, true, 2, "package_search: HTTP 429 Too Many Requests"},
		{"200 HTML instead of JSON", tooltest.Respond(200, html, []byte("<!doctype html><title>Maintenance</title>")),
			tool.CodeParse, false, 1, "package_search: response is text/html, not JSON"},
		{"200 truncated JSON", tooltest.Respond(200, js, tooltest.JSONFixture(t, "ckan", "demo.ckan.org/package_search_rows3_facets.json")[:4000]),
			tool.CodeParse, false, 1, "package_search: response is not valid JSON: unexpected end of JSON input"},
		{"200 JSON that is not a CKAN response", tooltest.Respond(200, js, []byte(`{"results":[]}`)),
			tool.CodeParse, false, 1, `no "success" field`},
		{"200 success with the wrong result shape",
			tooltest.Respond(200, js, []byte(`{"success":true,"result":{"count":"three","results":[]}}`)),
			tool.CodeParse, false, 1, "unexpected result structure: field count: expected int, got JSON string"},
		{"200 success with results not a list",
			tooltest.Respond(200, js, []byte(`{"success":true,"result":{"count":1,"results":{"id":"x"}}}`)),
			tool.CodeParse, false, 1, "unexpected result structure: field results"},
		{"200 success without result", tooltest.Respond(200, js, []byte(`{"success":true,"result":null}`)),
			tool.CodeParse, false, 1, `response has no "result"`},
		{"empty body", tooltest.Respond(200, js, nil), tool.CodeParse, false, 1, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tt.handler})
			res, env := call(t, serverRegistry(t, srv), "searchDatasets", `{"query":"x"}`)
			e := mustFail(t, res, tt.code)
			if !strings.Contains(e.Message, tt.wantMessage) {
				t.Errorf("message = %q\n want it to contain %q", e.Message, tt.wantMessage)
			}
			if e.Retryable != tt.retryable || env["retryable"] != tt.retryable {
				t.Errorf("retryable = %v, want %v", e.Retryable, tt.retryable)
			}
			if n := len(srv.Requests()); n != tt.wantCalls {
				t.Errorf("portal called %d times, want %d", n, tt.wantCalls)
			}
			if env["wasRetried"] != (tt.wantCalls == 2) {
				t.Errorf("wasRetried = %v", env["wasRetried"])
			}
		})
	}
}

func TestTransientFailureThenSuccessIsRetriedOnce(t *testing.T) {
	var n atomic.Int32
	ok := tooltest.CKANPackageSearch(t)
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>502 Bad Gateway</html>"))
			return
		}
		ok(w, r)
	}})
	res, _ := call(t, serverRegistry(t, srv), "searchDatasets", `{}`)
	var out SearchDatasetsOutput
	mustOK(t, res, &out)
	if !res.Retried || len(srv.Requests()) != 2 || out.Total != 3 {
		t.Errorf("retried=%v calls=%d total=%d; want a retry, 2 calls, 3 datasets", res.Retried, len(srv.Requests()), out.Total)
	}
}

func TestNetworkError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now

	reg := newRegistry(t, Config{BaseURL: "http://" + addr})
	res, env := call(t, reg, "searchDatasets", `{"query":"secret-looking-query"}`)
	e := mustFail(t, res, tool.CodeNetwork)
	if !e.Retryable || env["wasRetried"] != true {
		t.Errorf("retryable=%v wasRetried=%v, want both true", e.Retryable, env["wasRetried"])
	}
	if !strings.HasPrefix(e.Message, "package_search: network error") {
		t.Errorf("message = %q", e.Message)
	}
	if strings.Contains(e.Message, "secret-looking-query") || strings.Contains(e.Message, "/api/3/action") {
		t.Errorf("message repeats the request URL: %q", e.Message)
	}
}

func TestClientTimeout(t *testing.T) {
	srv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answer
	}})
	c, err := ckan.NewClient(srv.URL, ckan.WithHTTPClient(srv.Client()), ckan.WithTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.PackageSearch(context.Background(), &ckan.PackageSearchOptions{Rows: 1})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
	if got := toolError(err).(*tool.Error); got.Code != tool.CodeTimeout || !got.Retryable {
		t.Errorf("tool error = %s retryable=%v, want TIMEOUT retryable", got.Code, got.Retryable)
	}
}

// A portal's Retry-After, in seconds or as an HTTP-date, reaches the tool
// error, so that the registry and the agent know how long to wait.
func TestRetryAfterIsPassedOn(t *testing.T) {
	soon := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tt := range []struct {
		header   string
		min, max time.Duration
	}{
		{"7", 7 * time.Second, 7 * time.Second},
		{soon, 80 * time.Second, 90 * time.Second},
		{"", 0, 0},
		{"later", 0, 0},
		{"99999999999", maxRetryAfter, maxRetryAfter},
	} {
		err := toolError(&ckan.Error{Action: "package_search", StatusCode: http.StatusTooManyRequests, RetryAfter: tt.header})
		te, ok := err.(*tool.Error)
		if !ok || te.Code != tool.CodeRateLimit || te.RetryAfter < tt.min || te.RetryAfter > tt.max {
			t.Errorf("Retry-After %q: %+v, want a RATE_LIMIT waiting %v..%v", tt.header, err, tt.min, tt.max)
		}
	}
}
