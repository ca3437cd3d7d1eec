package websearch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

const (
	braveKey  = "BSA-secret-brave-key-4242"
	googleKey = "AIza-secret-google-key-4242"
	engineID  = "engine-cx-77"
)

// fixture reads a recording of the brave or google package.
func fixture(t testing.TB, provider, name string) []byte {
	t.Helper()
	return tooltest.Fixture(t, provider, name)
}

// newUpstream starts a local stand-in for Brave or Google: it records each
// request and answers with the next reply (the last one repeats). A canned
// reply without a Content-Type is sent as JSON, as both APIs do.
func newUpstream(t *testing.T, replies ...tooltest.Reply) *tooltest.Server {
	t.Helper()
	for i, rep := range replies {
		if rep.Handle == nil && rep.Header.Get("Content-Type") == "" {
			h := rep.Header.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("Content-Type", "application/json")
			replies[i].Header = h
		}
	}
	return tooltest.NewServer(t, tooltest.Sequence(replies...))
}

// queries lists one query parameter over all requests.
func queries(u *tooltest.Server, param string) []string {
	var out []string
	for _, r := range u.Requests() {
		out = append(out, r.Query.Get(param))
	}
	return out
}

func braveConfig(u *tooltest.Server) Config {
	return Config{BraveAPIKey: braveKey, BraveBaseURL: u.URL, Timeout: 5 * time.Second, MaxRateWait: -1}
}

func googleConfig(u *tooltest.Server) Config {
	return Config{GoogleAPIKey: googleKey, GoogleEngineID: engineID, GoogleBaseURL: u.URL, Timeout: 5 * time.Second, Now: beforeGoogleEnds}
}

// beforeGoogleEnds is a clock before Google's API ends, for the tests of
// web_search_google itself; TestGoogleEnd moves it.
func beforeGoogleEnds() time.Time { return time.Date(2026, time.November, 29, 12, 0, 0, 0, time.UTC) }

// call runs one tool call through a registry that retries at once.
func call(t *testing.T, cfg Config, name, args string) *tool.Result {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = beforeGoogleEnds
	}
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
	if b, ok := res.Value.(BraveOutput); ok {
		// web_search_brave's results carry more fields; the common ones are
		// what the shared tests compare.
		out := Output{Count: b.Count, Results: []Result{}}
		for _, r := range b.Results {
			out.Results = append(out.Results, Result{Title: r.Title, URL: r.URL, Snippet: r.Snippet})
		}
		return out
	}
	return res.Value.(Output)
}

func braveOutput(t *testing.T, res *tool.Result) BraveOutput {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("call failed: %s", res.JSON)
	}
	return res.Value.(BraveOutput)
}

// upstreamCase is one upstream answer sequence and the failure it must
// become; a case without a code must succeed after one retry.
type upstreamCase struct {
	name      string
	replies   []tooltest.Reply
	code      tool.Code
	retryable bool
	retried   bool
	message   string // exact when set
	contains  string
	status    int // the upstream status the error reports
}

// runUpstreamCases calls toolName once per case against an upstream that
// plays the case's replies. A successful case must return wantCount
// results; checkStatus also compares the error's upstream status. Each call
// runs in a synctest bubble, reaching the upstream without a socket, so that
// a Retry-After the registry honours passes on the fake clock.
func runUpstreamCases(t *testing.T, tests []upstreamCase, config func(*tooltest.Server) Config, toolName string, wantCount int, checkStatus bool) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tt.replies...) // outside the bubble: it listens on a socket
			var res *tool.Result
			synctest.Test(t, func(t *testing.T) {
				cfg := config(up)
				cfg.HTTPClient = up.InMemoryClient()
				res = call(t, cfg, toolName, `{"query":"semantic kernel"}`)
			})
			wantRequests := 1
			if res.Retried {
				wantRequests = 2
			}
			if n := len(up.Requests()); n != wantRequests {
				t.Errorf("%d requests, want %d", n, wantRequests)
			}
			if tt.code == "" {
				if res.Err != nil {
					t.Fatalf("call failed: %s", res.JSON)
				}
				var out struct{ Count int }
				if err := json.Unmarshal(res.JSON, &out); err != nil || out.Count != wantCount || !res.Retried {
					t.Errorf("count %d, retried %v (%v)", out.Count, res.Retried, err)
				}
				return
			}
			wantFailure(t, res, tt.code, tt.retryable, tt.retried)
			if tt.message != "" && res.Err.Message != tt.message {
				t.Errorf("message = %q, want %q", res.Err.Message, tt.message)
			}
			if !strings.Contains(res.Err.Message, tt.contains) {
				t.Errorf("message %q lacks %q", res.Err.Message, tt.contains)
			}
			if checkStatus && res.Err.Status != tt.status {
				t.Errorf("status = %d, want %d", res.Err.Status, tt.status)
			}
		})
	}
}

// bravePages answers like Brave with synthetic pages: result i of the whole
// ranking has URL urlOf(i), and Brave's offset is honoured as a page index.
func bravePages(urlOf func(i int) string, header http.Header) tooltest.Reply {
	return tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
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
