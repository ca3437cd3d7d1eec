package websearch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/tool"
)

const (
	braveKey  = "BSA-secret-brave-key-4242"
	googleKey = "AIza-secret-google-key-4242"
	engineID  = "engine-cx-77"
)

func fixture(t testing.TB, provider, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", provider, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upstream is a local stand-in for Brave or Google: it records each request
// and answers with the next reply (the last one repeats).
type upstream struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []*http.Request
	replies []reply
}

type reply struct {
	status int
	header http.Header
	body   []byte
	// handle, when set, answers instead (for slow and synthetic servers).
	handle func(w http.ResponseWriter, r *http.Request)
}

func newUpstream(t *testing.T, replies ...reply) *upstream {
	u := &upstream{t: t, replies: replies}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.reqs = append(u.reqs, r.Clone(context.Background()))
	rep := u.replies[min(len(u.reqs), len(u.replies))-1]
	u.mu.Unlock()
	if rep.handle != nil {
		rep.handle(w, r)
		return
	}
	for k, vs := range rep.header {
		w.Header()[k] = vs
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rep.status)
	w.Write(rep.body)
}

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.reqs...)
}

// queries lists one query parameter over all requests.
func (u *upstream) queries(param string) []string {
	var out []string
	for _, r := range u.requests() {
		out = append(out, r.URL.Query().Get(param))
	}
	return out
}

func braveConfig(u *upstream) Config {
	return Config{BraveAPIKey: braveKey, BraveBaseURL: u.srv.URL, Timeout: 5 * time.Second, MaxRateWait: -1}
}

func googleConfig(u *upstream) Config {
	return Config{GoogleAPIKey: googleKey, GoogleEngineID: engineID, GoogleBaseURL: u.srv.URL, Timeout: 5 * time.Second}
}

// call runs one tool call through a registry that retries at once.
func call(t *testing.T, cfg Config, name, args string) *tool.Result {
	t.Helper()
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(Tools(cfg)...); err != nil {
		t.Fatal(err)
	}
	res := reg.Call(context.Background(), name, json.RawMessage(args))
	assertNoSecret(t, res)
	return res
}

// assertNoSecret checks that neither key reaches the agent's JSON, the error
// message, or even the error chain a host might log.
func assertNoSecret(t *testing.T, res *tool.Result) {
	t.Helper()
	texts := []string{string(res.JSON), res.Summary}
	if res.Err != nil {
		texts = append(texts, res.Err.Message)
		if res.Err.Err != nil {
			texts = append(texts, res.Err.Err.Error())
		}
	}
	for _, s := range texts {
		if strings.Contains(s, braveKey) || strings.Contains(s, googleKey) || strings.Contains(s, url.QueryEscape(googleKey)) {
			t.Fatalf("a key leaked: %s", s)
		}
	}
}

func wantFailure(t *testing.T, res *tool.Result, code tool.Code, retryable, retried bool) {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("call succeeded: %s", res.JSON)
	}
	if res.Err.Code != code || res.Err.Retryable != retryable || res.Retried != retried {
		t.Fatalf("got %s retryable=%v retried=%v (%q), want %s retryable=%v retried=%v",
			res.Err.Code, res.Err.Retryable, res.Retried, res.Err.Message, code, retryable, retried)
	}
	var env map[string]any
	if err := json.Unmarshal(res.JSON, &env); err != nil {
		t.Fatal(err)
	}
	if env["success"] != false || env["error_code"] != string(code) || env["wasRetried"] != retried {
		t.Fatalf("envelope = %s", res.JSON)
	}
}

func output(t *testing.T, res *tool.Result) Output {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("call failed: %s", res.JSON)
	}
	return res.Value.(Output)
}

// bravePages answers like Brave with synthetic pages: result i of the whole
// ranking has URL urlOf(i), and Brave's offset is honoured as a page index.
func bravePages(urlOf func(i int) string, header http.Header) reply {
	return reply{handle: func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		count := atoiDefault(q.Get("count"), 20)
		page := atoiDefault(q.Get("offset"), 0)
		type result struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		}
		var results []result
		for i := page * count; i < (page+1)*count; i++ {
			results = append(results, result{Title: "Result <strong>" + itoa(i) + "</strong>", URL: urlOf(i), Description: "about &quot;" + itoa(i) + "&quot;"})
		}
		body, _ := json.Marshal(map[string]any{
			"type":  "search",
			"query": map[string]any{"original": q.Get("q"), "more_results_available": page < 9},
			"web":   map[string]any{"type": "search", "results": results},
		})
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}}
}

func atoiDefault(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

func itoa(i int) string { return strconv.Itoa(i) }
