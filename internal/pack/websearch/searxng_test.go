package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// The searxng fixtures these tests replay are CONSTRUCTED, not recorded
// (searxng/testdata/SOURCES.md).

func searxngConfig(u *tooltest.Server) Config {
	return Config{SearxngURL: u.URL, Timeout: 5 * time.Second}
}

// searxngPages answers like SearXNG with synthetic pages of ten results:
// result i of page p is https://site<i%3>.example/p<p>-<i>. CONSTRUCTED in
// the documented shape, to count and page results.
func searxngPages(pages int) tooltest.Reply {
	return tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
		p := atoiDefault(r.URL.Query().Get("pageno"), 1)
		type res struct {
			URL     string `json:"url"`
			Title   string `json:"title"`
			Content string `json:"content"`
		}
		body := struct {
			Query   string `json:"query"`
			Results []res  `json:"results"`
		}{Query: r.URL.Query().Get("q"), Results: []res{}}
		if p <= pages {
			for i := range 10 {
				body.Results = append(body.Results, res{URL: fmt.Sprintf("https://site%d.example/p%d-%d", i%3, p, i), Title: fmt.Sprintf("T %d-%d", p, i), Content: "c"})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(body)
	}}
}

func TestSearxngOutputShape(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Body: fixture(t, "searxng", "constructed_search_general.json")})
	res := call(t, searxngConfig(up), "web_search_searxng",
		`{"query":"semantic kernel","count":3,"language":"en","safesearch":"strict","time_range":"month"}`)
	out := output(t, res)
	want := []Result{
		{Title: "Introduction to Semantic Kernel", URL: "https://learn.microsoft.com/en-us/semantic-kernel/overview/",
			Snippet: "Semantic Kernel is a lightweight, open-source development kit that lets you easily build AI agents and integrate the latest AI models into your C#, Python, or Java codebase."},
		{Title: "GitHub - microsoft/semantic-kernel: Integrate cutting-edge LLM technology quickly and easily into your apps",
			URL: "https://github.com/microsoft/semantic-kernel", Snippet: "Integrate cutting-edge LLM technology quickly and easily into your apps - microsoft/semantic-kernel"},
		{Title: "Semantic Kernel", URL: "https://devblogs.microsoft.com/semantic-kernel/", Snippet: "The latest news from the Semantic Kernel team for developers"},
	}
	if out.Count != 3 || len(out.Results) != 3 {
		t.Fatalf("out = %+v", out)
	}
	for i := range want {
		if out.Results[i] != want[i] {
			t.Errorf("result %d = %+v\nwant %+v", i, out.Results[i], want[i])
		}
	}
	// The same JSON keys as web_search_brave's.
	var raw map[string]any
	json.Unmarshal(res.JSON, &raw)
	data, _ := raw["data"].(map[string]any)
	if data == nil {
		data = raw
	}
	if _, ok := data["results"]; !ok {
		t.Errorf("no results key in %s", res.JSON)
	}
	q := up.Last(t).Query
	for k, v := range map[string]string{"q": "semantic kernel", "format": "json", "pageno": "1", "language": "en", "safesearch": "2", "time_range": "month", "categories": "general"} {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if strings.Contains(res.Summary, "outage") {
		t.Errorf("summary = %q", res.Summary)
	}
}

func TestSearxngDomainFilters(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Body: fixture(t, "searxng", "constructed_search_general.json")})
	out := output(t, call(t, searxngConfig(up), "web_search_searxng",
		`{"query":"semantic kernel","allowed_domains":["github.com","microsoft.com"],"blocked_domains":["learn.microsoft.com"]}`))
	var urls []string
	for _, r := range out.Results {
		urls = append(urls, r.URL)
	}
	// www.github.com is the same site as github.com, but another URL: both stay.
	want := "https://github.com/microsoft/semantic-kernel https://devblogs.microsoft.com/semantic-kernel/ https://www.github.com/microsoft/semantic-kernel"
	if strings.Join(urls, " ") != want {
		t.Errorf("urls = %v", urls)
	}
	res := call(t, searxngConfig(up), "web_search_searxng", `{"query":"semantic kernel","allowed_domains":["not a domain"]}`)
	wantFailure(t, res, tool.CodeValidation, false, false)
}

func TestSearxngPaging(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		pages     int
		wantPages []string
		wantCount int
	}{
		{"one page is enough", `{"query":"go","count":10,"page":2}`, 5, []string{"2"}, 10},
		{"count 20 takes two pages", `{"query":"go","count":20}`, 5, []string{"1", "2"}, 20},
		// Only site0 passes: 4 of each 10, so three pages for 10 results.
		{"filters fill from later pages", `{"query":"go","count":10,"allowed_domains":["site0.example"]}`, 5, []string{"1", "2", "3"}, 10},
		{"an empty page stops", `{"query":"go","count":20,"allowed_domains":["site0.example"]}`, 2, []string{"1", "2", "3"}, 8},
		{"extra pages are bounded", `{"query":"go","count":20,"allowed_domains":["site1.example"]}`, 10, []string{"1", "2", "3", "4"}, 12},
		{"page 10 is the last", `{"query":"go","count":20,"page":10}`, 10, []string{"10"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, searxngPages(tt.pages))
			out := output(t, call(t, searxngConfig(up), "web_search_searxng", tt.args))
			if got := queries(up, "pageno"); strings.Join(got, ",") != strings.Join(tt.wantPages, ",") {
				t.Errorf("pages = %v, want %v", got, tt.wantPages)
			}
			if out.Count != tt.wantCount {
				t.Errorf("count = %d, want %d", out.Count, tt.wantCount)
			}
		})
	}
	// An instance whose engines do not page sends page 1 again: one repeat
	// ends the paging.
	up := newUpstream(t, tooltest.Reply{Body: fixture(t, "searxng", "constructed_search_general.json")})
	if out := output(t, call(t, searxngConfig(up), "web_search_searxng", `{"query":"go","count":20}`)); out.Count != 4 {
		t.Errorf("count = %d, want 4", out.Count)
	}
	if got := queries(up, "pageno"); strings.Join(got, ",") != "1,2" {
		t.Errorf("pages = %v, want 1,2", got)
	}
	up = newUpstream(t, searxngPages(1))
	wantFailure(t, call(t, searxngConfig(up), "web_search_searxng", `{"query":"go","page":11}`), tool.CodeValidation, false, false)
}

func TestSearxngOutageIsNotAnEmptyAnswer(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Body: fixture(t, "searxng", "constructed_search_outage.json")})
	res := call(t, searxngConfig(up), "web_search_searxng", `{"query":"semantic kernel"}`)
	if out := output(t, res); out.Count != 0 {
		t.Fatalf("count = %d", out.Count)
	}
	for _, want := range []string{"0 results", "duckduckgo (timeout)", "brave (Suspended: too many requests)", "google (CAPTCHA)", "outage"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary %q lacks %q", res.Summary, want)
		}
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("%d requests: an empty page must stop the paging", n)
	}
	// Results the filters removed are not an outage, though one engine failed.
	up = newUpstream(t, tooltest.Reply{Body: fixture(t, "searxng", "constructed_search_general.json")})
	res = call(t, searxngConfig(up), "web_search_searxng", `{"query":"semantic kernel","allowed_domains":["example.org"]}`)
	if out := output(t, res); out.Count != 0 || strings.Contains(res.Summary, "outage") {
		t.Errorf("count %d, summary %q", out.Count, res.Summary)
	}
}

func TestSearxngUpstreamFailures(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	runUpstreamCases(t, []upstreamCase{
		// CONSTRUCTED: SearXNG's answer to format=json when search.formats lacks json.
		{name: "403 format disabled", replies: []tooltest.Reply{{Status: 403, Header: html, Body: []byte("<h1>Forbidden</h1>")}},
			code: tool.CodeConfig, contains: "search.formats", status: 403},
		// CONSTRUCTED: the limiter's refusal.
		{name: "429 limiter", replies: []tooltest.Reply{{Status: 429, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("Too Many Requests")}},
			code: tool.CodeRateLimit, retryable: true, retried: true, contains: "limiter", status: 429},
		{name: "502 then 200", replies: []tooltest.Reply{{Status: 502, Header: html, Body: []byte("<h1>Bad Gateway</h1>")}, {Body: fixture(t, "searxng", "constructed_search_general.json")}}},
		{name: "503 twice", replies: []tooltest.Reply{{Status: 503, Header: html}}, code: tool.CodeHTTP, retryable: true, retried: true, status: 503},
		{name: "404 wrong base URL", replies: []tooltest.Reply{{Status: 404, Header: html}}, code: tool.CodeConfig, contains: "TOOLPORT_SEARXNG_URL", status: 404},
		{name: "redirect to a login", replies: []tooltest.Reply{{Status: 302, Header: http.Header{"Location": {"/login"}}}}, code: tool.CodeConfig, contains: "redirected", status: 302},
		{name: "malformed JSON", replies: []tooltest.Reply{{Body: []byte(`{"results":[{"url":`)}}, code: tool.CodeParse, contains: "not valid JSON"},
		{name: "HTML with 200", replies: []tooltest.Reply{{Header: html, Body: []byte("<html></html>")}}, code: tool.CodeParse, contains: "text/html"},
	}, func(u *tooltest.Server) Config {
		cfg := searxngConfig(u)
		cfg.MaxExtraPages = -1 // one request per attempt: 4 results of count 10 would page on
		return cfg
	}, "web_search_searxng", 4, true)
}

func TestSearxngTimeout(t *testing.T) {
	// The handler holds each request until the client gives up.
	up := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
	cfg := searxngConfig(up)
	cfg.Timeout = 50 * time.Millisecond
	res := call(t, cfg, "web_search_searxng", `{"query":"go"}`)
	wantFailure(t, res, tool.CodeTimeout, true, true)
	if !strings.Contains(res.Err.Message, "SearXNG did not answer") {
		t.Errorf("message = %q", res.Err.Message)
	}
}

func TestSearxngIsDeclaredOnlyWithAURL(t *testing.T) {
	has := func(cfg Config) bool {
		for _, tl := range Tools(cfg) {
			if tl.Name() == "web_search_searxng" {
				return true
			}
		}
		return false
	}
	if has(Config{}) {
		t.Error("declared without TOOLPORT_SEARXNG_URL")
	}
	if !has(Config{SearxngURL: "http://localhost:8888"}) {
		t.Error("not declared with TOOLPORT_SEARXNG_URL")
	}
	tl := Searxng(Config{})
	if a := tl.Spec().Annotations; !a.ReadOnly || !a.OpenWorld {
		t.Errorf("annotations = %+v", a)
	}
	// Declared by hand without a URL, it says how to set one.
	reg := tool.NewRegistry()
	reg.Register(tl)
	res := reg.Call(context.Background(), "web_search_searxng", []byte(`{"query":"go"}`))
	if res.Err == nil || res.Err.Code != tool.CodeConfig || !strings.Contains(res.Err.Message, "TOOLPORT_SEARXNG_URL") {
		t.Errorf("call = %s", res.JSON)
	}
	// A bad URL: declared, Validate names it, calls fail with CONFIG_ERROR.
	bad := Config{SearxngURL: "localhost:8888"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "TOOLPORT_SEARXNG_URL") {
		t.Errorf("Validate = %v", err)
	}
	reg = tool.NewRegistry()
	reg.Register(Tools(bad)...)
	if res := reg.Call(context.Background(), "web_search_searxng", []byte(`{"query":"go"}`)); res.Err == nil || res.Err.Code != tool.CodeConfig {
		t.Errorf("call = %s", res.JSON)
	}
}
