package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// errTestTooLarge stands for a client's own body-too-large sentinel.
var errTestTooLarge = errors.New("test: response body too large")

// errStatus is what the test's CheckFunc returns for a non-2xx answer.
type errStatus struct{ status int }

func (e *errStatus) Error() string { return fmt.Sprintf("test: HTTP %d", e.status) }

func checkStatus(resp *http.Response, _ []byte, _ time.Time) error {
	if Success(resp.StatusCode) {
		return nil
	}
	return &errStatus{resp.StatusCode}
}

func newTestCore(t *testing.T, h http.Handler) *Core {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := NewCore("test", "", "Toolport-test/1", 64)
	c.SetHTTPClient(srv.Client())
	if err := c.SetBaseURL(srv.URL + "/api/"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCoreNewRequest(t *testing.T) {
	c := NewCore("test", "https://api.example.org/v1/", "UA/1", 1<<10)
	c.SetHeader("X-Key", "k")
	tests := []struct {
		name, method, path string
		query              url.Values
		body               []byte
		wantURL, wantCT    string
	}{
		{"GET with a query", http.MethodGet, "/search", url.Values{"q": {"a b"}}, nil, "https://api.example.org/v1/search?q=a+b", ""},
		{"GET without a query", http.MethodGet, "/x", nil, nil, "https://api.example.org/v1/x", ""},
		{"POST with a body", http.MethodPost, "/action/y", nil, []byte(`{}`), "https://api.example.org/v1/action/y", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := c.NewRequest(context.Background(), tt.method, tt.path, tt.query, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tt.wantURL {
				t.Errorf("URL = %s, want %s", req.URL, tt.wantURL)
			}
			if got := req.Header.Get("Content-Type"); got != tt.wantCT {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantCT)
			}
			if req.Header.Get("Accept") != "application/json" || req.Header.Get("User-Agent") != "UA/1" || req.Header.Get("X-Key") != "k" {
				t.Errorf("headers = %v", req.Header)
			}
			if (req.Body == nil) != (tt.body == nil) {
				t.Errorf("body set = %v, want %v", req.Body != nil, tt.body != nil)
			}
		})
	}
	if _, err := NewCore("nobase", "", "UA", 1).NewRequest(context.Background(), http.MethodGet, "/x", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "nobase: ") {
		t.Errorf("a core without a base URL: err = %v", err)
	}
}

func TestCoreBaseURL(t *testing.T) {
	c := NewCore("test", "https://default.example.org", "UA", 1)
	if err := c.SetBaseURLUnlessEmpty("  "); err != nil || c.BaseURL().String() != "https://default.example.org" {
		t.Errorf("an empty URL changed the default: %v, %v", c.BaseURL(), err)
	}
	err := c.SetBaseURL("https://user:hunter2@example.org")
	if !errors.Is(err, ErrBaseURL) || !strings.HasPrefix(err.Error(), "test: base URL must be") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v: want ErrBaseURL, named for the client, without the URL's secret", err)
	}
	if err := c.SetBaseURL("http://127.0.0.1:9/prefix//"); err != nil || c.BaseURL().String() != "http://127.0.0.1:9/prefix" {
		t.Errorf("trailing slashes: %v, %v", c.BaseURL(), err)
	}
	// BaseURL hands out a copy: a caller cannot move the client.
	c.BaseURL().Path = "/elsewhere"
	if c.BaseURL().Path != "/prefix" {
		t.Errorf("BaseURL's result aliases the core's")
	}
}

func TestCoreDo(t *testing.T) {
	c := newTestCore(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/ok":
			fmt.Fprint(w, `{"ok":true}`)
		case "/api/teapot":
			w.WriteHeader(http.StatusTeapot)
		case "/api/big":
			fmt.Fprint(w, strings.Repeat("x", 65))
		case "/api/exact":
			fmt.Fprint(w, strings.Repeat("x", 64))
		}
	}))
	ctx := context.Background()
	t.Run("a success returns the body", func(t *testing.T) {
		resp, body, err := c.Get(ctx, "/ok", nil, checkStatus)
		if err != nil || string(body) != `{"ok":true}` || resp.StatusCode != 200 {
			t.Fatalf("Get = %v, %q, %v", resp, body, err)
		}
	})
	t.Run("the check's typed error comes back as is", func(t *testing.T) {
		_, _, err := c.Get(ctx, "/teapot", nil, checkStatus)
		var e *errStatus
		if !errors.As(err, &e) || e.status != http.StatusTeapot || err.Error() != "test: HTTP 418" {
			t.Errorf("err = %v, want the check's *errStatus unwrapped", err)
		}
	})
	t.Run("a body at the cap is read whole", func(t *testing.T) {
		if _, body, err := c.Get(ctx, "/exact", nil, checkStatus); err != nil || len(body) != 64 {
			t.Errorf("len = %d, err = %v", len(body), err)
		}
	})
	t.Run("a body over the cap fails, naming the client's sentinel", func(t *testing.T) {
		_, _, err := c.Get(ctx, "/big", nil, checkStatus)
		if !errors.Is(err, ErrBodyTooLarge) || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("default sentinel: err = %v", err)
		}
		c.SetBodyTooLarge(errTestTooLarge)
		if _, _, err := c.Get(ctx, "/big", nil, checkStatus); !errors.Is(err, errTestTooLarge) || !strings.Contains(err.Error(), "over 64 bytes") {
			t.Errorf("client sentinel: err = %v", err)
		}
	})
}

func TestCoreTransportErrorsAreScrubbedAndWrapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	base := srv.URL
	srv.Close() // nothing listens there now: connection refused
	const key = "AIza/secret+key"
	c := NewCore("test", base, "UA", 1<<10)
	c.SetHTTPClient(nil)
	c.AddSecret(key)
	_, _, err := c.Get(context.Background(), "/search", url.Values{"key": {key}}, checkStatus)
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	msg := err.Error()
	if strings.Contains(msg, key) || strings.Contains(msg, url.QueryEscape(key)) || !strings.Contains(msg, Redacted) {
		t.Errorf("err = %q: want the key replaced by %s", msg, Redacted)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || !strings.HasPrefix(msg, "test: ") {
		t.Errorf("err = %v: want a *url.Error wrapped with the client's name", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Get(ctx, "/search", nil, checkStatus); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v, want context.Canceled", err)
	}
}

func TestCoreScrub(t *testing.T) {
	c := NewCore("test", "", "UA", 1)
	c.AddSecret("")
	c.AddSecret("a b&c")
	tests := []struct{ in, want string }{
		{"key a b&c here", "key [REDACTED] here"},
		{"q=" + url.QueryEscape("a b&c"), "q=[REDACTED]"},
		{"nothing secret", "nothing secret"},
	}
	for _, tt := range tests {
		if got := c.Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCoreRedirects(t *testing.T) {
	var hits int
	mux := http.NewServeMux()
	mux.HandleFunc("/api/from", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/api/to", http.StatusFound) })
	mux.HandleFunc("/api/to", func(w http.ResponseWriter, r *http.Request) { hits++; fmt.Fprint(w, "{}") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := NewCore("test", srv.URL+"/api", "UA", 1<<10)

	c.SetHTTPClient(srv.Client())
	resp, _, err := c.Get(context.Background(), "/from", nil, nil)
	if err != nil || resp.StatusCode != http.StatusFound || hits != 0 {
		t.Errorf("SetHTTPClient: status %v, err %v, target hit %d times; want the 302 itself", resp.StatusCode, err, hits)
	}
	c.SetRedirectingHTTPClient(srv.Client())
	resp, _, err = c.Get(context.Background(), "/from", nil, nil)
	if err != nil || resp.StatusCode != http.StatusOK || hits != 1 {
		t.Errorf("SetRedirectingHTTPClient: status %v, err %v, target hit %d times; want it followed", resp.StatusCode, err, hits)
	}
}

func TestBuild(t *testing.T) {
	type client struct{ ua string }
	type option func(*client) error
	errBad := errors.New("bad option")
	set := func(ua string) option { return func(c *client) error { c.ua = ua; return nil } }
	fail := func(c *client) error { return errBad }

	core := NewCore("test", "https://example.org", "UA", 1)
	c, err := Build(&client{}, core, nil, []option{set("a"), set("b")})
	if err != nil || c.ua != "b" || core.HTTPClient() == nil || core.HTTPClient().CheckRedirect == nil {
		t.Errorf("Build = %+v, %v: want options in order and a redirect-refusing client", c, err)
	}
	if c, err := Build(&client{}, core, nil, []option{set("a"), fail, set("b")}); c != nil || !errors.Is(err, errBad) {
		t.Errorf("failing option: Build = %+v, %v; want nil and the option's error", c, err)
	}
}

func TestGetDecoded(t *testing.T) {
	c := newTestCore(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, `{"n":1}`)
	}))
	type answer struct{ body, contentType string }
	got, err := GetDecoded(context.Background(), c, "/x", nil, checkStatus, func(body []byte, ct string) (*answer, error) {
		return &answer{string(body), ct}, nil
	})
	if err != nil || got.body != `{"n":1}` || got.contentType != "application/json; charset=utf-8" {
		t.Errorf("GetDecoded = %+v, %v", got, err)
	}
}

func TestStatusHelpers(t *testing.T) {
	errNotFound, errLimited, errOther := errors.New("nf"), errors.New("rl"), errors.New("other")
	tests := []struct {
		status                int
		success, temporary    bool
		isNotFound, isLimited bool
	}{
		{200, true, false, false, false},
		{204, true, false, false, false},
		{304, false, false, false, false},
		{404, false, false, true, false},
		{429, false, true, false, true},
		{500, false, true, false, false},
		{501, false, false, false, false},
		{503, false, true, false, false},
	}
	for _, tt := range tests {
		if got := Success(tt.status); got != tt.success {
			t.Errorf("Success(%d) = %v", tt.status, got)
		}
		if got := TemporaryStatus(tt.status); got != tt.temporary {
			t.Errorf("TemporaryStatus(%d) = %v", tt.status, got)
		}
		if got := StatusIs(tt.status, errNotFound, errNotFound, errLimited); got != tt.isNotFound {
			t.Errorf("StatusIs(%d, notFound) = %v", tt.status, got)
		}
		if got := StatusIs(tt.status, errLimited, errNotFound, errLimited); got != tt.isLimited {
			t.Errorf("StatusIs(%d, rateLimited) = %v", tt.status, got)
		}
		if StatusIs(tt.status, errOther, errNotFound, errLimited) || StatusIs(tt.status, nil, nil, errLimited) {
			t.Errorf("StatusIs(%d) matched a target it does not know", tt.status)
		}
	}
}

func TestErrorTexts(t *testing.T) {
	tests := []struct{ got, want string }{
		{ErrorText("lrclib", 404, "TrackNotFound", "Failed to find"), "lrclib: HTTP 404 TrackNotFound: Failed to find"},
		{ErrorText("reccobeats", 500, "", ""), "reccobeats: HTTP 500"},
		{ErrorText("brave", 429, "", "slow down"), "brave: HTTP 429: slow down"},
		{ParseErrorText("google", "text/html", io.ErrUnexpectedEOF), "google: expected JSON, got text/html: unexpected EOF"},
		{ParseErrorText("google", "application/problem+json", io.ErrUnexpectedEOF), "google: malformed JSON: unexpected EOF"},
		{ParseErrorText("google", "", io.ErrUnexpectedEOF), "google: malformed JSON: unexpected EOF"},
		{string(TrimBOM([]byte("\xef\xbb\xbf{}"))), "{}"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestSleepCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := SleepCtx(context.Background(), 3*time.Second); err != nil || time.Since(start) != 3*time.Second {
			t.Errorf("SleepCtx = %v after %v, want nil after 3s", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := SleepCtx(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("SleepCtx = %v after %v, want the deadline after 1s", err, time.Since(start))
		}
		// An ended context wins even over no wait at all.
		if err := SleepCtx(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("SleepCtx(ended, 0) = %v, want the deadline", err)
		}
		if err := SleepCtx(context.Background(), -time.Second); err != nil {
			t.Errorf("SleepCtx(live, -1s) = %v, want nil", err)
		}
	})
}
