package webui

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandlerServesPageAndAssets(t *testing.T) {
	h := Handler()
	tests := []struct {
		path        string
		contentType string
		contains    string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="/assets/js/app.js">`},
		{"/?c=0190e0b4", "text/html; charset=utf-8", "<!doctype html>"},
		{"/assets/app.css", "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"/assets/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/assets/js/markdown.js", "text/javascript; charset=utf-8", "export function renderMarkdown"},
		{"/assets/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := get(t, h, http.MethodGet, tt.path, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
				t.Errorf("Referrer-Policy = %q", got)
			}
			if res.Header.Get("ETag") == "" {
				t.Error("no ETag")
			}
			if got := res.Header.Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control = %q, want no-cache", got)
			}
			body, _ := io.ReadAll(res.Body)
			if !bytes.Contains(body, []byte(tt.contains)) {
				t.Errorf("body does not contain %q", tt.contains)
			}
		})
	}
}

func TestHandlerNotFound(t *testing.T) {
	h := Handler()
	for _, p := range []string{
		"/index.html", "/static/index.html", "/assets/", "/assets/js/", "/assets/nope.js",
		"/assets/../static/index.html", "/assets/js/../app.css", "/api/info", "/favicon.ico", "/c/123", "//assets/app.css",
	} {
		t.Run(p, func(t *testing.T) {
			res := get(t, h, http.MethodGet, p, nil)
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: status = %d, want 404", p, res.StatusCode)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("404 without nosniff")
			}
		})
	}
}

func TestHandlerMethods(t *testing.T) {
	h := Handler()
	res := get(t, h, http.MethodPost, "/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: status = %d, want 405", res.StatusCode)
	}
	if got := res.Header.Get("Allow"); got != "GET, HEAD" {
		t.Errorf("Allow = %q", got)
	}
	res = get(t, h, http.MethodHead, "/assets/app.css", nil)
	if res.StatusCode != http.StatusOK {
		t.Errorf("HEAD: status = %d", res.StatusCode)
	}
	if b, _ := io.ReadAll(res.Body); len(b) != 0 {
		t.Errorf("HEAD sent a body of %d bytes", len(b))
	}
}

func TestHandlerRevalidatesWithETag(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/assets/js/app.js", nil)
	etag := first.Header.Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(etag) {
		t.Fatalf("ETag = %q, want a quoted content hash", etag)
	}
	again := get(t, h, http.MethodGet, "/assets/js/app.js", map[string]string{"If-None-Match": etag})
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: status = %d, want 304", again.StatusCode)
	}
	stale := get(t, h, http.MethodGet, "/assets/js/app.js", map[string]string{"If-None-Match": `"0000"`})
	if stale.StatusCode != http.StatusOK {
		t.Errorf("If-None-Match with a stale ETag: status = %d, want 200", stale.StatusCode)
	}
	other := get(t, h, http.MethodGet, "/assets/app.css", nil)
	if other.Header.Get("ETag") == etag {
		t.Error("two different files share an ETag")
	}
}

// TestContentSecurityPolicy checks the policy itself: it must forbid inline
// code and eval, framing, <base>, forms, and connections to other origins.
func TestContentSecurityPolicy(t *testing.T) {
	res := get(t, Handler(), http.MethodGet, "/", nil)
	csp := res.Header.Get("Content-Security-Policy")
	if csp != ContentSecurityPolicy {
		t.Fatalf("CSP header = %q, want the ContentSecurityPolicy const", csp)
	}
	directives := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		directives[f[0]] = strings.Join(f[1:], " ")
	}
	want := map[string]string{
		"default-src":     "'self'",
		"script-src":      "'self'",
		"style-src":       "'self'",
		"img-src":         "'self' https: data:",
		"connect-src":     "'self'",
		"object-src":      "'none'",
		"frame-ancestors": "'none'",
		"base-uri":        "'none'",
		"form-action":     "'none'",
	}
	for k, v := range want {
		if directives[k] != v {
			t.Errorf("%s = %q, want %q", k, directives[k], v)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "unsafe-hashes", "*", "http:", "blob:"} {
		for k, v := range directives {
			for _, src := range strings.Fields(v) {
				if strings.Trim(src, "'") == strings.Trim(bad, "'") {
					t.Errorf("%s allows %s", k, bad)
				}
			}
		}
	}
}

func TestSecurityHeadersMiddleware(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	})
	res := get(t, SecurityHeaders(inner), http.MethodGet, "/api/info", nil)
	for k, v := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         ReferrerPolicy,
		"X-Frame-Options":         "DENY",
		"Content-Type":            "application/json",
	} {
		if got := res.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// TestIndexHasNoInlineCode parses the page: every script must be external
// (CSP script-src 'self' would block inline ones anyway, silently), and no
// element may carry a style attribute or an on* event handler attribute.
func TestIndexHasNoInlineCode(t *testing.T) {
	page, err := fs.ReadFile(staticFS, "static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	h := Handler()
	var scripts int
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
				if a.Key == "style" {
					t.Errorf("<%s> has a style attribute", n.Data)
				}
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s> has an event handler attribute %s", n.Data, a.Key)
				}
				if (a.Key == "href" || a.Key == "src") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
					t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
				}
			}
			switch n.Data {
			case "script":
				scripts++
				src, ok := attrs["src"]
				if !ok || src == "" {
					t.Error("inline <script> (no src)")
				}
				if n.FirstChild != nil {
					t.Error("<script> with content")
				}
				if ok && get(t, h, http.MethodGet, src, nil).StatusCode != http.StatusOK {
					t.Errorf("script %s is not served", src)
				}
			case "style":
				t.Error("inline <style> element")
			case "link":
				if href := attrs["href"]; href != "" && get(t, h, http.MethodGet, href, nil).StatusCode != http.StatusOK {
					t.Errorf("link %s is not served", href)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 1 {
		t.Errorf("found %d scripts, want the one module entry point", scripts)
	}
}

// TestScriptsNeverParseHTML guards the rule the page's safety rests on: the
// scripts build DOM nodes and never hand a string to an HTML parser or to
// eval. (CSP blocks eval; it does not block innerHTML.) The vendored
// highlight.js (static/vendor, byte-identical to its npm package) has
// functions that write HTML; the page's scripts never call them, only its
// parser, whose token tree they turn into nodes.
func TestScriptsNeverParseHTML(t *testing.T) {
	forbidden := []string{"innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout('", "DOMParser", "createContextualFragment", "srcdoc",
		"highlightElement", "highlightAll"}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") || strings.HasPrefix(p, "static/vendor/") {
			return err
		}
		b, err := fs.ReadFile(staticFS, p)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s uses %s", p, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzHandlerPath(f *testing.F) {
	for _, s := range []string{"/", "/assets/app.css", "/assets/../static/index.html", "/%2e%2e/", "/assets/js/app.js?x=1"} {
		f.Add(s)
	}
	h := Handler()
	f.Fuzz(func(t *testing.T, p string) {
		req, err := http.NewRequest(http.MethodGet, "http://x"+p, nil)
		if err != nil || req.URL.Path == "" {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if req.URL.Path != "/" && !strings.HasPrefix(req.URL.Path, AssetPrefix) {
				t.Errorf("served %q", req.URL.Path)
			}
		case http.StatusNotFound:
		default:
			t.Errorf("GET %q: status %d", p, rec.Code)
		}
	})
}
