package safehttp

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// The tests serve on 127.0.0.2, let through by allow2, so that 127.0.0.1
// (and the rest of loopback) stays refused as it is by default.
var allow2 = Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}

// serveOn starts an httptest server for h listening on ip.
func serveOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("listen on %s (Linux answers on all of 127/8): %v", ip, err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// countingHandler answers 200 "ok" and counts the requests it saw.
func countingHandler(n *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "ok")
	})
}

func wantBlocked(t *testing.T, err error, host string) *BlockedError {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want *BlockedError", err)
	}
	if host != "" && be.Host != host {
		t.Errorf("BlockedError.Host = %q, want %q", be.Host, host)
	}
	if !strings.Contains(err.Error(), be.Range.String()) {
		t.Errorf("error %q does not name the range %v", err, be.Range)
	}
	return be
}

func TestLoopbackRefusedAtConnect(t *testing.T) {
	var hits atomic.Int32
	srv := serveOn(t, "127.0.0.1", countingHandler(&hits))
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := NewClient(Options{})

	tests := []struct {
		name string
		url  string
		host string
		raw  bool // through HTTPClient, which skips Get's URL pre-check, so only the dialer decides
	}{
		{"literal via Get", "http://127.0.0.1:" + port + "/", "127.0.0.1", false},
		{"localhost via Get", "http://localhost:" + port + "/", "localhost", false},
		{"literal via HTTPClient", "http://127.0.0.1:" + port + "/", "127.0.0.1", true},
		{"localhost via HTTPClient", "http://localhost:" + port + "/", "localhost", true},
		{"IPv6 loopback via HTTPClient", "http://[::1]:" + port + "/", "::1", true},
		{"mapped IPv4 via HTTPClient", "http://[::ffff:127.0.0.1]:" + port + "/", "::ffff:127.0.0.1", true},
		{"unspecified via HTTPClient", "http://0.0.0.0:" + port + "/", "0.0.0.0", true},
		{"other loopback via HTTPClient", "http://127.0.0.2:" + port + "/", "127.0.0.2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.raw {
				var resp *http.Response
				resp, err = c.HTTPClient().Get(tt.url)
				if resp != nil {
					resp.Body.Close()
				}
			} else {
				_, err = c.Get(t.Context(), tt.url, nil)
			}
			wantBlocked(t, err, tt.host)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestAllowPrivatePermitsLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := serveOn(t, "127.0.0.1", countingHandler(&hits))
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := NewClient(Options{Policy: Policy{AllowPrivate: true}})
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/"} {
		resp, err := c.Get(t.Context(), u, nil)
		if err != nil {
			t.Fatalf("Get(%s): %v", u, err)
		}
		if resp.StatusCode != 200 || string(resp.Body) != "ok" {
			t.Errorf("Get(%s) = %d %q", u, resp.StatusCode, resp.Body)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("server saw %d requests, want 2", hits.Load())
	}
}

func TestRedirectFromAllowedHostToLoopbackRefused(t *testing.T) {
	var hits atomic.Int32
	target := serveOn(t, "127.0.0.1", countingHandler(&hits))
	_, tport, _ := net.SplitHostPort(target.Listener.Addr().String())
	allowed := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "fine")
		case "/to-literal":
			http.Redirect(w, r, target.URL+"/secret", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+tport+"/secret", http.StatusMovedPermanently)
		case "/to-mapped":
			http.Redirect(w, r, "http://[::ffff:127.0.0.1]:"+tport+"/secret", http.StatusTemporaryRedirect)
		}
	}))
	c := NewClient(Options{Policy: allow2})

	resp, err := c.Get(t.Context(), allowed.URL+"/ok", nil)
	if err != nil || string(resp.Body) != "fine" {
		t.Fatalf("allowed host: %v, %v", resp, err)
	}
	for _, tt := range []struct{ path, host string }{
		{"/to-literal", "127.0.0.1"},
		{"/to-localhost", "localhost"},
		{"/to-mapped", "::ffff:127.0.0.1"},
	} {
		_, err := c.Get(t.Context(), allowed.URL+tt.path, nil)
		wantBlocked(t, err, tt.host)
	}
	if hits.Load() != 0 {
		t.Errorf("refused target saw %d requests", hits.Load())
	}
}

// TestDNSRebindingRefused resolves one name to an allowed address for the
// first connection and to 127.0.0.1 for the next: the second must be refused
// because the check runs on the address dialled, not on an earlier answer.
func TestDNSRebindingRefused(t *testing.T) {
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
	}))
	srv.Config.SetKeepAlivesEnabled(false) // force a new dial, and so a new lookup, per request
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dns := newFakeDNS(t, "127.0.0.2", "127.0.0.1")
	c := NewClient(Options{Policy: allow2, Resolver: dns.Resolver()})
	u := "http://rebind.test:" + port + "/"

	resp, err := c.Get(t.Context(), u, nil)
	if err != nil || string(resp.Body) != "first" {
		t.Fatalf("first fetch: %v, %v", resp, err)
	}
	_, err = c.Get(t.Context(), u, nil)
	be := wantBlocked(t, err, "rebind.test")
	if be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("BlockedError.Addr = %v, want 127.0.0.1", be.Addr)
	}
}

func TestRedirects(t *testing.T) {
	codes := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n == 0 {
			io.WriteString(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d?q=%d", n-1, n), codes[n%len(codes)])
	}))
	tests := []struct {
		name    string
		max     int
		hops    int
		wantErr error
		wantURL string // final path and query
	}{
		{"none", 0, 0, nil, "/hop/0"},
		{"default limit reached", 0, 10, nil, "/hop/0?q=1"},
		{"default limit exceeded", 0, 11, ErrTooManyRedirects, ""},
		{"small limit reached", 2, 2, nil, "/hop/0?q=1"},
		{"small limit exceeded", 2, 3, ErrTooManyRedirects, ""},
		{"not following", -1, 3, nil, "/hop/3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(Options{Policy: allow2, MaxRedirects: tt.max})
			resp, err := c.Get(t.Context(), fmt.Sprintf("%s/hop/%d", srv.URL, tt.hops), nil)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.URL.RequestURI(); got != tt.wantURL {
				t.Errorf("final URL = %s, want %s", got, tt.wantURL)
			}
			if resp.URL.Host != srv.Listener.Addr().String() {
				t.Errorf("final URL host = %s", resp.URL.Host)
			}
			wantRedirects := tt.hops
			if tt.max < 0 {
				wantRedirects = 0
				if resp.StatusCode/100 != 3 || resp.Header.Get("Location") == "" {
					t.Errorf("not following: got %d, Location %q; want the 3xx", resp.StatusCode, resp.Header.Get("Location"))
				}
			} else if string(resp.Body) != "arrived" {
				t.Errorf("body = %q", resp.Body)
			}
			if resp.Redirects != wantRedirects {
				t.Errorf("Redirects = %d, want %d", resp.Redirects, wantRedirects)
			}
		})
	}
}

func TestRedirectTargetsRefused(t *testing.T) {
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	}))
	c := NewClient(Options{Policy: allow2})
	for _, tt := range []struct {
		to      string
		wantErr error
	}{
		{"ftp://127.0.0.2/file", ErrUnsupportedScheme},
		{"file:///etc/passwd", ErrUnsupportedScheme},
		{"gopher://127.0.0.2:70/", ErrUnsupportedScheme},
		{"http://alice:hunter2@" + srv.Listener.Addr().String() + "/", ErrUserinfo},
	} {
		_, err := c.Get(t.Context(), srv.URL+"/?to="+urlQueryEscape(tt.to), nil)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("redirect to %s: err = %v, want %v", tt.to, err, tt.wantErr)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q leaks the redirect's password", err)
		}
	}
}

func urlQueryEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", "?", "%3F", "#", "%23", " ", "%20")
	return r.Replace(s)
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func brotlied(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriterLevel(&buf, 4)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zlibbed(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func deflated(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// encodedServer serves, at /?case=name, the body and Content-Encoding of
// that case, recording the Accept-Encoding it was asked with.
func encodedServer(t *testing.T, cases map[string]struct {
	enc  string
	body []byte
}) *httptest.Server {
	return serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := cases[r.URL.Query().Get("case")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if c.enc != "" {
			w.Header().Set("Content-Encoding", c.enc)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(c.body)
	}))
}

func TestDecodesBodies(t *testing.T) {
	plain := []byte(strings.Repeat("Grüße aus dem Netz. ", 500))
	cases := map[string]struct {
		enc  string
		body []byte
	}{
		"identity":      {"", plain},
		"identity-name": {"identity", plain},
		"gzip":          {"gzip", gzipped(t, plain)},
		"x-gzip":        {"x-gzip", gzipped(t, plain)},
		"upper":         {"GZIP", gzipped(t, plain)},
		"br":            {"br", brotlied(t, plain)},
		"deflate-zlib":  {"deflate", zlibbed(t, plain)},
		"deflate-raw":   {"deflate", deflated(t, plain)},
		"stacked":       {"gzip, br", brotlied(t, gzipped(t, plain))},
		"empty-gzip":    {"gzip", nil},
	}
	srv := encodedServer(t, cases)
	c := NewClient(Options{Policy: allow2})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, err := c.Get(t.Context(), srv.URL+"/?case="+name, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := plain
			if tc.body == nil {
				want = []byte{}
			}
			if !bytes.Equal(resp.Body, want) {
				t.Errorf("body = %d bytes %.40q…, want %d bytes", len(resp.Body), resp.Body, len(want))
			}
			if tc.body != nil && tc.enc != "" && tc.enc != "identity" && resp.Header.Get("Content-Encoding") != "" {
				t.Errorf("Content-Encoding %q left on a decoded body", resp.Header.Get("Content-Encoding"))
			}
		})
	}
}

func TestUndecodableBodies(t *testing.T) {
	cases := map[string]struct {
		enc  string
		body []byte
	}{
		"corrupt-gzip": {"gzip", []byte("this is not gzip at all")},
		"truncated-br": {"br", brotlied(t, bytes.Repeat([]byte("abcdefgh"), 10000))[:40]},
		"unknown":      {"zstd", []byte("opaque bytes")},
	}
	srv := encodedServer(t, cases)
	c := NewClient(Options{Policy: allow2})

	for _, name := range []string{"corrupt-gzip", "truncated-br"} {
		if _, err := c.Get(t.Context(), srv.URL+"/?case="+name, nil); !errors.Is(err, ErrDecode) {
			t.Errorf("%s: err = %v, want ErrDecode", name, err)
		}
	}
	// An encoding Get cannot undo is passed through, as browsers do, with
	// the header left to say so.
	resp, err := c.Get(t.Context(), srv.URL+"/?case=unknown", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "opaque bytes" || resp.Header.Get("Content-Encoding") != "zstd" {
		t.Errorf("unknown encoding: body %q, Content-Encoding %q", resp.Body, resp.Header.Get("Content-Encoding"))
	}
}

func TestBodyCaps(t *testing.T) {
	const limit = 64 << 10
	zeros := make([]byte, 2<<20) // 2 MiB of zeros, ~2 KiB compressed: 32 times the cap
	atLimit := bytes.Repeat([]byte("x"), limit)
	cases := map[string]struct {
		enc  string
		body []byte
	}{
		"at-limit":      {"", atLimit},
		"gzip-at-limit": {"gzip", gzipped(t, atLimit)},
		"over-by-one":   {"", append(atLimit, 'y')},
		"gzip-bomb":     {"gzip", gzipped(t, zeros)},
		"br-bomb":       {"br", brotlied(t, zeros)},
		"deflate-bomb":  {"deflate", zlibbed(t, zeros)},
	}
	srv := encodedServer(t, cases)
	// A streamed body has no Content-Length to refuse up front.
	streamed := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 4 * limit / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	c := NewClient(Options{Policy: allow2, MaxBodyBytes: limit})

	for _, tt := range []struct {
		url     string
		tooLong bool
	}{
		{srv.URL + "/?case=at-limit", false},
		{srv.URL + "/?case=gzip-at-limit", false},
		{srv.URL + "/?case=over-by-one", true},
		{srv.URL + "/?case=gzip-bomb", true},
		{srv.URL + "/?case=br-bomb", true},
		{srv.URL + "/?case=deflate-bomb", true},
		{streamed.URL + "/stream", true},
	} {
		resp, err := c.Get(t.Context(), tt.url, nil)
		if !tt.tooLong {
			if err != nil || len(resp.Body) != limit {
				t.Errorf("%s: err %v, want a %d-byte body", tt.url, err, limit)
			}
			continue
		}
		var tl *TooLargeError
		if !errors.As(err, &tl) {
			t.Errorf("%s: err = %v, want *TooLargeError", tt.url, err)
			continue
		}
		if tl.Limit != limit || !strings.Contains(err.Error(), strconv.Itoa(limit)) {
			t.Errorf("%s: error %q should state the %d-byte limit", tt.url, err, limit)
		}
	}
}

// holdingListener accepts connections and never writes to them, until
// the test ends.
func holdingListener(t *testing.T, ip string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l
}

// fullBacklog returns the address of a listening socket on ip whose accept
// queue is full and never drained, so that further connects get no
// SYN-ACK and hang: a blackhole that needs no outside host.
func fullBacklog(t *testing.T, ip [4]byte) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: ip}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(netip.AddrFrom4(ip).String(), strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr // queue full: connects now hang
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatalf("accept queue of %s never filled; cannot make a blackhole here", addr)
	return ""
}

func TestTimeouts(t *testing.T) {
	slowBody := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>"))
		w.(http.Flusher).Flush()
		for range 1000 { // a byte every 10ms: never idle long, never done
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			w.Write([]byte("."))
			w.(http.Flusher).Flush()
		}
	}))
	noHeaders := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	silent := holdingListener(t, "127.0.0.2")
	blackhole := fullBacklog(t, [4]byte{127, 0, 0, 2})

	short := 300 * time.Millisecond
	tests := []struct {
		name   string
		opts   Options
		url    string
		ctxTO  time.Duration // caller's deadline, if any
		detail string        // the timeout that fired, as net/http or net names it
	}{
		{"slow body hits total timeout", Options{Timeout: short}, slowBody.URL, 0, "deadline"},
		{"no headers hits header timeout", Options{ResponseHeaderTimeout: short}, noHeaders.URL, 0, "awaiting response headers"},
		{"no headers hits total timeout", Options{Timeout: short}, noHeaders.URL, 0, ""},
		{"silent TLS server hits handshake timeout", Options{ConnectTimeout: short}, "https://" + silent.Addr().String() + "/", 0, "TLS handshake timeout"},
		{"blackhole hits connect timeout", Options{ConnectTimeout: short}, "http://" + blackhole + "/", 0, "dial"},
		{"caller deadline honoured", Options{}, noHeaders.URL, short, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Policy = allow2
			c := NewClient(tt.opts)
			ctx := t.Context()
			if tt.ctxTO > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTO)
				defer cancel()
			}
			_, err := c.Get(ctx, tt.url, nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want errors.Is(err, context.DeadlineExceeded)", err)
			}
			var te interface{ Timeout() bool }
			if !errors.As(err, &te) || !te.Timeout() {
				t.Errorf("err = %v has no Timeout() reporting true", err)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("err = %q, want it to mention %q", err, tt.detail)
			}
		})
	}
}

func TestCallerCancellationIsNotATimeout(t *testing.T) {
	started := make(chan struct{})
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	c := NewClient(Options{Policy: allow2})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Get(ctx, srv.URL, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancellation reported as a timeout: %v", err)
	}
}

func TestRequestHeaders(t *testing.T) {
	var got http.Header
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}))
	c := NewClient(Options{Policy: allow2})

	if _, err := c.Get(t.Context(), srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	ua := got.Get("User-Agent")
	if !strings.HasPrefix(ua, "Mozilla/5.0") || !strings.Contains(ua, "Toolport") {
		t.Errorf("User-Agent = %q, want a browser-like UA naming Toolport", ua)
	}
	if !strings.Contains(got.Get("Accept"), "text/html") || got.Get("Accept-Language") == "" {
		t.Errorf("Accept = %q, Accept-Language = %q", got.Get("Accept"), got.Get("Accept-Language"))
	}
	if ae := got.Get("Accept-Encoding"); ae != "gzip, br" {
		t.Errorf("Accept-Encoding = %q, want %q", ae, "gzip, br")
	}

	hdr := http.Header{"User-Agent": {"custom/1"}, "X-Extra": {"yes"}, "Accept-Encoding": {"zstd"}}
	if _, err := c.Get(t.Context(), srv.URL, hdr); err != nil {
		t.Fatal(err)
	}
	if got.Get("User-Agent") != "custom/1" || got.Get("X-Extra") != "yes" {
		t.Errorf("caller headers not sent: %v", got)
	}
	if ae := got.Get("Accept-Encoding"); ae != "gzip, br" {
		t.Errorf("caller's Accept-Encoding was sent (%q); Get only decodes its own", ae)
	}
}

func TestContentType(t *testing.T) {
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/typed" {
			w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
		} else {
			w.Header()["Content-Type"] = nil // suppress net/http's own sniffing
		}
		io.WriteString(w, "<!DOCTYPE html><html><title>x</title></html>")
	}))
	c := NewClient(Options{Policy: allow2})
	for path, want := range map[string]string{
		"/typed":   "text/html; charset=ISO-8859-1",
		"/untyped": "text/html; charset=utf-8",
	} {
		resp, err := c.Get(t.Context(), srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentType != want {
			t.Errorf("%s: ContentType = %q, want %q", path, resp.ContentType, want)
		}
	}
}

func TestNon2xxIsAResponse(t *testing.T) {
	srv := serveOn(t, "127.0.0.2", http.NotFoundHandler())
	resp, err := NewClient(Options{Policy: allow2}).Get(t.Context(), srv.URL+"/missing", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 404 || resp.Status != "404 Not Found" {
		t.Errorf("got %d %q", resp.StatusCode, resp.Status)
	}
}

// TestHTTPS fetches over TLS (HTTP/2) from a name the fake resolver puts on
// 127.0.0.2; the httptest certificate is valid for example.com.
func TestHTTPS(t *testing.T) {
	var proto atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		io.WriteString(w, "secure")
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	dns := newFakeDNS(t, "127.0.0.2")
	c := NewClient(Options{Policy: allow2, Resolver: dns.Resolver(), TLSConfig: &tls.Config{RootCAs: roots}})
	_, port, _ := net.SplitHostPort(l.Addr().String())

	resp, err := c.Get(t.Context(), "https://example.com:"+port+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "secure" || proto.Load() != 2 {
		t.Errorf("body %q over HTTP/%d, want \"secure\" over HTTP/2", resp.Body, proto.Load())
	}
}

func TestGetInvalidURLs(t *testing.T) {
	c := NewClient(Options{})
	for _, tt := range []struct {
		url     string
		wantErr error
	}{
		{"ftp://example.com/", ErrUnsupportedScheme},
		{"file:///etc/passwd", ErrUnsupportedScheme},
		{"data:text/html,hi", ErrUnsupportedScheme},
		{"not a url", ErrInvalidURL},
		{"http://", ErrInvalidURL},
		{"https://bob:hunter2@example.com/", ErrUserinfo},
	} {
		_, err := c.Get(t.Context(), tt.url, nil)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("Get(%q) err = %v, want %v", tt.url, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Get(%q) error %q leaks the password", tt.url, err)
		}
	}
}

// TestErrorsNeverCarrySecrets drives each failure path with a URL whose
// query carries a secret (as API keys often are) and checks the text.
func TestErrorsNeverCarrySecrets(t *testing.T) {
	var hits atomic.Int32
	loop := serveOn(t, "127.0.0.1", countingHandler(&hits))
	big := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 2048))
	}))
	slow := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	redir := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
	}))
	_, port, _ := net.SplitHostPort(loop.Listener.Addr().String())
	c := NewClient(Options{Policy: allow2, MaxBodyBytes: 1024, Timeout: 300 * time.Millisecond})
	const secret = "s3cr3t-api-key"
	for _, u := range []string{
		"http://localhost:" + port + "/?key=" + secret,
		big.URL + "/?key=" + secret,
		slow.URL + "/?key=" + secret,
		redir.URL + "/?key=" + secret,
		"ftp://127.0.0.2/?key=" + secret,
		"http://u:" + secret + "@127.0.0.2/",
		"http://u:" + secret + "@[::1/",
	} {
		_, err := c.Get(t.Context(), u, nil)
		if err == nil {
			t.Errorf("Get(%s) succeeded, want an error", u)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q carries the secret", err)
		}
	}
}

// TestGetCheckingRedirects: the check sees every hop in order, after the
// address policy, and its refusal stops the fetch before the hop is asked.
func TestGetCheckingRedirects(t *testing.T) {
	var asked sync.Map // paths the server saw
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path, true)
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n == 0 {
			io.WriteString(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	}))
	errRefused := errors.New("refused by the check")
	tests := []struct {
		name    string
		refuse  string // the hop the check refuses
		wantErr error
		seen    []string
	}{
		{"every hop checked", "", nil, []string{"/hop/2", "/hop/1", "/hop/0"}},
		{"intermediate hop refused", "/hop/2", errRefused, []string{"/hop/2"}},
		{"final hop refused", "/hop/0", errRefused, []string{"/hop/2", "/hop/1", "/hop/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked.Clear()
			var seen []string
			c := NewClient(Options{Policy: allow2})
			resp, err := c.GetCheckingRedirects(t.Context(), srv.URL+"/hop/3", nil, func(ctx context.Context, next *url.URL) error {
				seen = append(seen, next.Path)
				if next.Path == tt.refuse {
					return errRefused
				}
				return nil
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && string(resp.Body) != "arrived" {
				t.Errorf("body %q", resp.Body)
			}
			if !slices.Equal(seen, tt.seen) {
				t.Errorf("checked %v, want %v", seen, tt.seen)
			}
			if _, ok := asked.Load(tt.refuse); ok && tt.refuse != "" {
				t.Errorf("the refused hop %s was requested", tt.refuse)
			}
		})
	}
	// The client's own Get, and other calls, are not checked.
	c := NewClient(Options{Policy: allow2})
	if _, err := c.GetCheckingRedirects(t.Context(), srv.URL+"/hop/1", nil, func(context.Context, *url.URL) error { return errRefused }); !errors.Is(err, errRefused) {
		t.Fatalf("err = %v", err)
	}
	if resp, err := c.Get(t.Context(), srv.URL+"/hop/1", nil); err != nil || string(resp.Body) != "arrived" {
		t.Fatalf("plain Get after a checked one: %v", err)
	}
}

// TestRedirectCheckAfterPolicy: a hop the address policy refuses never
// reaches the check.
func TestRedirectCheckAfterPolicy(t *testing.T) {
	srv := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/x", http.StatusFound)
	}))
	called := false
	_, err := NewClient(Options{Policy: allow2}).GetCheckingRedirects(t.Context(), srv.URL+"/", nil, func(context.Context, *url.URL) error {
		called = true
		return nil
	})
	wantBlocked(t, err, "127.0.0.1")
	if called {
		t.Error("the check was asked about a hop the policy refuses")
	}
}

// TestAllowHostsTrustsTheNamedHostOnly: a host the operator configured (an
// intranet portal) is dialled whatever its address, but a redirect from it
// to any other non-public host is refused as usual.
func TestAllowHostsTrustsTheNamedHostOnly(t *testing.T) {
	var hits atomic.Int32
	other := serveOn(t, "127.0.0.2", countingHandler(&hits))
	portal := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "portal")
		case "/away":
			http.Redirect(w, r, other.URL+"/secret", http.StatusFound)
		case "/home":
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	}))
	_, port, _ := net.SplitHostPort(portal.Listener.Addr().String())
	c := NewClient(Options{Policy: Policy{AllowHosts: []string{"LocalHost."}}})
	for _, path := range []string{"/ok", "/home"} {
		resp, err := c.Get(t.Context(), "http://localhost:"+port+path, nil)
		if err != nil || string(resp.Body) != "portal" {
			t.Fatalf("allowed host %s: %v, %v", path, resp, err)
		}
	}
	_, err := c.Get(t.Context(), "http://localhost:"+port+"/away", nil)
	wantBlocked(t, err, "127.0.0.2")
	// The same address under another name is not the allowed host.
	_, err = c.Get(t.Context(), portal.URL+"/ok", nil)
	wantBlocked(t, err, "127.0.0.1")
	if hits.Load() != 0 {
		t.Errorf("the refused host saw %d requests", hits.Load())
	}
}
