package webfetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/tool"
)

const article = `<!doctype html><html><head><title>Asynchronous Programming in Rust</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/about">About</a></nav>
<div id="cookie-banner">We use cookies. <button>Accept all cookies</button></div>
<article>
<h1>Asynchronous Programming in Rust</h1>
<p>Rust's async model is built on futures, which are values that represent work that may not have finished yet. See <a href="/docs/futures">the futures guide</a> for the details of polling.</p>
<h2>Executors</h2>
<p>An executor drives futures to completion by polling them whenever they can make progress, and parks them otherwise.</p>
<ul><li>Tokio is a multi-threaded runtime</li><li>async-std mirrors the standard library</li></ul>
<pre><code class="language-rust">async fn hello() {
    println!("hello");
}</code></pre>
<table><tr><th>Runtime</th><th>Threads</th></tr><tr><td>tokio</td><td>many</td></tr></table>
<p>Futures are lazy: nothing happens until an executor polls them, which makes cancellation cheap and composable.</p>
</article>
<footer>Copyright 2026 Example Corp. All rights reserved. <a href="/privacy">Privacy</a></footer>
</body></html>`

// server listens on 127.0.0.2, which the tests allow explicitly: the default
// policy stays on, so the same client refuses 127.0.0.1 and the rest. It has
// no robots.txt (404, which allows everything); see robotsServer.
func server(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	return robotsServer(t, http.NotFound, h)
}

// robotsServer is server with robotsTxt answering /robots.txt.
func robotsServer(t *testing.T, robotsTxt http.HandlerFunc, h http.Handler) *httptest.Server {
	t.Helper()
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsTxt(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("cannot listen on 127.0.0.2 (Linux loopback answers on all of 127/8): %v", err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: site}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func registry(t *testing.T, cfg webfetch.Config) *tool.Registry {
	t.Helper()
	if cfg.Allow == nil && !cfg.AllowPrivate {
		cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond))
	if err := reg.Register(webfetch.Tool(cfg)); err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(t *testing.T, reg *tool.Registry, args any) (*tool.Result, webfetch.Output) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res := reg.Call(context.Background(), "web_fetch", raw)
	var out webfetch.Output
	if res.OK() {
		out = res.Value.(webfetch.Output)
	}
	return res, out
}

func TestFetchArticle(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/guide?x=1", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	}))
	reg := registry(t, webfetch.Config{})
	res, out := call(t, reg, map[string]any{"url": srv.URL + "/old"})
	if !res.OK() {
		t.Fatalf("fetch failed: %s", res.JSON)
	}
	if out.URL != srv.URL+"/guide?x=1" {
		t.Errorf("final URL = %q", out.URL)
	}
	if out.Title != "Asynchronous Programming in Rust" {
		t.Errorf("title = %q", out.Title)
	}
	for _, want := range []string{
		"[the futures guide](" + srv.URL + "/docs/futures)", // absolute link
		"## Executors",
		"- Tokio is a multi-threaded runtime",
		"```rust\nasync fn hello() {\n    println!(\"hello\");\n}\n```",
		"| tokio | many |",
	} {
		if !strings.Contains(out.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, out.Content)
		}
	}
	for _, unwanted := range []string{"Accept all cookies", "All rights reserved", "[About]"} {
		if strings.Contains(out.Content, unwanted) {
			t.Errorf("boilerplate %q kept:\n%s", unwanted, out.Content)
		}
	}
	if out.TotalLines != strings.Count(out.Content, "\n")+1 || out.HasMore || out.Offset != 1 {
		t.Errorf("paging fields wrong: total=%d lines=%d hasMore=%v", out.TotalLines, out.Lines, out.HasMore)
	}

	// Paging: lines are counted on the Markdown.
	all := strings.Split(out.Content, "\n")
	_, p := call(t, reg, map[string]any{"url": srv.URL + "/guide", "offset": 2, "limit": 3})
	if p.Content != strings.Join(all[1:4], "\n") || p.Lines != 3 || !p.HasMore || p.TotalLines != len(all) {
		t.Errorf("offset 2 limit 3 gave %+v", p)
	}
	_, p = call(t, reg, map[string]any{"url": srv.URL + "/guide", "offset": len(all) + 5})
	if p.Content != "" || p.Lines != 0 || p.HasMore {
		t.Errorf("offset past the end gave %+v", p)
	}
	_, p = call(t, reg, map[string]any{"url": srv.URL + "/guide", "offset": len(all) - 1, "limit": 100})
	if p.Lines != 2 || p.HasMore {
		t.Errorf("limit past the end gave %+v", p)
	}
}

func TestStatusesAndTypes(t *testing.T) {
	var flaky atomic.Int32
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			http.NotFound(w, r)
		case "/flaky":
			if flaky.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, article)
		case "/429":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/cf-403":
			w.Header().Set("Cf-Mitigated", "challenge")
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>`)
		case "/challenge-200":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Just a moment...</title></head><body><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script></body></html>`)
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, "line one\nline two\nline three\n")
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a": [1, 2], "b": "<x>"}`)
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			fmt.Fprint(w, "%PDF-1.7\n...")
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n...."))
		case "/gzip":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, article)
			zw.Close()
		case "/empty":
			w.Header().Set("Content-Type", "text/html")
			// No text and no scripts: an app shell (scripts) is a result with a
			// notice instead (TestFetchAppShellWithoutBrowser).
			fmt.Fprint(w, "<html><body><div id=app></div></body></html>")
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	reg := registry(t, webfetch.Config{})
	tests := []struct {
		path      string
		code      tool.Code // "" for success
		retried   bool
		retryable bool
		message   string // substring of the error, or of the content on success
	}{
		{path: "/404", code: tool.CodeHTTP, message: "HTTP 404 Not Found"},
		{path: "/flaky", retried: true, message: "## Executors"},
		{path: "/429", code: tool.CodeRateLimit, retryable: true, message: "HTTP 429"},
		{path: "/cf-403", code: tool.CodeBlocked, message: "anti-bot challenge"},
		{path: "/challenge-200", code: tool.CodeBlocked, message: "anti-bot challenge"},
		{path: "/text", message: "line one\nline two\nline three"},
		{path: "/json", message: `{"a": [1, 2], "b": "<x>"}`},
		{path: "/pdf", code: tool.CodeParse, message: "PDF at"},
		{path: "/png", code: tool.CodeUnsupported, message: "image (image/png)"},
		{path: "/gzip", message: "## Executors"},
		{path: "/empty", code: tool.CodeParse, message: "no readable content"},
		{path: "/loop", code: tool.CodeHTTP, message: "too many redirects (limit 10)"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, out := call(t, reg, map[string]any{"url": srv.URL + tt.path})
			if tt.code == "" {
				if !res.OK() {
					t.Fatalf("failed: %s", res.JSON)
				}
				if !strings.Contains(out.Content, tt.message) || res.Retried != tt.retried {
					t.Errorf("content/retried wrong (%v): %s", res.Retried, out.Content)
				}
				return
			}
			if res.OK() {
				t.Fatalf("want %s, got success: %s", tt.code, res.JSON)
			}
			if res.Err.Code != tt.code || res.Err.Retryable != tt.retryable || !strings.Contains(res.Err.Message, tt.message) {
				t.Errorf("got %s retryable=%v %q; want %s retryable=%v containing %q", res.Err.Code, res.Err.Retryable, res.Err.Message, tt.code, tt.retryable, tt.message)
			}
		})
	}
}

func TestCharsets(t *testing.T) {
	w1252, _ := charmap.Windows1252.NewEncoder().String("<html><head><title>Café crème</title></head><body><article><p>Le café crème coûte trois euros cinquante à Paris, dit-on, et c’est « très cher » pour un café.</p><p>Une deuxième phrase pour que l’extraction trouve assez de texte à garder dans l’article.</p></article></body></html>")
	sjis, _ := japanese.ShiftJIS.NewEncoder().String(`<html><head><meta charset="shift_jis"><title>日本語のページ</title></head><body><article><p>これは日本語で書かれた記事の本文です。文字コードはシフトJISで、正しく読めるかを確かめます。</p><p>二つ目の段落です。東京の天気は晴れでした。</p></article></body></html>`)
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/1252":
			w.Header().Set("Content-Type", "text/html; charset=windows-1252")
			fmt.Fprint(w, w1252)
		case "/sjis":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, sjis)
		}
	}))
	reg := registry(t, webfetch.Config{})
	for path, want := range map[string]string{"/1252": "Le café crème coûte", "/sjis": "東京の天気は晴れでした"} {
		res, out := call(t, reg, map[string]any{"url": srv.URL + path})
		if !res.OK() || !strings.Contains(out.Content, want) {
			t.Errorf("%s: %s\n%s", path, res.JSON, out.Content)
		}
	}
}

func TestPrivateAddressesAreRefused(t *testing.T) {
	hits := atomic.Int32{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret intranet page")
	})) // on 127.0.0.1: not allowed
	defer target.Close()
	port := target.Listener.Addr().(*net.TCPAddr).Port
	redirector := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	reg := registry(t, webfetch.Config{})

	urls := []string{
		target.URL, // loopback
		fmt.Sprintf("http://localhost:%d/", port), // a name that resolves to 127.0.0.1
		fmt.Sprintf("http://[::1]:%d/", port),     // IPv6 loopback
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/", // private
		"http://169.254.169.254/latest/meta-data/", // link-local, cloud metadata
		"http://100.64.0.1/",                       // CGNAT
		"http://[fd00::1]/",                        // unique local
		"http://0.0.0.0/",
		redirector.URL + "/?to=" + target.URL, // a redirect into loopback
		redirector.URL + "/?to=" + fmt.Sprintf("http://localhost:%d/", port), // ...by name
		redirector.URL + "/?to=http://169.254.169.254/",
	}
	for _, u := range urls {
		res, _ := call(t, reg, map[string]any{"url": u})
		if res.OK() || res.Err.Code != tool.CodeBlocked || !strings.Contains(res.Err.Message, "TOOLPORT_FETCH_ALLOW_PRIVATE") {
			t.Errorf("%s: want BLOCKED, got %s", u, res.JSON)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the private server was reached %d times", hits.Load())
	}

	open := registry(t, webfetch.Config{AllowPrivate: true})
	if res, out := call(t, open, map[string]any{"url": target.URL}); !res.OK() || !strings.Contains(out.Content, "secret intranet page") {
		t.Errorf("AllowPrivate did not allow: %s", res.JSON)
	}
}

func TestInvalidURLs(t *testing.T) {
	reg := registry(t, webfetch.Config{})
	tests := []struct {
		url  string
		code tool.Code
		msg  string
	}{
		{"not a url", tool.CodeValidation, "url: must be a valid uri"},
		{"ftp://example.com/file", tool.CodeInvalidURL, "only http and https"},
		{"file:///etc/passwd", tool.CodeInvalidURL, "only http and https"},
		{"http://user:hunter2@example.com/", tool.CodeInvalidURL, "credentials"},
		{"http:///nohost", tool.CodeInvalidURL, "Invalid URL"},
	}
	for _, tt := range tests {
		res, _ := call(t, reg, map[string]any{"url": tt.url})
		if res.OK() || res.Err.Code != tt.code || !strings.Contains(res.Err.Message, tt.msg) {
			t.Errorf("%q: got %s", tt.url, res.JSON)
		}
		if strings.Contains(string(res.JSON), "hunter2") {
			t.Errorf("password leaked: %s", res.JSON)
		}
	}
	res, _ := call(t, reg, map[string]any{"url": "http://example.com/", "offset": 0})
	if res.OK() || !strings.Contains(res.Err.Message, "offset: must be >= 1, got 0") {
		t.Errorf("offset 0: %s", res.JSON)
	}
}

func TestBoundsAndTimeouts(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/huge":
			chunk := bytes.Repeat([]byte("<p>padding padding padding</p>\n"), 1024)
			for range 200 { // ~6 MiB against a 1 MiB cap
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/slow":
			fmt.Fprint(w, "<html><body><p>")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}
	}))
	reg := registry(t, webfetch.Config{MaxBodyBytes: 1 << 20, Timeout: 300 * time.Millisecond})
	res, _ := call(t, reg, map[string]any{"url": srv.URL + "/huge"})
	if res.OK() || res.Err.Code != tool.CodeUnsupported || !strings.Contains(res.Err.Message, "larger than the 1 MiB limit") {
		t.Errorf("huge: %s", res.JSON)
	}
	res, _ = call(t, reg, map[string]any{"url": srv.URL + "/slow?token=s3cr3t"})
	if res.OK() || res.Err.Code != tool.CodeTimeout || !res.Retried {
		t.Errorf("slow: want TIMEOUT after one retry, got %s", res.JSON)
	}
	if strings.Contains(string(res.JSON), "s3cr3t") {
		t.Errorf("query leaked into the error: %s", res.JSON)
	}
}

func FuzzPaging(f *testing.F) {
	f.Add("a\nb\nc", 1, 2)
	f.Add("", 5, 0)
	f.Add("x\n\n\ny\n", 3, 1)
	f.Add("x", -4, -1)
	f.Fuzz(func(t *testing.T, md string, offset, limit int) {
		out := webfetch.Page(md, offset, limit)
		if out.Lines < 0 || out.Lines > out.TotalLines {
			t.Fatalf("line counts out of range: %+v", out)
		}
		if limit > 0 && out.Lines > limit {
			t.Fatalf("more lines than the limit: %+v", out)
		}
		if got := strings.Count(out.Content, "\n") + 1; out.Lines > 0 && got != out.Lines {
			t.Fatalf("content has %d lines, Lines says %d", got, out.Lines)
		}
		if out.HasMore != (out.Offset-1+out.Lines < out.TotalLines) {
			t.Fatalf("HasMore wrong: %+v", out)
		}
	})
}
