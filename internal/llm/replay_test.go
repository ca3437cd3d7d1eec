package llm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

const fixtures = "testdata"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseLines turns logged data lines into a live SSE body: each line followed
// by a blank line, as SOURCES.md prescribes for the local-server captures.
func sseLines(lines ...string) []byte {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n\n")
	}
	return []byte(b.String())
}

// captured is what the replay server received.
type captured struct {
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   []byte
}

func (c *captured) json(t *testing.T) map[string]any {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(c.body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, c.body)
	}
	return m
}

// replayServer answers every request with status, headers and body, written
// in 97-byte pieces with a flush after each, like a live stream.
func replayServer(t *testing.T, status int, header http.Header, body []byte) (*httptest.Server, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.method, c.path, c.header, c.body = r.Method, r.URL.Path, r.Header.Clone(), b
		c.mu.Unlock()
		for k, vs := range header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if w.Header().Get("Content-Type") == "" {
			if status == http.StatusOK {
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
		}
		w.WriteHeader(status)
		for len(body) > 0 {
			n := min(97, len(body))
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// sseHeader is the content type of a stream.
var sseHeader = http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}

type call struct{ Name, Input string }

func calls(r *llm.Response) []call {
	var out []call
	for _, c := range r.ToolCalls {
		out = append(out, call{c.Name, string(c.Input)})
	}
	return out
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("not JSON: %s", want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

var errEOF = io.EOF

// redirectTo returns a client that sends every request to the test server
// base, whatever its URL says, so that a provider's default base URL can be
// tested without leaving the machine.
func redirectTo(t *testing.T, base string) *http.Client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
