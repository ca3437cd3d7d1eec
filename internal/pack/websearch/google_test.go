package websearch

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/google"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestGoogleReturnsRecordedResults(t *testing.T) {
	for name, body := range map[string][]byte{
		"as recorded": fixture(t, "google", "cse_what_is_semantic_kernel.json"),
		"with a BOM":  append([]byte("\xef\xbb\xbf"), fixture(t, "google", "cse_what_is_semantic_kernel.json")...),
	} {
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: body})
			res := call(t, googleConfig(up), "web_search_google", `{"query":"What is the Semantic Kernel?"}`)
			out := output(t, res)
			if out.Count != 4 {
				t.Fatalf("count = %d", out.Count)
			}
			want := Result{
				Title:   "Introduction to Semantic Kernel | Microsoft Learn",
				URL:     "https://learn.microsoft.com/en-us/semantic-kernel/overview/",
				Snippet: "Jun 24, 2024 ... In this article ... Semantic Kernel is a lightweight, open-source development kit that lets you easily build AI agents and integrate the latest AI ...",
			}
			if out.Results[0] != want {
				t.Errorf("first = %+v", out.Results[0])
			}
			if res.Summary != `4 results for "What is the Semantic Kernel?"` {
				t.Errorf("summary = %q", res.Summary)
			}
			q := up.Requests()[0].Query
			if up.Requests()[0].URL.Path != "/customsearch/v1" || q.Get("key") != googleKey || q.Get("cx") != engineID ||
				q.Get("q") != "What is the Semantic Kernel?" || q.Get("num") != "10" || q.Get("start") != "1" || q.Has("siteSearch") {
				t.Errorf("request = %s", up.Requests()[0].URL)
			}
		})
	}
}

func TestGoogleDomainMapping(t *testing.T) {
	tests := []struct {
		name       string
		args       string
		siteSearch string
		filter     string
		wantURLs   []string
	}{
		{"one allowed domain is sent upstream", `{"query":"sk","allowed_domains":["www.Learn.Microsoft.com"]}`, "learn.microsoft.com", "i",
			[]string{"https://learn.microsoft.com/en-us/semantic-kernel/overview/", "https://learn.microsoft.com/en-us/semantic-kernel/"}},
		{"several allowed domains are post-filtered", `{"query":"sk","allowed_domains":["github.com","medium.com"]}`, "", "",
			[]string{"https://github.com/microsoft/semantic-kernel", "https://medium.com/globant/semantic-kernel-the-new-way-to-create-artificial-intelligence-applications-7959d5fc90ca"}},
		{"first blocked domain is sent, the rest post-filtered", `{"query":"sk","blocked_domains":["medium.com","github.com"]}`, "medium.com", "e",
			[]string{"https://learn.microsoft.com/en-us/semantic-kernel/overview/", "https://learn.microsoft.com/en-us/semantic-kernel/"}},
		{"allowed and blocked", `{"query":"sk","allowed_domains":["microsoft.com"],"blocked_domains":["learn.microsoft.com"]}`, "microsoft.com", "i", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "google", "cse_what_is_semantic_kernel.json")})
			out := output(t, call(t, googleConfig(up), "web_search_google", tt.args))
			q := up.Requests()[0].Query
			if q.Get("siteSearch") != tt.siteSearch || q.Get("siteSearchFilter") != tt.filter {
				t.Errorf("siteSearch=%q siteSearchFilter=%q, want %q %q", q.Get("siteSearch"), q.Get("siteSearchFilter"), tt.siteSearch, tt.filter)
			}
			var got []string
			for _, r := range out.Results {
				got = append(got, r.URL)
			}
			if strings.Join(got, " ") != strings.Join(tt.wantURLs, " ") {
				t.Errorf("urls = %v, want %v", got, tt.wantURLs)
			}
		})
	}
}

func TestGooglePagingParameters(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{"kind":"customsearch#search"}`)})
	out := output(t, call(t, googleConfig(up), "web_search_google", `{"query":"go","num":9,"start":91}`))
	q := up.Requests()[0].Query
	if q.Get("num") != "9" || q.Get("start") != "91" || out.Count != 0 {
		t.Errorf("request = %s, count %d", up.Requests()[0].URL, out.Count)
	}
}

func TestGoogleRejectsBadInputBeforeAnyRequest(t *testing.T) {
	tests := []struct{ name, args, wantMsg string }{
		{"start + num over 100", `{"query":"go","start":91}`, "start + num must not exceed 100"},
		{"start over 91", `{"query":"go","start":92,"num":1}`, "start"},
		{"num over 10", `{"query":"go","num":11}`, "num"},
		{"start 0", `{"query":"go","start":0}`, "start"},
		{"blank query", `{"query":"  "}`, "query must not be empty"},
		{"blocked domain", `{"query":"go","blocked_domains":["a b"]}`, "blocked_domains[0]"},
		{"Brave-only field", `{"query":"go","freshness":"pd"}`, "freshness"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{}`)})
			res := call(t, googleConfig(up), "web_search_google", tt.args)
			wantFailure(t, res, tool.CodeValidation, false, false)
			if !strings.Contains(res.Err.Message, tt.wantMsg) {
				t.Errorf("message %q lacks %q", res.Err.Message, tt.wantMsg)
			}
			if len(up.Requests()) != 0 {
				t.Error("a request reached Google")
			}
		})
	}
}

func TestGoogleUpstreamErrors(t *testing.T) {
	quota := "Rate limit exceeded. You've used your free search quota (100/day)."
	keyInvalid := []byte(`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`)
	tests := []upstreamCase{
		{name: "legacy 403 dailyLimitExceeded", replies: []tooltest.Reply{{Status: 403, Body: fixture(t, "google", "error_403_dailyLimitExceeded_legacy.json")}},
			code: tool.CodeRateLimit, message: quota},
		{name: "429 RESOURCE_EXHAUSTED", replies: []tooltest.Reply{{Status: 429, Body: fixture(t, "google", "error_429_quota_exceeded_resource_exhausted.json")}},
			code: tool.CodeRateLimit, message: quota},
		{name: "429 with a short Retry-After, then success", replies: []tooltest.Reply{
			{Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: fixture(t, "google", "error_429_quota_exceeded_resource_exhausted.json")},
			{Status: 200, Body: fixture(t, "google", "cse_what_is_semantic_kernel.json")}}},
		{name: "429 per minute without Retry-After", replies: []tooltest.Reply{
			{Status: 429, Body: []byte(`{"error":{"code":429,"message":"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'","status":"RESOURCE_EXHAUSTED"}}`)}},
			code: tool.CodeRateLimit, retryable: true, retried: true, contains: "per minute"},
		{name: "bad key", replies: []tooltest.Reply{{Status: 400, Body: keyInvalid}}, code: tool.CodeAuthInvalid, contains: "API key not valid"},
		{name: "403 permission denied", replies: []tooltest.Reply{{Status: 403, Body: []byte(`{"error":{"code":403,"message":"This project does not have the access to Custom Search JSON API.","status":"PERMISSION_DENIED"}}`)}},
			code: tool.CodeAuthInvalid, contains: "closed to new customers"},
		{name: "400 bad request", replies: []tooltest.Reply{{Status: 400, Body: []byte(`{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}`)}},
			code: tool.CodeAPI, contains: "Request contains an invalid argument."},
		{name: "404 gone", replies: []tooltest.Reply{{Status: 404, Body: []byte(`Not Found`)}}, code: tool.CodeUpstreamGone, contains: "2027-01-01"},
		{name: "503 then success", replies: []tooltest.Reply{{Status: 503, Body: nil}, {Status: 200, Body: fixture(t, "google", "cse_what_is_semantic_kernel.json")}}},
		{name: "malformed JSON", replies: []tooltest.Reply{{Status: 200, Body: []byte(`{"items":[{"link":`)}}, code: tool.CodeParse, message: "Google Custom Search sent a response that is not valid JSON"},
		{name: "wrong content type", replies: []tooltest.Reply{{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(`<html>`)}},
			code: tool.CodeParse, message: "Google Custom Search sent text/html instead of JSON"},
		{name: "huge body", replies: []tooltest.Reply{{Status: 200, Body: make([]byte, 5<<20+1)}}, code: tool.CodeParse, contains: "size limit"},
	}
	runUpstreamCases(t, tests, googleConfig, "web_search_google", 4, false)
}

func TestGoogleTimeoutsAndNetworkErrors(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		up := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
		cfg := googleConfig(up)
		cfg.Timeout = 50 * time.Millisecond
		res := call(t, cfg, "web_search_google", `{"query":"go"}`)
		wantFailure(t, res, tool.CodeTimeout, true, true)
	})
	t.Run("slow body", func(t *testing.T) {
		up := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"items":[`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}})
		cfg := googleConfig(up)
		cfg.Timeout = 50 * time.Millisecond
		wantFailure(t, call(t, cfg, "web_search_google", `{"query":"go"}`), tool.CodeTimeout, true, true)
	})
	t.Run("client timeout", func(t *testing.T) {
		// The host's own http.Client timeout: its *url.Error text would print
		// the URL, key included.
		up := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
		cfg := googleConfig(up)
		cfg.HTTPClient = &http.Client{Timeout: 50 * time.Millisecond}
		wantFailure(t, call(t, cfg, "web_search_google", `{"query":"go"}`), tool.CodeTimeout, true, true)
	})
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cfg := Config{GoogleAPIKey: googleKey, GoogleEngineID: engineID, GoogleBaseURL: "http://" + addr}
		wantFailure(t, call(t, cfg, "web_search_google", `{"query":"go"}`), tool.CodeNetwork, true, true)
	})
}

// TestGoogleEnd: web_search_google works and says when it ends until
// google.EndOfService; after it, it is not offered unless turned on, and a
// call fails with UPSTREAM_GONE naming the alternative, without a request.
func TestGoogleEnd(t *testing.T) {
	before := beforeGoogleEnds
	after := func() time.Time { return google.EndOfService.Add(time.Hour) }
	declares := func(cfg Config) bool {
		for _, tl := range Tools(cfg) {
			if tl.Name() == "web_search_google" {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name      string
		now       func() time.Time
		mode      GoogleMode
		offered   bool
		gone      bool
		noticeHas string
	}{
		{"before, auto", before, GoogleAuto, true, false, "on 2027-01-01 (in 33 days)"},
		{"before, off", before, GoogleOff, false, false, "in 33 days"},
		{"after, auto", after, GoogleAuto, false, true, "ended on 2027-01-01"},
		{"after, on", after, GoogleOn, true, false, "ended on 2027-01-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Body: fixture(t, "google", "cse_what_is_semantic_kernel.json")})
			cfg := googleConfig(u)
			cfg.Now, cfg.Google = tt.now, tt.mode
			if got := declares(cfg); got != tt.offered {
				t.Errorf("declared = %v, want %v", got, tt.offered)
			}
			spec := Google(cfg).Spec()
			if !strings.Contains(spec.Notice, tt.noticeHas) || !strings.Contains(spec.Notice, "web_search_brave") || !strings.Contains(spec.Notice, "TOOLPORT_SEARXNG_URL") {
				t.Errorf("notice %q, want it to say %q and name web_search_brave and TOOLPORT_SEARXNG_URL", spec.Notice, tt.noticeHas)
			}
			reg := tool.NewRegistry(tool.WithRetryDelay(0))
			if err := reg.Register(Google(cfg)); err != nil {
				t.Fatal(err)
			}
			res := reg.Call(context.Background(), "web_search_google", json.RawMessage(`{"query":"semantic kernel"}`))
			if tt.gone {
				if res.OK() || res.Err.Code != tool.CodeUpstreamGone || !strings.Contains(res.Err.Message, "web_search_brave") ||
					!strings.Contains(res.Err.Message, "web_search_searxng") {
					t.Fatalf("got %s, want UPSTREAM_GONE naming web_search_brave and web_search_searxng", res.JSON)
				}
				if n := len(u.Requests()); n != 0 {
					t.Errorf("%d requests reached Google after its end", n)
				}
				return
			}
			if !res.OK() || len(u.Requests()) != 1 {
				t.Fatalf("got %s with %d requests, want results from one", res.JSON, len(u.Requests()))
			}
		})
	}
}

func TestParseGoogleMode(t *testing.T) {
	for in, want := range map[string]GoogleMode{"": GoogleAuto, "auto": GoogleAuto, " ON ": GoogleOn, "off": GoogleOff, "0": GoogleOff} {
		if got, err := ParseGoogleMode(in); err != nil || got != want {
			t.Errorf("ParseGoogleMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseGoogleMode("sometimes"); err == nil {
		t.Error("a bad value was accepted")
	}
}
