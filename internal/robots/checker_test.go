package robots_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/robots"
	"github.com/toolport/toolport/safehttp"
)

// site serves handler on 127.0.0.2 and counts the requests for /robots.txt.
type site struct {
	*httptest.Server
	robotsHits atomic.Int32
}

func newSite(t *testing.T, robotsTxt http.HandlerFunc) *site {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("cannot listen on 127.0.0.2: %v", err)
	}
	s := &site{}
	s.Server = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			s.robotsHits.Add(1)
			robotsTxt(w, r)
			return
		}
		http.NotFound(w, r)
	})}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func client() *safehttp.Client {
	return safehttp.NewClient(safehttp.Options{Policy: safehttp.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}})
}

func checker(opts robots.Options) *robots.Checker {
	if opts.HTTP == nil {
		opts.HTTP = client()
	}
	return robots.NewChecker(opts)
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func body(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(s)) }
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func TestStatusPolicy(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		allowed bool
	}{
		{"2xx is parsed: allowed path", body("User-agent: *\nDisallow: /private\n"), true},
		{"2xx with a disallow-all file", body("User-agent: *\nDisallow: /\n"), false},
		{"2xx empty", body(""), true},
		{"401 is unavailable", status(401), true},
		{"403 is unavailable", status(403), true},
		{"404 is unavailable", status(404), true},
		{"410 is unavailable", status(410), true},
		{"429 is unreachable", status(429), false},
		{"500 is unreachable", status(500), false},
		{"503 is unreachable", status(503), false},
		{"redirect is followed", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("hop") == "" {
				http.Redirect(w, r, "/robots.txt?hop=1", http.StatusMovedPermanently)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, tt.handler)
			err := checker(robots.Options{}).Check(context.Background(), mustURL(t, s.URL+"/page"))
			var de *robots.DisallowedError
			switch {
			case tt.allowed && err != nil:
				t.Fatalf("Check = %v, want allowed", err)
			case !tt.allowed && !errors.As(err, &de):
				t.Fatalf("Check = %v, want a *DisallowedError", err)
			}
		})
	}
}

func TestRedirectHopsAreBounded(t *testing.T) {
	// Five hops are followed; a sixth makes robots.txt unavailable (allowed).
	for _, tc := range []struct {
		hops    int
		allowed bool
	}{{5, false}, {6, true}} {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			n := len(r.URL.RawQuery)
			if n < tc.hops {
				http.Redirect(w, r, "/robots.txt?"+r.URL.RawQuery+"x", http.StatusFound)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /\n"))
		})
		err := checker(robots.Options{}).Check(context.Background(), mustURL(t, s.URL+"/page"))
		if got := err == nil; got != tc.allowed {
			t.Errorf("%d hops: Check = %v, want allowed=%v", tc.hops, err, tc.allowed)
		}
	}
}

// A site that does not answer at all is a network failure, reported as
// one, and not "robots.txt disallows it": RFC 9309's unreachable rule is for
// sites that answer.
func TestNoAnswerIsANetworkError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: connection refused
	err = checker(robots.Options{}).Check(context.Background(), mustURL(t, "http://"+addr+"/page"))
	var ue *robots.UnreachableError
	var de *robots.DisallowedError
	if !errors.As(err, &ue) || errors.As(err, &de) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Check = %v, want an *UnreachableError naming the refusal", err)
	}

	// A name that does not resolve.
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return nil, errors.New("no DNS here")
	}}
	hc := safehttp.NewClient(safehttp.Options{Resolver: r})
	err = robots.NewChecker(robots.Options{HTTP: hc}).Check(context.Background(), mustURL(t, "http://no-such-host.example/page"))
	if !errors.As(err, &ue) || errors.As(err, &de) {
		t.Fatalf("Check = %v, want an *UnreachableError", err)
	}
}

func TestTimeoutIsANetworkErrorQuickly(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers
		case <-release:
		case <-r.Context().Done():
		}
	})
	const timeout = 300 * time.Millisecond
	start := time.Now()
	err := checker(robots.Options{Timeout: timeout}).Check(context.Background(), mustURL(t, s.URL+"/page"))
	elapsed := time.Since(start)
	var ue *robots.UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Check = %v, want an *UnreachableError that is a deadline", err)
	}
	if elapsed > timeout+2*time.Second {
		t.Errorf("Check took %s with a %s robots timeout", elapsed, timeout)
	}
}

func TestBodyCutShortIsDisallowed(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		// The allowing rule arrives; the rest never does.
		w.Write([]byte("User-agent: *\nAllow: /\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	err := checker(robots.Options{Timeout: 300 * time.Millisecond}).Check(context.Background(), mustURL(t, s.URL+"/page"))
	var de *robots.DisallowedError
	if !errors.As(err, &de) {
		t.Fatalf("Check = %v, want a *DisallowedError", err)
	}
}

func TestOversizedFileIsReadToTheCap(t *testing.T) {
	filler := "# " + strings.Repeat("x", 1000) + "\n"
	s := newSite(t, body("User-agent: *\nDisallow: /early\n"+strings.Repeat(filler, 2*robots.MaxSize/len(filler))+"Disallow: /late\n"))
	c := checker(robots.Options{})
	if err := c.Check(context.Background(), mustURL(t, s.URL+"/early")); err == nil {
		t.Error("/early allowed")
	}
	if err := c.Check(context.Background(), mustURL(t, s.URL+"/late")); err != nil {
		t.Errorf("/late, beyond the cap: %v, want allowed", err)
	}
}

func TestBlockedHostIsNotARobotsRefusal(t *testing.T) {
	// 127.0.0.1 is outside the client's policy: the caller gets the
	// address refusal, which the page fetch would have given anyway.
	c := robots.NewChecker(robots.Options{HTTP: client()})
	err := c.Check(context.Background(), mustURL(t, "http://127.0.0.1:1/page"))
	var be *safehttp.BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("Check = %v, want a *safehttp.BlockedError", err)
	}
}

func TestCaching(t *testing.T) {
	s := newSite(t, body("User-agent: *\nDisallow: /private\n"))
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := checker(robots.Options{TTL: time.Hour, Now: clock})
	for i := range 20 {
		path := "/page"
		if i%2 == 1 {
			path = "/private/x"
		}
		err := c.Check(context.Background(), mustURL(t, s.URL+path))
		if (err == nil) != (path == "/page") {
			t.Fatalf("Check(%s) = %v", path, err)
		}
	}
	if n := s.robotsHits.Load(); n != 1 {
		t.Fatalf("robots.txt fetched %d times for 20 checks, want 1", n)
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if err := c.Check(context.Background(), mustURL(t, s.URL+"/page")); err != nil {
		t.Fatal(err)
	}
	if n := s.robotsHits.Load(); n != 2 {
		t.Fatalf("robots.txt fetched %d times after the TTL, want 2", n)
	}
}

func TestErrorsAreCachedShorter(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := checker(robots.Options{TTL: time.Hour, ErrorTTL: time.Minute, Now: clock})
	u := mustURL(t, s.URL+"/page")
	if err := c.Check(context.Background(), u); err == nil {
		t.Fatal("503 allowed")
	}
	fail.Store(false)
	if err := c.Check(context.Background(), u); err == nil {
		t.Fatal("the 503 verdict was not cached")
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if err := c.Check(context.Background(), u); err != nil {
		t.Fatalf("after the error TTL: %v, want allowed", err)
	}
	if n := s.robotsHits.Load(); n != 2 {
		t.Fatalf("robots.txt fetched %d times, want 2", n)
	}
}

func TestConcurrentChecksShareOneFetch(t *testing.T) {
	gate := make(chan struct{})
	arrived := make(chan struct{}, 1) // the fetch has reached the site
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-gate
		w.Write([]byte("User-agent: *\nDisallow: /private\n"))
	})
	c := checker(robots.Options{})
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	waiting := make(chan struct{}, n)
	for range n {
		wg.Go(func() {
			errs <- c.Check(&waitingContext{Context: context.Background(), waiting: waiting}, mustURL(t, s.URL+"/page"))
		})
	}
	<-arrived // the shared fetch is held open
	// Every check waits for its result before the fetch may end.
	guard := time.After(10 * time.Second) // a hang guard, not a timing
	for range n {
		select {
		case <-waiting:
		case <-guard:
			t.Fatal("the checks never all waited for the shared fetch")
		}
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.robotsHits.Load(); got != 1 {
		t.Fatalf("robots.txt fetched %d times by %d concurrent checks, want 1", got, n)
	}
}

// waitingContext tells, once, when a check starts waiting on it: Check
// selects on its context's Done only after it has joined the origin's fetch
// (the fetch itself runs on a context without the caller's cancellation),
// so when every check has called Done, every one is queued behind it.
type waitingContext struct {
	context.Context
	once    sync.Once
	waiting chan<- struct{}
}

func (c *waitingContext) Done() <-chan struct{} {
	c.once.Do(func() { c.waiting <- struct{}{} })
	return c.Context.Done()
}

func TestCallerCancelDoesNotPoisonSharedFetch(t *testing.T) {
	gate := make(chan struct{})
	arrived := make(chan struct{}, 1) // the fetch has reached the site
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-gate
		w.Write([]byte("User-agent: *\nAllow: /\n"))
	})
	c := checker(robots.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- c.Check(ctx, mustURL(t, s.URL+"/page")) }()
	<-arrived // the first caller's fetch is held open
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled caller got %v", err)
	}
	close(gate)
	if err := c.Check(context.Background(), mustURL(t, s.URL+"/page")); err != nil {
		t.Fatalf("after another caller gave up: %v, want allowed", err)
	}
	if got := s.robotsHits.Load(); got != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", got)
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := checker(robots.Options{MaxEntries: 3})
	for range 5 {
		s := newSite(t, body(""))
		if err := c.Check(context.Background(), mustURL(t, s.URL+"/")); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Len(); n != 3 {
		t.Fatalf("cache holds %d origins, want 3", n)
	}
}

func TestUserAgentAndToken(t *testing.T) {
	var gotUA atomic.Value
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.UserAgent())
		w.Write([]byte("User-agent: *\nAllow: /\n\nUser-agent: mybot\nDisallow: /\n"))
	})
	c := checker(robots.Options{UserAgent: "MyBot/2.0 (+https://example.com)"})
	if c.Token() != "MyBot" {
		t.Fatalf("Token = %q", c.Token())
	}
	if err := c.Check(context.Background(), mustURL(t, s.URL+"/page")); err == nil {
		t.Fatal("the MyBot group was not applied")
	}
	if ua := gotUA.Load(); ua != "MyBot/2.0 (+https://example.com)" {
		t.Fatalf("robots.txt requested with User-Agent %q", ua)
	}
	if tok := robots.NewChecker(robots.Options{HTTP: client()}).Token(); tok != "Toolport" {
		t.Fatalf("default token = %q, want Toolport", tok)
	}
}

// TestCacheIsBoundedInBytes: origins that each serve the largest robots.txt
// of the shortest rules cost the cache its byte budget, not their number
// times what a parsed file holds. (Before the budget, 1,024 such origins
// held 3.4 GiB for the cache's hour.)
func TestCacheIsBoundedInBytes(t *testing.T) {
	hostile := "User-agent: *\n" + strings.Repeat("Disallow: /x\n", robots.MaxSize/13)
	const origins = 40
	sites := make([]*site, origins)
	for i := range sites {
		sites[i] = newSite(t, body(hostile))
	}
	c := checker(robots.Options{MaxBytes: 4 << 20})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, s := range sites {
		if err := c.Check(context.Background(), mustURL(t, s.URL+"/x/y")); err == nil {
			t.Fatal("a disallowed path was allowed")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if c.Bytes() > 4<<20 {
		t.Errorf("the cache estimates %d bytes, over its 4 MiB budget", c.Bytes())
	}
	if c.Len() >= origins {
		t.Errorf("the cache kept all %d origins", c.Len())
	}
	// The estimate must be honest: the heap grows by about the budget.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d MiB for a 4 MiB budget", grew>>20)
	}
	runtime.KeepAlive(c)
}

func TestRulesPerFileAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range robots.MaxRules + 10 {
		fmt.Fprintf(&b, "Disallow: /p%d\n", i)
	}
	b.WriteString("Disallow: /last\n")
	r := robots.Parse([]byte(b.String()), "Toolport")
	if r.Allowed("/p0") || r.Allowed(fmt.Sprintf("/p%d", robots.MaxRules-1)) {
		t.Error("a kept rule does not apply")
	}
	if !r.Allowed("/last") {
		t.Error("a rule beyond MaxRules was kept")
	}
}
