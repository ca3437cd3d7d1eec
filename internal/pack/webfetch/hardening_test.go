package webfetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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

// TestConcurrentFetchesAreBounded: of ten simultaneous calls against a
// server that holds every request, at most three reach it at once; the
// other seven wait, then fail with a retryable RATE_LIMIT.
func TestConcurrentFetchesAreBounded(t *testing.T) {
	const limit, calls = 3, 10
	var inFlight, peak, served atomic.Int32
	hold := make(chan struct{})
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		served.Add(1)
		<-hold
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "done")
	}))
	const wait = 100 * time.Millisecond
	reg := registry(t, webfetch.Config{MaxConcurrent: limit, QueueWait: wait})

	type outcome struct {
		res *tool.Result
		d   time.Duration
	}
	results := make(chan outcome, calls)
	for i := range calls {
		go func() {
			start := time.Now()
			res, _ := call(t, reg, map[string]any{"url": fmt.Sprintf("%s/page/%d", srv.URL, i)})
			results <- outcome{res, time.Since(start)}
		}()
	}
	// The excess fails while the first three are still held.
	for range calls - limit {
		var o outcome
		select {
		case o = <-results:
		case <-time.After(10 * time.Second):
			close(hold)
			t.Fatalf("the excess calls were not refused: %d requests reached the server", served.Load())
		}
		if o.res.OK() || o.res.Err.Code != tool.CodeRateLimit || !o.res.Err.Retryable {
			t.Fatalf("an excess call: got %s, want a retryable RATE_LIMIT", o.res.JSON)
		}
		if o.d < wait {
			t.Errorf("an excess call failed after %v, before the %v wait", o.d, wait)
		}
	}
	close(hold)
	for range limit {
		if o := <-results; !o.res.OK() {
			t.Errorf("an admitted call failed: %s", o.res.JSON)
		}
	}
	if p := peak.Load(); p > limit {
		t.Errorf("%d requests in flight at once, want at most %d", p, limit)
	}
	if s := served.Load(); s != limit {
		t.Errorf("server saw %d requests, want %d", s, limit)
	}
}

// busyRegistry returns a registry with one fetch slot, taken by a call to
// a server that holds its answer until the test ends, and that call's
// arguments.
func busyRegistry(t *testing.T) (*tool.Registry, json.RawMessage) {
	t.Helper()
	hold := make(chan struct{})
	arrived := make(chan struct{}, 1) // the holding call reached the server
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hold) }) // before the server closes (cleanups run last first)
	reg := registry(t, webfetch.Config{MaxConcurrent: 1, QueueWait: time.Minute})
	raw, _ := json.Marshal(map[string]any{"url": srv.URL + "/a"})
	go reg.Call(context.Background(), webfetch.Name, raw)
	<-arrived // it holds the only slot while its request is open
	return reg, raw
}

// TestCancelWhileQueued: a call waiting for a slot returns as soon as its
// caller goes away.
func TestCancelWhileQueued(t *testing.T) {
	reg, raw := busyRegistry(t)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	res := reg.Call(ctx, webfetch.Name, raw)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("canceled call returned after %v", d)
	}
	if res.OK() || res.Err.Code != tool.CodeCanceled {
		t.Errorf("got %s, want CANCELED", res.JSON)
	}
}

// TestInvalidURLsSkipTheQueue: with every slot taken, a malformed URL still
// fails at once as INVALID_URL rather than waiting to be told to retry.
func TestInvalidURLsSkipTheQueue(t *testing.T) {
	reg, _ := busyRegistry(t)
	start := time.Now()
	res, _ := call(t, reg, map[string]any{"url": "http://example.com:65536/"})
	if res.OK() || res.Err.Code != tool.CodeInvalidURL || time.Since(start) > time.Second {
		t.Errorf("got %s after %v, want INVALID_URL at once", res.JSON, time.Since(start))
	}
}

// TestNumericHostsAreNotRetried: numeric IPv4 forms of private addresses
// are BLOCKED and bad ports INVALID_URL, at once, without a retry, without
// DNS.
func TestNumericHostsAreNotRetried(t *testing.T) {
	var lookups atomic.Int32
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		lookups.Add(1)
		return nil, errors.New("no DNS in this test")
	}}
	hc := safehttp.NewClient(safehttp.Options{Resolver: noDNS})
	reg := registry(t, webfetch.Config{HTTP: hc})
	for _, tt := range []struct {
		url  string
		code tool.Code
	}{
		{"http://127.1/", tool.CodeBlocked},
		{"http://2130706433/", tool.CodeBlocked},
		{"http://0x7f000001/", tool.CodeBlocked},
		{"http://017700000001/", tool.CodeBlocked},
		{"http://0xa9fea9fe/latest/meta-data/", tool.CodeBlocked},
		{"http://[::ffff:127.0.0.1]/", tool.CodeBlocked},
		{"http://[::ffff:7f00:1]/", tool.CodeBlocked},
		{"http://example.com:65536/", tool.CodeInvalidURL},
		{"http://example.com:0/", tool.CodeInvalidURL},
		{"http://1.2.3.4.5/", tool.CodeInvalidURL},
	} {
		res, _ := call(t, reg, map[string]any{"url": tt.url})
		if res.OK() || res.Err.Code != tt.code || res.Err.Retryable || res.Retried {
			t.Errorf("%s: got %s, want %s, not retryable, not retried", tt.url, res.JSON, tt.code)
		}
	}
	if n := lookups.Load(); n != 0 {
		t.Errorf("%d DNS lookups, want none", n)
	}
}

// TestRedirectSecretsStayOutOfResults: a Location carrying credentials and
// a token, well-formed or not, never shows in the tool's result.
func TestRedirectSecretsStayOutOfResults(t *testing.T) {
	locations := map[string]string{
		"/userinfo": "http://alice:hunter2@host.example/p?token=secret",
		"/space":    "http://alice:hunter2@ho st.example/p?token=secret",
		"/percent":  "http://alice:hunter2@host.example/p%zz?token=secret",
		"/port":     "http://alice:hunter2@host.example:hunter2/p?token=secret",
		"/numeric":  "http://alice:hunter2@2130706433/p?token=secret",
		"/loopback": "http://127.1/p?token=secret",
	}
	var mu sync.Mutex
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		loc := locations[r.URL.Path]
		mu.Unlock()
		w.Header()["Location"] = []string{loc}
		w.WriteHeader(http.StatusFound)
	}))
	reg := registry(t, webfetch.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	for path := range locations {
		res, _ := call(t, reg, map[string]any{"url": srv.URL + path})
		if res.OK() {
			t.Errorf("%s: followed the redirect", path)
			continue
		}
		if res.Retried || res.Err.Retryable {
			t.Errorf("%s: a bad redirect was retried: %s", path, res.JSON)
		}
		// The cause is kept for logs: it must be as clean as the message.
		cause := ""
		if res.Err.Err != nil {
			cause = res.Err.Err.Error()
		}
		for _, leak := range []string{"alice", "hunter2", "secret", "token", "?"} {
			if strings.Contains(string(res.JSON), leak) || strings.Contains(cause, leak) {
				t.Errorf("%s: result %s (cause %q) contains %q", path, res.JSON, cause, leak)
			}
		}
	}
}

func TestConfigFromEnvLimits(t *testing.T) {
	load := func(env map[string]string) (webfetch.Config, error) {
		c, err := config.New(func(k string) string { return env[k] }, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return webfetch.ConfigFromEnv(c)
	}
	cfg, err := load(map[string]string{
		"TOOLPORT_FETCH_MAX_CONCURRENT":     "4",
		"TOOLPORT_FETCH_MAX_INFLIGHT_BYTES": "1048576",
		"TOOLPORT_FETCH_QUEUE_WAIT":         "250ms",
	})
	if err != nil || cfg.MaxConcurrent != 4 || cfg.MaxInFlightBytes != 1<<20 || cfg.QueueWait != 250*time.Millisecond {
		t.Errorf("ConfigFromEnv = %+v, %v", cfg, err)
	}
	if cfg, err := load(nil); err != nil || cfg.MaxConcurrent != 0 || cfg.MaxInFlightBytes != 0 || cfg.QueueWait != 0 {
		t.Errorf("unset limits should stay zero (the defaults): %+v, %v", cfg, err)
	}
	for name, v := range map[string]string{
		"TOOLPORT_FETCH_MAX_CONCURRENT":     "0",
		"TOOLPORT_FETCH_MAX_INFLIGHT_BYTES": "-1",
		"TOOLPORT_FETCH_QUEUE_WAIT":         "soon",
		"TOOLPORT_FETCH_MAX_BYTES":          "10 MiB",
	} {
		if _, err := load(map[string]string{name: v}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: err = %v, want one naming the variable", name, v, err)
		}
	}
	if _, err := load(map[string]string{"TOOLPORT_FETCH_MAX_CONCURRENT": "1000000"}); err == nil {
		t.Errorf("a million concurrent fetches accepted")
	}
}
