package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/mcpserver"
)

func TestHTTPConcurrentClients(t *testing.T) {
	const clients, calls = 50, 20
	f := newFixture(t)
	hs := httptest.NewServer(mcpserver.NewHTTPHandler(f.newServer(t, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	defer hs.Close()

	for _, version := range []string{"", "2025-11-25"} { // the newest revision (stateless) and a session-based one
		t.Run("version="+version, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, clients*calls)
			for c := range clients {
				wg.Go(func() {
					client := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("client-%d", c), Version: "v0"}, nil)
					cs, err := client.Connect(context.Background(),
						&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxRetries: -1},
						&mcp.ClientSessionOptions{ProtocolVersion: version})
					if err != nil {
						errs <- fmt.Errorf("client %d: connect: %w", c, err)
						return
					}
					defer cs.Close()
					for i := range calls {
						text := fmt.Sprintf("client %d call %d", c, i)
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
						switch {
						case err != nil:
							errs <- fmt.Errorf("client %d call %d: %w", c, i, err)
						case res.IsError:
							errs <- fmt.Errorf("client %d call %d: isError %q", c, i, texts(res))
						case !strings.Contains(string(mustJSON(t, res.StructuredContent)), text):
							// Each answer must be this call's, not another client's.
							errs <- fmt.Errorf("client %d call %d: got %s", c, i, mustJSON(t, res.StructuredContent))
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			n := 0
			for err := range errs {
				if n++; n <= 5 {
					t.Error(err)
				}
			}
			if n > 0 {
				t.Errorf("%d of %d calls failed", n, clients*calls)
			}
		})
	}
}

func TestHTTPRouting(t *testing.T) {
	// A request of the newest revision is served without a session; the
	// initialize of an older client opens one.
	f := newFixture(t)
	hs := httptest.NewServer(mcpserver.NewHTTPHandler(f.newServer(t, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	defer hs.Close()
	tests := []struct {
		name, version, body string
		wantSession         bool
	}{
		{name: "legacy initialize", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
			wantSession: true},
		{name: "stateless discover", version: "2026-07-28",
			body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.version != "" {
				req.Header.Set("Mcp-Protocol-Version", tt.version)
				req.Header.Set("Mcp-Method", "server/discover")
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Mcp-Session-Id") != ""; got != tt.wantSession {
				t.Errorf("session ID set = %v, want %v (body %s)", got, tt.wantSession, body)
			}
		})
	}
}

func TestRequireBearer(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		name, token, header string
		want                int
	}{
		{name: "right token", token: "s3cret-token", header: "Bearer s3cret-token", want: http.StatusNoContent},
		{name: "scheme is case-insensitive", token: "s3cret-token", header: "bearer s3cret-token", want: http.StatusNoContent},
		{name: "no header", token: "s3cret-token", header: "", want: http.StatusUnauthorized},
		{name: "wrong token", token: "s3cret-token", header: "Bearer s3cret-tokem", want: http.StatusUnauthorized},
		{name: "prefix of the token", token: "s3cret-token", header: "Bearer s3cret", want: http.StatusUnauthorized},
		{name: "other scheme", token: "s3cret-token", header: "Basic s3cret-token", want: http.StatusUnauthorized},
		{name: "empty credentials", token: "s3cret-token", header: "Bearer ", want: http.StatusUnauthorized},
		{name: "empty token admits nobody", token: "", header: "Bearer ", want: http.StatusUnauthorized},
		{name: "empty token, empty guess", token: "", header: "Bearer", want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			mcpserver.RequireBearer(tt.token, inner).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d", rec.Code, tt.want)
			}
			if rec.Code == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge")
			}
			if strings.Contains(rec.Body.String(), "s3cret") {
				t.Errorf("the response echoes the token: %q", rec.Body.String())
			}
		})
	}
}

func TestRequireBearerWithClient(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(mcpserver.RequireBearer("tok-123456", mcpserver.NewHTTPHandler(f.newServer(t, mcpserver.Options{}), mcpserver.HTTPOptions{})))
	defer hs.Close()
	for _, tt := range []struct {
		token  string
		wantOK bool
	}{{"tok-123456", true}, {"nope", false}} {
		httpClient := &http.Client{Transport: bearerTransport{tt.token, hs.Client().Transport}}
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: httpClient, MaxRetries: -1}, nil)
		if (err == nil) != tt.wantOK {
			t.Errorf("token %q: connect err = %v, want ok=%v", tt.token, err, tt.wantOK)
		}
		if err == nil {
			cs.Close()
		}
	}
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestRunStdioEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(cancel context.CancelFunc, stdin *io.PipeWriter)
	}{
		{name: "stdin closed", end: func(_ context.CancelFunc, stdin *io.PipeWriter) { stdin.Close() }},
		{name: "context canceled", end: func(cancel context.CancelFunc, _ *io.PipeWriter) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			stdinR, stdinW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- mcpserver.RunStdio(ctx, f.newServer(t, mcpserver.Options{}), stdinR, io.Discard) }()
			tt.end(cancel, stdinW)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("RunStdio = %v, want nil on a clean end", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("RunStdio did not return")
			}
		})
	}
}

// BenchmarkStreamableHTTPCall measures a cheap tool call over streamable HTTP
// on loopback, end to end through the SDK client: one client calling in a
// loop, and GOMAXPROCS clients in parallel. It reports calls/s and the p50 and
// p99 latency of a call.
func BenchmarkStreamableHTTPCall(b *testing.B) {
	for _, version := range []string{"", "2025-11-25"} {
		name := "newest"
		if version != "" {
			name = version
		}
		b.Run(name+"/serial", func(b *testing.B) { benchHTTP(b, version, false) })
		b.Run(name+"/parallel", func(b *testing.B) { benchHTTP(b, version, true) })
	}
}

func benchHTTP(b *testing.B, version string, parallel bool) {
	f := newFixture(b)
	hs := httptest.NewServer(mcpserver.NewHTTPHandler(f.newServer(b, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	defer hs.Close()
	dial := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello, benchmark"}}
	call := func(cs *mcp.ClientSession, lat *[]time.Duration) {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), params)
		*lat = append(*lat, time.Since(start))
		if err != nil || res.IsError {
			b.Errorf("call: %v", err)
		}
	}

	var (
		mu  sync.Mutex
		all []time.Duration
	)
	start := time.Now()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			cs := dial()
			defer cs.Close()
			var lat []time.Duration
			for pb.Next() {
				call(cs, &lat)
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	} else {
		cs := dial()
		defer cs.Close()
		b.ResetTimer()
		start = time.Now()
		for b.Loop() {
			call(cs, &all)
		}
	}
	elapsed := time.Since(start)
	if len(all) == 0 {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

// sseEvent is one event of a text/event-stream body.
type sseEvent struct {
	name, id, retry, data string
	hasData               bool
}

// readEvent reads the next event of an SSE body; ok is false at its end.
func readEvent(t *testing.T, br *bufio.Reader) (ev sseEvent, ok bool) {
	t.Helper()
	seen := false
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return ev, false
		}
		l = strings.TrimSuffix(l, "\n")
		if l == "" {
			if seen {
				return ev, true
			}
			continue
		}
		seen = true
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name = value
		case "id":
			ev.id = value
		case "retry":
			ev.retry = value
		case "data":
			ev.data += value
			ev.hasData = true
		}
	}
}

// post sends one JSON-RPC message of a session of revision 2025-11-25.
func post(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	return postAs(t, url, session, "2025-11-25", body)
}

func TestHTTPPrimingEventAndResumption(t *testing.T) {
	// A session's response stream opens with an event ID, empty data and the
	// retry delay; a client that loses the stream during a call resumes it
	// with Last-Event-ID and gets the call's answer.
	f := newFixture(t)
	h := mcpserver.NewHTTPHandler(f.newServer(t, mcpserver.Options{}), mcpserver.HTTPOptions{SSERetry: 2500 * time.Millisecond})
	// A stream is resumed once the request that had it is over: callDone
	// closes when the server is done with the call's POST.
	callDone := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") == "call" {
			defer close(callDone)
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	resp := post(t, hs.URL, "", initialize("2025-11-25"))
	session := resp.Header.Get("Mcp-Session-Id")
	br := bufio.NewReader(resp.Body)
	prime, ok := readEvent(t, br)
	if !ok || prime.id == "" || !prime.hasData || prime.data != "" || prime.retry != "2500" {
		t.Errorf("first event of the initialize stream = %+v, want an id, empty data and retry 2500", prime)
	}
	if ev, _ := readEvent(t, br); !strings.Contains(ev.data, `"protocolVersion":"2025-11-25"`) || ev.retry != "" {
		t.Errorf("second event = %+v, want the initialize result (no retry)", ev)
	}
	resp.Body.Close()
	if session == "" {
		t.Fatal("no session")
	}
	post(t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"hang":true}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("X-Test", "call")
	resp, err := (&http.Client{Timeout: waitLimit}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	prime, ok = readEvent(t, bufio.NewReader(resp.Body))
	resp.Body.Close() // the connection breaks during the call
	if !ok || prime.id == "" || prime.data != "" {
		t.Fatalf("first event of the call's stream = %+v, want a priming event", prime)
	}
	select {
	case <-callDone:
	case <-time.After(waitLimit):
		t.Fatal("the server did not end the call's request")
	}
	select {
	case <-f.started:
	case <-time.After(waitLimit):
		t.Fatal("the call did not start")
	}
	close(f.release) // the call ends while no client listens

	req, _ = http.NewRequest(http.MethodGet, hs.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", prime.id)
	resp, err = (&http.Client{Timeout: waitLimit}).Do(req) // the stream stays open: bound a missing answer
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("resuming: status %d: %s", resp.StatusCode, body)
	}
	br = bufio.NewReader(resp.Body)
	for {
		ev, ok := readEvent(t, br)
		if !ok {
			t.Fatal("the resumed stream ended without the call's answer")
		}
		if strings.Contains(ev.data, `"id":7`) {
			if !strings.Contains(ev.data, "released without cancellation") {
				t.Errorf("answer = %s, want the tool's result", ev.data)
			}
			break
		}
	}
}

// postAs sends a message of a session of the given revision ("" before
// initialize) and returns the response.
func postAs(t *testing.T, url, session, revision, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", revision)
	}
	resp, err := (&http.Client{Timeout: waitLimit}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// openSession initializes a session of revision and returns its ID.
func openSession(t *testing.T, url, revision string) string {
	t.Helper()
	resp := postAs(t, url, "", "", initialize(revision))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
	}
	post := postAs(t, url, id, revision, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post.Body.Close()
	return id
}

// streamAnswers reads the JSON-RPC messages of an SSE response to its end.
func streamAnswers(t *testing.T, resp *http.Response) []response {
	t.Helper()
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var out []response
	for {
		ev, ok := readEvent(t, br)
		if !ok {
			return out
		}
		if ev.data == "" {
			continue
		}
		var r response
		if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
			t.Fatalf("event data is not JSON-RPC: %.200s", ev.data)
		}
		out = append(out, r)
	}
}

func TestHTTPBatchBounds(t *testing.T) {
	const revision = "2025-03-26" // the last revision with batches
	batchOf := func(n int, method string) string {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i, method))
		}
		return "[" + strings.Join(members, ",") + "]"
	}
	f := newFixture(t)
	srv := f.newServer(t, mcpserver.Options{})

	t.Run("too many messages", func(t *testing.T) {
		hs := httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{}))
		defer hs.Close()
		id := openSession(t, hs.URL, revision)
		resp := postAs(t, hs.URL, id, revision, batchOf(mcpserver.DefaultMaxBatchMessages+1, "ping"))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r response
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32600 {
			t.Fatalf("oversized batch: status %d, body %.300s; want 400 and -32600", resp.StatusCode, body)
		}
		got := streamAnswers(t, postAs(t, hs.URL, id, revision, batchOf(mcpserver.DefaultMaxBatchMessages, "ping")))
		if len(got) != mcpserver.DefaultMaxBatchMessages {
			t.Errorf("batch at the bound: %d answers, want %d", len(got), mcpserver.DefaultMaxBatchMessages)
		}
	})

	t.Run("answer bytes", func(t *testing.T) {
		hs := httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{}))
		defer hs.Close()
		id := openSession(t, hs.URL, revision)
		probe := streamAnswers(t, postAs(t, hs.URL, id, revision, `{"jsonrpc":"2.0","id":"probe","method":"tools/list"}`))
		if len(probe) != 1 {
			t.Fatalf("tools/list: %d answers", len(probe))
		}
		size := len(mustJSON(t, probe[0]))
		// Room for two answers of tools/list, not three.
		hs2 := httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{MaxBatchAnswerBytes: 2*size + size/2}))
		defer hs2.Close()
		id = openSession(t, hs2.URL, revision)
		got := streamAnswers(t, postAs(t, hs2.URL, id, revision, batchOf(5, "tools/list")))
		wantBudgetAnswers(t, got, 2, 3)
	})
}

func TestHTTPSessionCap(t *testing.T) {
	const revision = "2025-11-25"
	f := newFixture(t)
	hs := httptest.NewServer(mcpserver.NewHTTPHandler(f.newServer(t, mcpserver.Options{}), mcpserver.HTTPOptions{MaxSessions: 3}))
	defer hs.Close()
	ping := func(id string) int {
		resp := postAs(t, hs.URL, id, revision, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	s1, s2, s3 := openSession(t, hs.URL, revision), openSession(t, hs.URL, revision), openSession(t, hs.URL, revision)
	// A request that cannot open a session (no initialize) replaces none:
	// otherwise s4 below would evict s1 or s3.
	stray := postAs(t, hs.URL, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	io.Copy(io.Discard, stray.Body)
	stray.Body.Close()
	if code := ping(s1); code != http.StatusOK { // s2 is now the least recently used
		t.Fatalf("ping: %d", code)
	}
	s4 := openSession(t, hs.URL, revision)
	if code := ping(s2); code != http.StatusNotFound {
		t.Errorf("the least recently used session answers %d, want 404 (evicted)", code)
	}
	for _, id := range []string{s1, s3, s4} {
		if code := ping(id); code != http.StatusOK {
			t.Errorf("session %s: %d, want 200", id, code)
		}
	}

	// With every session busy (a standalone stream open on each), a new one
	// is refused rather than one in use evicted.
	for _, id := range []string{s1, s3, s4} {
		req, _ := http.NewRequest(http.MethodGet, hs.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", revision)
		resp, err := hs.Client().Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", err, resp)
		}
		defer resp.Body.Close()
	}
	resp := postAs(t, hs.URL, "", "", initialize(revision))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a session past the cap with none idle: status %d %s, want 503 with Retry-After", resp.StatusCode, body)
	}
	for _, id := range []string{s1, s3, s4} {
		if code := ping(id); code != http.StatusOK {
			t.Errorf("busy session %s: %d, want 200", id, code)
		}
	}
}
