package render_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/render"
	"github.com/toolport/toolport/internal/render/rendertest"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/webui/webuitest"
	"github.com/toolport/toolport/safehttp"
)

// chromium finds the browser or skips (fails under TOOLPORT_TEST_REQUIRE_TOOLS=1).
func chromium(t *testing.T) string {
	t.Helper()
	path, err := webuitest.ChromiumPath("")
	if err != nil {
		testexec.Missing(t, "Chromium", "apt-get install chromium (.ci/run installs it), or set CHROMIUM_PATH", err)
	}
	return path
}

// listen serves h on addr (a loopback address with port 0).
func listen(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// hits records the requests a server received.
type hits struct {
	mu    sync.Mutex
	paths []string
}

func (h *hits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.paths = append(h.paths, r.Method+" "+r.URL.Path)
	h.mu.Unlock()
	fmt.Fprint(w, "TOP-SECRET-VALUE")
}

func (h *hits) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...)
}

// guarded is the client web_fetch's tests use: only 127.0.0.2 is allowed
// past the default policy, so 127.0.0.1 and 169.254.0.0/16 stay refused.
func guarded() *safehttp.Client {
	return safehttp.NewClient(safehttp.Options{Policy: safehttp.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}})
}

func TestRenderBuildsArticleAndBlocksPrivateAddresses(t *testing.T) {
	path := chromium(t)
	secret := &hits{}
	other := listen(t, "127.0.0.1:0", secret)
	port := other.Listener.Addr().(*net.TCPAddr).Port
	probes := fmt.Sprintf(`
fetch("http://127.0.0.1:%[1]d/secret").then(r => r.text()).then(s => { document.title = s }, () => {});
fetch("http://169.254.169.254/latest/meta-data/").then(r => r.text()).then(s => { document.title = s }, () => {});
const img = new Image(); img.src = "http://127.0.0.1:%[1]d/pixel.png"; document.body.appendChild(img);
const s = document.createElement("script"); s.src = "http://127.0.0.1:%[1]d/lib.js"; document.head.appendChild(s);
try { const ws = new WebSocket("ws://127.0.0.1:%[1]d/ws"); ws.onmessage = e => { document.title = e.data }; } catch (e) {}
`, port)
	srv := listen(t, "127.0.0.2:0", rendertest.App(probes))
	r := render.New(render.Options{ChromiumPath: path, HTTP: guarded(), ExtraFlags: rendertest.WithoutChromiumChecks})
	u, _ := url.Parse(srv.URL + "/")
	res, err := r.Render(context.Background(), render.Page{URL: u, ContentType: "text/html; charset=utf-8", Body: []byte(rendertest.AppShell(probes))})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	html := string(res.HTML)
	for _, want := range []string{"<h1>Rivers of the North</h1>", "towns along the banks"} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "TOP-SECRET-VALUE") {
		t.Errorf("the page read the private server:\n%s", html)
	}
	if got := secret.list(); len(got) != 0 {
		t.Errorf("the private server on 127.0.0.1 was reached: %v", got)
	}
	// The WebSocket is not seen by interception (the refusing proxy stops it).
	if res.Blocked < 4 {
		t.Errorf("blocked %d requests, want at least 4 (two fetches, the image, the script)", res.Blocked)
	}
}

func TestRenderKeepsNoStateBetweenCalls(t *testing.T) {
	path := chromium(t)
	// The first render stores a cookie and localStorage; the second shows what it finds.
	probes := `
const seen = "cookie=" + document.cookie + ";storage=" + localStorage.getItem("k");
document.cookie = "k=v1; path=/"; localStorage.setItem("k", "v1");
const m = document.createElement("p"); m.id = "state"; m.textContent = seen; document.body.appendChild(m);
`
	srv := listen(t, "127.0.0.2:0", rendertest.App(probes))
	r := render.New(render.Options{ChromiumPath: path, HTTP: guarded(), ExtraFlags: rendertest.WithoutChromiumChecks})
	u, _ := url.Parse(srv.URL + "/")
	for i := range 2 {
		res, err := r.Render(context.Background(), render.Page{URL: u, ContentType: "text/html; charset=utf-8", Body: []byte(rendertest.AppShell(probes))})
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
		if !strings.Contains(string(res.HTML), `<p id="state">cookie=;storage=null</p>`) {
			t.Errorf("render %d found state from an earlier one:\n%s", i, res.HTML)
		}
	}
}

// TestRenderHoldsThePageToItsCSP: the site's Content-Security-Policy comes
// with the document, so a request the policy forbids is not made, though
// the address policy would allow it; without the header the same request
// is made (which shows the page does make it).
func TestRenderHoldsThePageToItsCSP(t *testing.T) {
	path := chromium(t)
	other := &hits{}
	tracker := listen(t, "127.0.0.2:0", other)
	probes := fmt.Sprintf(`fetch(%q).then(r => r.text()).then(s => { document.title = s }, () => {});`, tracker.URL+"/track")
	srv := listen(t, "127.0.0.2:0", rendertest.App(probes))
	r := render.New(render.Options{ChromiumPath: path, HTTP: guarded(), ExtraFlags: rendertest.WithoutChromiumChecks})
	u, _ := url.Parse(srv.URL + "/")
	for _, tc := range []struct {
		csp  []string
		want int // requests reaching the other origin
	}{
		{nil, 1},
		{[]string{"connect-src 'self'"}, 0},
	} {
		before := len(other.list())
		res, err := r.Render(context.Background(), render.Page{URL: u, ContentType: "text/html; charset=utf-8", Body: []byte(rendertest.AppShell(probes)), CSP: tc.csp})
		if err != nil {
			t.Fatalf("CSP %q: render: %v", tc.csp, err)
		}
		if got := len(other.list()) - before; got != tc.want {
			t.Errorf("CSP %q: the other origin got %d requests, want %d", tc.csp, got, tc.want)
		}
		if !strings.Contains(string(res.HTML), "<h1>Rivers of the North</h1>") {
			t.Errorf("CSP %q: the page's own data did not build it:\n%s", tc.csp, res.HTML)
		}
	}
}

// TestRenderBounds: a page whose request never answers holds its render to
// the time bound, and while it does a second render finds the one slot
// taken and fails with ErrBusy; a page making more requests than allowed
// has the rest refused.
func TestRenderBounds(t *testing.T) {
	path := chromium(t)
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv := listen(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			once.Do(func() { close(held) })
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/api/article.json":
			fmt.Fprint(w, rendertest.Article)
		}
	}))
	t.Cleanup(func() { close(release) })
	u, _ := url.Parse(srv.URL + "/")
	r := render.New(render.Options{ChromiumPath: path, HTTP: guarded(), MaxConcurrent: 1, QueueWait: time.Millisecond,
		Timeout: 8 * time.Second, MaxRequests: 3})

	hanging := render.Page{URL: u, ContentType: "text/html", Body: []byte(rendertest.AppShell(`fetch("/hang");`))}
	first := make(chan error, 1)
	go func() {
		_, err := r.Render(context.Background(), hanging)
		first <- err
	}()
	select {
	case <-held: // the first render holds the slot
	case err := <-first:
		t.Fatalf("the first render ended before its request: %v", err)
	}
	if _, err := r.Render(context.Background(), hanging); !errors.Is(err, render.ErrBusy) {
		t.Errorf("second render: %v, want ErrBusy", err)
	}
	if err := <-first; !errors.Is(err, render.ErrTimeout) {
		t.Errorf("hanging render: %v, want ErrTimeout", err)
	}

	// Six requests besides the document, three allowed: the article's
	// among the first, by order in the page.
	many := render.Page{URL: u, ContentType: "text/html", Body: []byte(rendertest.AppShell(`for (let i = 0; i < 5; i++) fetch("/api/article.json?n=" + i);`))}
	res, err := r.Render(context.Background(), many)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if res.Requests < 6 || res.Blocked < 3 {
		t.Errorf("requests %d, blocked %d: want at least 6 and 3", res.Requests, res.Blocked)
	}

	small := render.New(render.Options{ChromiumPath: path, HTTP: guarded(), MaxHTMLBytes: 200})
	if _, err := small.Render(context.Background(), render.Page{URL: u, ContentType: "text/html", Body: []byte(rendertest.AppShell(""))}); !errors.Is(err, render.ErrTooLarge) {
		t.Errorf("a page over MaxHTMLBytes: %v, want ErrTooLarge", err)
	}
}

func TestSameDocument(t *testing.T) {
	for _, tc := range []struct {
		browser, fetched string
		want             bool
	}{
		{"http://example.com/", "http://example.com", true},
		{"http://example.com/a?b=1", "http://EXAMPLE.com/a?b=1#top", true},
		{"http://example.com/a", "http://example.com/b", false},
		{"http://example.com/a?b=1", "http://example.com/a?b=2", false},
		{"https://example.com/", "http://example.com/", false},
	} {
		u, _ := url.Parse(tc.browser)
		d, _ := url.Parse(tc.fetched)
		if got := render.SameDocument(u, d); got != tc.want {
			t.Errorf("SameDocument(%s, %s) = %v", tc.browser, tc.fetched, got)
		}
	}
}
