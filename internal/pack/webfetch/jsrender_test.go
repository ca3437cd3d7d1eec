package webfetch_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/internal/render"
	"github.com/toolport/toolport/internal/render/rendertest"
	"github.com/toolport/toolport/internal/testexec"
	"github.com/toolport/toolport/internal/webui/webuitest"
)

// privateHits is a server on 127.0.0.1, which the tests' policy refuses:
// it records every request that reaches it and answers a secret.
type privateHits struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPrivate(t *testing.T) *privateHits {
	t.Helper()
	p := &privateHits{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		fmt.Fprint(w, "TOP-SECRET-VALUE")
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *privateHits) hits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...)
}

// browserConfig is a Config that renders in Chromium (skipping without
// it, failing under TOOLPORT_TEST_REQUIRE_TOOLS=1). Chromium's own Local
// Network Access checks are off, so that what blocks the page's requests
// to private addresses is web_fetch's policy, not Chromium.
func browserConfig(t *testing.T) webfetch.Config {
	t.Helper()
	path, err := webuitest.ChromiumPath("")
	if err != nil {
		testexec.Missing(t, "Chromium", "apt-get install chromium (.ci/run installs it), or set CHROMIUM_PATH", err)
	}
	return webfetch.Config{Render: render.Options{ChromiumPath: path, ExtraFlags: rendertest.WithoutChromiumChecks}}
}

func TestFetchRendersAppShell(t *testing.T) {
	cfg := browserConfig(t)
	private := newPrivate(t)
	port := private.srv.Listener.Addr().(*net.TCPAddr).Port
	probes := fmt.Sprintf(`
fetch("http://127.0.0.1:%[1]d/secret").then(r => r.text()).then(s => { document.title = s }, () => {});
fetch("http://169.254.169.254/latest/meta-data/").then(r => r.text()).then(s => { document.title = s }, () => {});
const img = new Image(); img.src = "http://127.0.0.1:%[1]d/pixel.png"; document.body.appendChild(img);
const s = document.createElement("script"); s.src = "http://127.0.0.1:%[1]d/lib.js"; document.head.appendChild(s);
try { const ws = new WebSocket("ws://127.0.0.1:%[1]d/ws"); ws.onmessage = e => { document.title = e.data }; } catch (e) {}
`, port)
	srv := server(t, rendertest.App(probes))
	reg := registry(t, cfg)
	for _, args := range []map[string]any{
		{"url": srv.URL + "/"},                 // detected as an app shell
		{"url": srv.URL + "/", "render": true}, // asked for
	} {
		res, out := call(t, reg, args)
		if !res.OK() {
			t.Fatalf("%v: %s", args, res.JSON)
		}
		if !out.Rendered || !strings.Contains(out.Content, "Rivers carry water from the hills") || !strings.Contains(out.Content, "rounded by centuries") {
			t.Errorf("%v: rendered=%v, content lacks the article:\n%s", args, out.Rendered, out.Content)
		}
		if strings.Contains(string(res.JSON), "TOP-SECRET-VALUE") {
			t.Errorf("%v: the result holds the private server's answer: %s", args, res.JSON)
		}
	}
	// raw with render: the DOM after the scripts ran.
	res, out := call(t, reg, map[string]any{"url": srv.URL + "/", "render": true, "raw": true, "max_length": 100000})
	if !res.OK() || !out.Rendered || !out.Raw || !strings.Contains(out.Content, "<h1>Rivers of the North</h1>") {
		t.Errorf("raw render: %s", res.JSON)
	}
	if got := private.hits(); len(got) != 0 {
		t.Errorf("the page's scripts reached 127.0.0.1: %v", got)
	}
}

func TestFetchAppShellWithoutBrowser(t *testing.T) {
	srv := server(t, rendertest.App(""))
	reg := registry(t, webfetch.Config{})
	for _, args := range []map[string]any{
		{"url": srv.URL + "/"},
		{"url": srv.URL + "/", "render": true},
	} {
		res, out := call(t, reg, args)
		if !res.OK() {
			t.Fatalf("%v: want a result with a notice, got %s", args, res.JSON)
		}
		if out.Rendered || !strings.Contains(out.Notice, "JavaScript") || !strings.Contains(out.Notice, "no browser") || !strings.Contains(out.Notice, "TOOLPORT_FETCH_BROWSER") {
			t.Errorf("%v: rendered=%v notice=%q", args, out.Rendered, out.Notice)
		}
	}
	// An article is not an app shell: no notice, unless rendering is asked for.
	art := server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	}))
	if res, out := call(t, reg, map[string]any{"url": art.URL + "/"}); !res.OK() || out.Notice != "" {
		t.Errorf("article: notice %q, %s", out.Notice, res.JSON)
	}
	if res, out := call(t, reg, map[string]any{"url": art.URL + "/", "render": true}); !res.OK() ||
		!strings.HasPrefix(out.Notice, "render was asked for") || !strings.Contains(out.Content, "## Executors") {
		t.Errorf("article with render: notice %q, %s", out.Notice, res.JSON)
	}
}

// TestFetchRenderRespectsRobots: the page asked for goes through robots.txt
// as any fetch does, and so does every request the page's scripts make (an
// iframe, data, an image): the renderer asks robots.txt before fetching
// each, while the allowed article data still builds the page.
func TestFetchRenderRespectsRobots(t *testing.T) {
	cfg := browserConfig(t)
	var hits sync.Map
	srv := robotsServer(t, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /app\nDisallow: /private\n")
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		rendertest.App(`const f = document.createElement("iframe"); f.src = "/private"; document.body.appendChild(f);
fetch("/private/data.json").then(r => r.text()).then(s => { document.title = s }, () => {});
const img = new Image(); img.src = "/private/pixel.png"; document.body.appendChild(img);`).ServeHTTP(w, r)
	}))
	reg := registry(t, cfg)
	res, _ := call(t, reg, map[string]any{"url": srv.URL + "/app", "render": true})
	if res.OK() || !strings.Contains(string(res.JSON), "ROBOTS_DISALLOWED") {
		t.Errorf("a disallowed page was rendered: %s", res.JSON)
	}
	if _, ok := hits.Load("/app"); ok {
		t.Error("the disallowed page was requested")
	}
	res, out := call(t, reg, map[string]any{"url": srv.URL + "/", "render": true})
	if !res.OK() || !strings.Contains(out.Content, "Rivers carry water") {
		t.Fatalf("the allowed page: %s", res.JSON)
	}
	for _, p := range []string{"/private", "/private/data.json", "/private/pixel.png"} {
		if _, ok := hits.Load(p); ok {
			t.Errorf("the page's scripts fetched %s, which robots.txt disallows", p)
		}
	}
}

// TestFetchRenderKeepsTheSiteCSP: the site's Content-Security-Policy header
// reaches the browser with the page, so a script's request to another
// origin that the policy forbids is not made.
func TestFetchRenderKeepsTheSiteCSP(t *testing.T) {
	cfg := browserConfig(t)
	var tracked sync.Map
	tracker := server(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { tracked.Store(r.URL.Path, true) }))
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "connect-src 'self'")
		rendertest.App(fmt.Sprintf(`fetch(%q).catch(() => {});`, tracker.URL+"/track")).ServeHTTP(w, r)
	}))
	res, out := call(t, registry(t, cfg), map[string]any{"url": srv.URL + "/", "render": true})
	if !res.OK() || !strings.Contains(out.Content, "Rivers carry water") {
		t.Fatalf("render: %s", res.JSON)
	}
	if _, ok := tracked.Load("/track"); ok {
		t.Error("the page's script reached an origin its own CSP forbids")
	}
}
