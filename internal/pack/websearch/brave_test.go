package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

func TestBraveReturnsRecordedResultsAsPlainText(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
	res := call(t, braveConfig(up), "web_search_brave", `{"query":"What is Semantic Kernel"}`)
	out := output(t, res)
	if out.Count != 10 || len(out.Results) != 10 {
		t.Fatalf("count = %d, %d results", out.Count, len(out.Results))
	}
	first := out.Results[0]
	want := Result{
		Title:   "Introduction to Semantic Kernel | Microsoft Learn",
		URL:     "https://learn.microsoft.com/en-us/semantic-kernel/overview/",
		Snippet: "Semantic Kernel combines prompts with existing APIs to perform actions. By describing your existing code to AI models, they’ll be called to address requests. When a request is made the model calls a function, and Semantic Kernel is the middleware translating the model's request to a function ...",
	}
	if first != want {
		t.Errorf("first result =\n%+v\nwant\n%+v", first, want)
	}
	if got := out.Results[7].Snippet; got != "This is a Semantic Kernel's book for beginners . Contribute to microsoft/SemanticKernelCookBook development by creating an account on GitHub." {
		t.Errorf("result 8 snippet = %q", got)
	}
	for _, bad := range []string{"<strong>", "</strong>", "&#x27;", "&quot;", "&amp;"} {
		if bytes.Contains(res.JSON, []byte(bad)) {
			t.Errorf("the result JSON still holds %q", bad)
		}
	}
	var env map[string]any
	if err := json.Unmarshal(res.JSON, &env); err != nil {
		t.Fatal(err)
	}
	if env["success"] != true || env["count"] != 10.0 || env["summary"] != `10 results for "What is Semantic Kernel"` {
		t.Errorf("envelope = %v", env)
	}
	if _, ok := env["durationMs"]; !ok {
		t.Error("no durationMs")
	}
	r := up.Requests()[0]
	if r.URL.Path != "/res/v1/web/search" || r.URL.RawQuery != "count=10&q=What+is+Semantic+Kernel" {
		t.Errorf("request = %s", r.URL)
	}
	if r.Header.Get("X-Subscription-Token") != braveKey {
		t.Errorf("token header = %q", r.Header.Get("X-Subscription-Token"))
	}
}

func TestBraveMapsOptionalParameters(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{"type":"search"}`)})
	res := call(t, braveConfig(up), "web_search_brave",
		`{"query":"go 1.26","count":5,"freshness":"2025-01-01to2025-06-30","country":"de","search_lang":"de","safesearch":"strict"}`)
	output(t, res)
	q := up.Requests()[0].Query
	want := map[string]string{"q": "go 1.26", "count": "5", "freshness": "2025-01-01to2025-06-30", "country": "DE", "search_lang": "de", "safesearch": "strict"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if q.Has("offset") {
		t.Error("offset 0 was sent")
	}
}

func TestBraveRejectsBadInputBeforeAnyRequest(t *testing.T) {
	tests := []struct{ name, args, wantMsg string }{
		{"short query", `{"query":"a"}`, "query"},
		{"blank query", `{"query":"   "}`, "query must not be empty"},
		{"count too big", `{"query":"go","count":21}`, "count"},
		{"negative offset", `{"query":"go","offset":-1}`, "offset"},
		{"offset past page 9", `{"query":"go","count":20,"offset":200}`, "offset must be below 200"},
		{"freshness shape", `{"query":"go","freshness":"last week"}`, "freshness"},
		{"freshness dates", `{"query":"go","freshness":"2025-02-30to2025-03-01"}`, "not a valid date range"},
		{"freshness order", `{"query":"go","freshness":"2025-03-01to2025-02-01"}`, "after the end date"},
		{"safesearch", `{"query":"go","safesearch":"on"}`, "safesearch"},
		{"country", `{"query":"go","country":"Germany"}`, "country"},
		{"domain", `{"query":"go","allowed_domains":["not a domain"]}`, "allowed_domains[0]"},
		{"too long", `{"query":"` + strings.Repeat("x", 401) + `"}`, "at most 400 characters"},
		{"unknown field", `{"query":"go","text_decorations":true}`, "text_decorations"},
		{"result_filter value", `{"query":"go","result_filter":["web","summarizer"]}`, "result_filter"},
		{"too many goggles", `{"query":"go","goggles":["a","b","c","d","e","f"]}`, "goggles"},
		{"empty goggle", `{"query":"go","goggles":[""]}`, "goggles"},
		{"blank goggle", `{"query":"go","goggles":["  "]}`, "goggles[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{}`)})
			res := call(t, braveConfig(up), "web_search_brave", tt.args)
			wantFailure(t, res, tool.CodeValidation, false, false)
			if !strings.Contains(res.Err.Message, tt.wantMsg) {
				t.Errorf("message %q lacks %q", res.Err.Message, tt.wantMsg)
			}
			if n := len(up.Requests()); n != 0 {
				t.Errorf("%d requests reached Brave", n)
			}
		})
	}
}

func TestBraveOffsetIsSentAsAPageIndex(t *testing.T) {
	urlOf := func(i int) string { return fmt.Sprintf("https://site%d.example/", i) }
	tests := []struct {
		args      string
		wantPages []string // Brave's offset per request ("" = not sent)
		wantFirst int      // rank of the first result
		wantCount int
	}{
		{`{"query":"go"}`, []string{""}, 0, 10},
		{`{"query":"go","offset":10}`, []string{"1"}, 10, 10},
		{`{"query":"go","count":20,"offset":180}`, []string{"9"}, 180, 20},
		{`{"query":"go","count":5,"offset":7}`, []string{"1", "2"}, 7, 5}, // skip 2 of page 1, then page 2
		{`{"query":"go","count":20,"offset":199}`, []string{"9"}, 199, 1}, // the last reachable result
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			up := newUpstream(t, bravePages(urlOf, nil))
			out := output(t, call(t, braveConfig(up), "web_search_brave", tt.args))
			if got := queries(up, "offset"); !slices.Equal(got, tt.wantPages) {
				t.Errorf("offsets sent = %q, want %q", got, tt.wantPages)
			}
			if out.Count != tt.wantCount || out.Results[0].URL != urlOf(tt.wantFirst) {
				t.Errorf("got %d results from %s, want %d from %s", out.Count, out.Results[0].URL, tt.wantCount, urlOf(tt.wantFirst))
			}
			for i, r := range out.Results {
				if r.URL != urlOf(tt.wantFirst+i) {
					t.Errorf("result %d = %s, want %s", i, r.URL, urlOf(tt.wantFirst+i))
				}
			}
		})
	}
}

func TestBraveDomainFiltersFetchFurtherPages(t *testing.T) {
	// Every third result is on good.example (alternating www. and a subdomain),
	// every fifth on bad.example.
	urlOf := func(i int) string {
		switch {
		case i%3 == 0 && i%2 == 0:
			return fmt.Sprintf("https://www.good.example/%d", i)
		case i%3 == 0:
			return fmt.Sprintf("https://docs.GOOD.example/%d", i)
		case i%5 == 0:
			return fmt.Sprintf("https://bad.example/%d", i)
		}
		return fmt.Sprintf("https://notgood.example/%d", i)
	}
	tests := []struct {
		name      string
		args      string
		wantPages []string
		wantURLs  []int // ranks
	}{
		{"allowed fills count from 3 pages", `{"query":"go","count":5,"allowed_domains":["good.example"]}`,
			[]string{"", "1", "2"}, []int{0, 3, 6, 9, 12}},
		{"www. and case ignored", `{"query":"go","count":2,"allowed_domains":["WWW.Good.Example"]}`,
			[]string{"", "1"}, []int{0, 3}},
		{"blocked refills", `{"query":"go","count":5,"blocked_domains":["good.example","bad.example"]}`,
			[]string{"", "1"}, []int{1, 2, 4, 7, 8}},
		{"extra pages are bounded", `{"query":"go","count":5,"allowed_domains":["nowhere.example"]}`,
			[]string{"", "1", "2", "3"}, nil},
		{"no page after 9", `{"query":"go","count":10,"offset":80,"allowed_domains":["nowhere.example"]}`,
			[]string{"8", "9"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, bravePages(urlOf, nil))
			out := output(t, call(t, braveConfig(up), "web_search_brave", tt.args))
			if got := queries(up, "offset"); !slices.Equal(got, tt.wantPages) {
				t.Errorf("offsets sent = %q, want %q", got, tt.wantPages)
			}
			var got []int
			for _, r := range out.Results {
				var rank int
				fmt.Sscanf(r.URL[strings.LastIndexByte(r.URL, '/')+1:], "%d", &rank)
				got = append(got, rank)
			}
			if !slices.Equal(got, tt.wantURLs) || out.Count != len(tt.wantURLs) {
				t.Errorf("ranks = %v (count %d), want %v", got, out.Count, tt.wantURLs)
			}
		})
	}
}

func TestBraveDomainFilterOnRecordedResults(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
	cfg := braveConfig(up)
	cfg.MaxExtraPages = -1
	out := output(t, call(t, cfg, "web_search_brave", `{"query":"sk","blocked_domains":["medium.com","https://github.com/microsoft"]}`))
	for _, r := range out.Results {
		if strings.Contains(r.URL, "medium.com") || strings.Contains(r.URL, "github.com") {
			t.Errorf("blocked result kept: %s", r.URL)
		}
	}
	if out.Count != 6 { // 10 minus 2 on medium.com (one a subdomain) and 2 on github.com
		t.Errorf("count = %d, want 6", out.Count)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("%d requests with MaxExtraPages < 0", n)
	}
}

func TestBraveStopsWhenNoMoreResults(t *testing.T) {
	body := []byte(`{"type":"search","query":{"original":"x","more_results_available":false},"web":{"results":[{"title":"a","url":"https://a.example/","description":"d"}]}}`)
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: body})
	out := output(t, call(t, braveConfig(up), "web_search_brave", `{"query":"xx","allowed_domains":["a.example"]}`))
	if out.Count != 1 || len(up.Requests()) != 1 {
		t.Errorf("count %d after %d requests", out.Count, len(up.Requests()))
	}
}

func TestBraveHonoursThePerSecondWindowBetweenPages(t *testing.T) {
	urlOf := func(i int) string { return fmt.Sprintf("https://site%d.example/", i) }
	spent := http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0, 1500"}, "X-Ratelimit-Reset": {"1, 86400"}, "X-Ratelimit-Policy": {"1;w=1, 2000;w=2592000"}}
	args := `{"query":"go","count":5,"allowed_domains":["site3.example","site7.example"]}`

	t.Run("a reset longer than MaxRateWait ends the paging", func(t *testing.T) {
		up := newUpstream(t, bravePages(urlOf, spent))
		out := output(t, call(t, braveConfig(up), "web_search_brave", args)) // MaxRateWait < 0
		if len(up.Requests()) != 1 || out.Count != 1 {
			t.Errorf("%d requests, %d results; want 1 and the one result of page 0", len(up.Requests()), out.Count)
		}
	})
	t.Run("a short reset is waited for", func(t *testing.T) {
		up := newUpstream(t, bravePages(urlOf, spent))
		cfg := braveConfig(up)
		cfg.MaxRateWait = 0 // the default, 2 s: this subtest waits Brave's 1 s window once
		cfg.MaxExtraPages = 1
		out := output(t, call(t, cfg, "web_search_brave", args))
		if len(up.Requests()) != 2 || out.Count != 2 {
			t.Errorf("%d requests, %d results; want 2 and 2", len(up.Requests()), out.Count)
		}
	})
}

func TestBraveFurtherPageFailureKeepsResults(t *testing.T) {
	urlOf := func(i int) string { return fmt.Sprintf("https://site%d.example/", i) }
	up := newUpstream(t, bravePages(urlOf, nil), tooltest.Reply{Status: 429, Body: fixture(t, "brave", "error_429_rate_limited.json")})
	out := output(t, call(t, braveConfig(up), "web_search_brave", `{"query":"go","count":5,"allowed_domains":["site1.example"]}`))
	if out.Count != 1 || len(up.Requests()) != 2 {
		t.Errorf("%d results after %d requests", out.Count, len(up.Requests()))
	}
}

func TestBraveUpstreamErrors(t *testing.T) {
	measured := http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0, 1977"}, "X-Ratelimit-Reset": {"1, 389223"}, "X-Ratelimit-Policy": {"1;w=1, 2000;w=2592000"}}
	docs := http.Header{"X-Ratelimit-Limit": {"1, 15000"}, "X-Ratelimit-Remaining": {"1, 0"}, "X-Ratelimit-Reset": {"1, 1419704"}}
	tests := []upstreamCase{
		{name: "422 token invalid", replies: []tooltest.Reply{{Status: 422, Body: fixture(t, "brave", "docs_example_422_subscription_token_invalid.json")}},
			code: tool.CodeAuthInvalid, contains: "SUBSCRIPTION_TOKEN_INVALID", status: 422},
		{name: "422 validation", replies: []tooltest.Reply{{Status: 422, Body: fixture(t, "brave", "error_422_validation.json")}},
			code: tool.CodeAPI, contains: "Unable to validate request parameter(s)", status: 422},
		// CONSTRUCTED: the documented OPTION_NOT_IN_PLAN answer (an option
		// such as extra_snippets the key's plan lacks); mapped as the media
		// tools map it.
		{name: "400 not in plan", replies: []tooltest.Reply{{Status: 400, Body: []byte(`{"type":"ErrorResponse","error":{"id":"5d832250-9396-4f6e-b84a-2a1fe524cd7d","status":400,"code":"OPTION_NOT_IN_PLAN","detail":"The option is not subscribed in the plan.","meta":{"component":"authentication"}},"time":1663072993}`)}},
			code: tool.CodeAuthInvalid, contains: "does not include web_search_brave", status: 400},
		{name: "404 no subscription", replies: []tooltest.Reply{{Status: 404, Body: fixture(t, "brave", "docs_example_404_subscription_not_found.json")}},
			code: tool.CodeAuthInvalid, contains: "SUBSCRIPTION_NOT_FOUND", status: 404},
		{name: "401 plain", replies: []tooltest.Reply{{Status: 401, Body: []byte("Unauthorized"), Header: http.Header{"Content-Type": {"text/plain"}}}},
			code: tool.CodeAuthInvalid, status: 401},
		{name: "429 quota, free plan", replies: []tooltest.Reply{{Status: 429, Body: fixture(t, "brave", "docs_example_429_quota_limited.json")}},
			code: tool.CodeRateLimit, message: "Rate limit exceeded. You've used your free search quota (2,000/month).", status: 429},
		{name: "429 quota, headers say 15000", replies: []tooltest.Reply{{Status: 429, Header: docs, Body: fixture(t, "brave", "docs_example_429_quota_limited.json")}},
			code: tool.CodeRateLimit, message: "Rate limit exceeded. You've used your search quota (15,000/month).", status: 429},
		{name: "429 per-second without Retry-After", replies: []tooltest.Reply{
			{Status: 429, Body: fixture(t, "brave", "docs_example_429_rate_limited.json")},
			{Status: 429, Body: fixture(t, "brave", "docs_example_429_rate_limited.json")}},
			code: tool.CodeRateLimit, retryable: true, retried: true, contains: "1 request(s) per second", status: 429},
		{name: "429 then success, Retry-After from the per-second reset", replies: []tooltest.Reply{
			{Status: 429, Header: measured, Body: fixture(t, "brave", "error_429_rate_limited.json")},
			{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")}}},
		{name: "429 with a long Retry-After is not waited for", replies: []tooltest.Reply{
			{Status: 429, Header: http.Header{"Retry-After": {"3600"}}, Body: fixture(t, "brave", "docs_example_429_rate_limited.json")}},
			code: tool.CodeRateLimit, retryable: true, retried: false, status: 429},
		{name: "503 then success", replies: []tooltest.Reply{{Status: 503, Body: []byte("upstream busy")}, {Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")}}},
		{name: "502 twice", replies: []tooltest.Reply{{Status: 502, Body: nil}},
			code: tool.CodeHTTP, retryable: true, retried: true, contains: "HTTP 502", status: 502},
		{name: "500 is not retried", replies: []tooltest.Reply{{Status: 500, Body: []byte(`{"type":"ErrorResponse","error":{"code":"INTERNAL","detail":"oops"}}`)}},
			code: tool.CodeHTTP, contains: "INTERNAL: oops", status: 500},
		{name: "malformed JSON", replies: []tooltest.Reply{{Status: 200, Body: []byte(`{"type":"search","web":{"results":[{"title":`)}},
			code: tool.CodeParse, message: "Brave Search sent a response that is not valid JSON"},
		{name: "HTML page", replies: []tooltest.Reply{{Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte("<html>Just a moment...</html>")}},
			code: tool.CodeParse, message: "Brave Search sent text/html; charset=utf-8 instead of JSON"},
		{name: "huge body", replies: []tooltest.Reply{{Status: 200, Body: bytes.Repeat([]byte("["), 5<<20+1)}},
			code: tool.CodeParse, contains: "larger than the size limit"},
	}
	runUpstreamCases(t, tests, braveConfig, "web_search_brave", 10, true)
}

func TestBraveEmptyAnswers(t *testing.T) {
	for name, body := range map[string][]byte{
		"no web key": []byte(`{"type":"search","query":{"original":"zzqx"},"mixed":{"type":"mixed","main":[]}}`),
		"BOM":        append([]byte("\xef\xbb\xbf"), `{"type":"search","web":{"type":"search","results":[]}}`...),
	} {
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: body})
			res := call(t, braveConfig(up), "web_search_brave", `{"query":"zzqx"}`)
			if out := output(t, res); out.Count != 0 || out.Results == nil {
				t.Errorf("output = %+v", out)
			}
			if !bytes.Contains(res.JSON, []byte(`"results":[]`)) {
				t.Errorf("JSON = %s", res.JSON)
			}
		})
	}
}

func TestBraveTimeouts(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	slowBody := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"search","web":{"results":[`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	for name, h := range map[string]func(http.ResponseWriter, *http.Request){"no answer": hang, "slow body": slowBody} {
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Handle: h})
			cfg := braveConfig(up)
			cfg.Timeout = 50 * time.Millisecond
			res := call(t, cfg, "web_search_brave", `{"query":"go"}`)
			wantFailure(t, res, tool.CodeTimeout, true, true)
			if res.Err.Message != "Brave Search did not answer within 50ms" {
				t.Errorf("message = %q", res.Err.Message)
			}
		})
	}
}

func TestBraveCallerCancels(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(Tools(braveConfig(up))...)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := reg.Call(ctx, "web_search_brave", []byte(`{"query":"go"}`))
	assertNoSecret(t, res)
	if res.Err == nil || (res.Err.Code != tool.CodeTimeout && res.Err.Code != tool.CodeCanceled) || res.Retried {
		t.Fatalf("res = %s", res.JSON)
	}
}

func TestBraveNetworkError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res := call(t, Config{BraveAPIKey: braveKey, BraveBaseURL: "http://" + addr, Timeout: 5 * time.Second}, "web_search_brave", `{"query":"go"}`)
	wantFailure(t, res, tool.CodeNetwork, true, true)
	if !strings.HasPrefix(res.Err.Message, "Brave Search: network error") {
		t.Errorf("message = %q", res.Err.Message)
	}
}
