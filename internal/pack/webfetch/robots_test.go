package webfetch_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/safehttp"
	"github.com/toolport/toolport/tool"
)

// robotsSite serves robots.txt with robotsTxt and an HTML page on every
// other path, counting both kinds of request.
type robotsSite struct {
	url                  string
	robotsHits, pageHits atomic.Int32
}

func newRobotsSite(t *testing.T, robotsTxt http.HandlerFunc) *robotsSite {
	t.Helper()
	s := &robotsSite{}
	srv := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		s.robotsHits.Add(1)
		robotsTxt(w, r)
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/private/landing", http.StatusFound)
			return
		}
		s.pageHits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	}))
	s.url = srv.URL
	return s
}

func robotsBody(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(s)) }
}

func robotsStatus(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func wantRobotsRefusal(t *testing.T, res *tool.Result) {
	t.Helper()
	if res.OK() {
		t.Fatalf("fetched, want ROBOTS_DISALLOWED")
	}
	if res.Err.Code != tool.CodeRobotsDisallowed || res.Err.Retryable || res.Retried {
		t.Fatalf("got %s, want a non-retryable, unretried ROBOTS_DISALLOWED", res.JSON)
	}
}

func TestRobotsPolicy(t *testing.T) {
	tests := []struct {
		name    string
		robots  http.HandlerFunc
		path    string
		allowed bool
	}{
		{"disallowed path", robotsBody("User-agent: *\nDisallow: /private\n"), "/private/a", false},
		{"allowed path", robotsBody("User-agent: *\nDisallow: /private\n"), "/public", true},
		{"group for Toolport", robotsBody("User-agent: *\nAllow: /\n\nUser-agent: toolport\nDisallow: /\n"), "/public", false},
		{"no robots.txt (404)", robotsStatus(404), "/anything", true},
		{"robots.txt forbidden (403)", robotsStatus(403), "/anything", true},
		{"robots.txt server error (503)", robotsStatus(503), "/anything", false},
		{"redirect to a disallowed page", robotsBody("User-agent: *\nDisallow: /private\n"), "/moved", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRobotsSite(t, tt.robots)
			res, _ := call(t, registry(t, webfetch.Config{}), map[string]any{"url": s.url + tt.path})
			if tt.allowed {
				if !res.OK() {
					t.Fatalf("refused: %s", res.JSON)
				}
				return
			}
			wantRobotsRefusal(t, res)
			if tt.path != "/moved" && s.pageHits.Load() != 0 {
				t.Errorf("the page was requested despite robots.txt")
			}
		})
	}
}

func TestRobotsRefusalNamesNoQuery(t *testing.T) {
	s := newRobotsSite(t, robotsBody("User-agent: *\nDisallow: /private\n"))
	res, _ := call(t, registry(t, webfetch.Config{}), map[string]any{"url": s.url + "/private/a?token=s3cr3t"})
	wantRobotsRefusal(t, res)
	if strings.Contains(string(res.JSON), "s3cr3t") {
		t.Errorf("query leaked into the refusal: %s", res.JSON)
	}
	if !strings.Contains(res.Err.Message, "/private/a") || !strings.Contains(res.Err.Message, "robots.txt") {
		t.Errorf("refusal does not say what and why: %s", res.Err.Message)
	}
}

// A site whose robots.txt gets no answer at all fails as the timeout it is,
// quickly, without the page being requested: not as a robots refusal.
func TestRobotsTimeoutIsATimeout(t *testing.T) {
	release := make(chan struct{})
	s := newRobotsSite(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	const robotsTimeout = 300 * time.Millisecond
	reg := registry(t, webfetch.Config{RobotsTimeout: robotsTimeout})
	start := time.Now()
	res, _ := call(t, reg, map[string]any{"url": s.url + "/page"})
	if res.OK() || res.Err.Code != tool.CodeTimeout || !strings.Contains(res.Err.Message, "robots.txt") {
		t.Fatalf("got %s, want a TIMEOUT naming robots.txt", res.JSON)
	}
	if d := time.Since(start); d > 2*robotsTimeout+3*time.Second {
		t.Errorf("the failure took %s with a %s robots timeout", d, robotsTimeout)
	}
	if s.pageHits.Load() != 0 {
		t.Errorf("the page was requested")
	}
}

// Offline, a host that does not resolve is a network error, not
// "robots.txt could not be reached, which disallows everything".
func TestUnresolvableHostIsANetworkError(t *testing.T) {
	r := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("offline")
	}}
	reg := registry(t, webfetch.Config{HTTP: safehttp.NewClient(safehttp.Options{Resolver: r})})
	res, _ := call(t, reg, map[string]any{"url": "https://no-such-host.example/page"})
	if res.OK() || res.Err.Code != tool.CodeNetwork || strings.Contains(res.Err.Message, "disallow") {
		t.Fatalf("got %s, want a NETWORK_ERROR", res.JSON)
	}
}

func TestRobotsFetchedOncePerOrigin(t *testing.T) {
	s := newRobotsSite(t, robotsBody("User-agent: *\nDisallow: /private\n"))
	reg := registry(t, webfetch.Config{})
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if res, _ := call(t, reg, map[string]any{"url": fmt.Sprintf("%s/page/%d", s.url, i)}); !res.OK() {
				t.Errorf("fetch %d: %s", i, res.JSON)
			}
		})
	}
	wg.Wait()
	if res, _ := call(t, reg, map[string]any{"url": s.url + "/private/x"}); res.OK() {
		t.Error("the cached rules were not applied")
	}
	if got := s.robotsHits.Load(); got != 1 {
		t.Errorf("robots.txt requested %d times for %d fetches, want 1", got, n+1)
	}
}

func TestIgnoreRobots(t *testing.T) {
	s := newRobotsSite(t, robotsBody("User-agent: *\nDisallow: /\n"))
	res, _ := call(t, registry(t, webfetch.Config{IgnoreRobots: true}), map[string]any{"url": s.url + "/page"})
	if !res.OK() {
		t.Fatalf("IgnoreRobots: %s", res.JSON)
	}
	if s.robotsHits.Load() != 0 {
		t.Errorf("robots.txt was requested although ignored")
	}

	c, err := config.New(func(k string) string { return map[string]string{"TOOLPORT_FETCH_IGNORE_ROBOTS": "1"}[k] }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := webfetch.ConfigFromEnv(c); err != nil || !cfg.IgnoreRobots {
		t.Errorf("TOOLPORT_FETCH_IGNORE_ROBOTS=1 gave %+v, %v", cfg, err)
	}
}

// TestRobotsCheckedOnEveryRedirect: a redirect chain is checked hop by hop,
// on every origin it passes through, and stops at the first hop robots.txt
// disallows, before that hop is requested.
func TestRobotsCheckedOnEveryRedirect(t *testing.T) {
	disallowPrivate := robotsBody("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		name string
		// chain builds the start of the chain from the two sites' URLs;
		// each site redirects /r/<url-escaped target> to the target.
		chain   func(a, b string) string
		allowed bool
		reason  string // the hop named in the refusal
	}{
		{"through a disallowed path on the same site", func(a, b string) string {
			return a + "/r?to=" + url.QueryEscape("/private/hop?to="+url.QueryEscape("/public/end"))
		}, false, "/private/hop"},
		{"through a disallowed path on another site", func(a, b string) string {
			return a + "/r?to=" + url.QueryEscape(b+"/private/hop?to="+url.QueryEscape(b+"/public/end"))
		}, false, "/private/hop"},
		{"ending on a disallowed path", func(a, b string) string {
			return a + "/r?to=" + url.QueryEscape(b+"/r?to="+url.QueryEscape("/private/end"))
		}, false, "/private/end"},
		{"through allowed paths on both sites", func(a, b string) string {
			return a + "/r?to=" + url.QueryEscape(b+"/r?to="+url.QueryEscape(a+"/public/end"))
		}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			requested := map[string]bool{}
			site := func() *httptest.Server {
				return robotsServer(t, disallowPrivate, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					requested[r.URL.Path] = true
					mu.Unlock()
					if to := r.URL.Query().Get("to"); to != "" {
						http.Redirect(w, r, to, http.StatusFound)
						return
					}
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					fmt.Fprint(w, article)
				}))
			}
			a, b := site(), site()
			res, out := call(t, registry(t, webfetch.Config{}), map[string]any{"url": tt.chain(a.URL, b.URL)})
			if tt.allowed {
				if !res.OK() {
					t.Fatalf("refused: %s", res.JSON)
				}
				if !strings.HasSuffix(out.URL, "/public/end") {
					t.Errorf("ended at %s", out.URL)
				}
				return
			}
			wantRobotsRefusal(t, res)
			if !strings.Contains(res.Err.Message, tt.reason) || !strings.Contains(res.Err.Message, "redirect") {
				t.Errorf("refusal does not name the redirect to %s: %s", tt.reason, res.Err.Message)
			}
			mu.Lock()
			defer mu.Unlock()
			if requested[tt.reason] || requested["/public/end"] {
				t.Errorf("requested past the disallowed hop: %v", requested)
			}
		})
	}
}
