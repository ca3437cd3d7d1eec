package websearch

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// mediaConfig declares every Brave search against u.
func mediaConfig(u *tooltest.Server) Config {
	cfg := braveConfig(u)
	cfg.BraveTools = []string{BraveWeb, BraveNews, BraveImages, BraveVideos}
	return cfg
}

func envelope(t *testing.T, res *tool.Result) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(res.JSON, &env); err != nil {
		t.Fatal(err)
	}
	return env
}

func TestNewsReturnsTheDocumentedExample(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "docs_example_news_search.json")})
	res := call(t, mediaConfig(up), "news_search_brave", `{"query":"space exploration"}`)
	if res.Err != nil {
		t.Fatalf("call failed: %s", res.JSON)
	}
	out := res.Value.(NewsOutput)
	want := []NewsResult{{
		Title: "New Developments in Space Exploration", URL: "https://news.example.com/space-exploration",
		Description: "Recent missions have advanced our understanding of...", Source: "news.example.com",
		Age: "2 hours ago", PageAge: "2026-01-15T14:30:00", Thumbnail: "https://imgs.search.brave.com/...",
	}}
	if !reflect.DeepEqual(out.Results, want) || out.Count != 1 {
		t.Errorf("output =\n%+v\nwant\n%+v", out, want)
	}
	if env := envelope(t, res); env["success"] != true || env["summary"] != `1 news result for "space exploration"` {
		t.Errorf("envelope = %v", env)
	}
	r := up.Requests()[0]
	if r.URL.Path != "/res/v1/news/search" || r.URL.RawQuery != "count=10&q=space+exploration" || r.Header.Get("X-Subscription-Token") != braveKey {
		t.Errorf("request = %s", r.URL)
	}
}

func TestImagesReturnsTheDocumentedExample(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "docs_example_images_search.json")})
	res := call(t, mediaConfig(up), "image_search_brave", `{"query":"mountain landscape"}`)
	if res.Err != nil {
		t.Fatalf("call failed: %s", res.JSON)
	}
	out := res.Value.(ImageOutput)
	want := []ImageResult{{
		Title: "Beautiful Mountain Landscape", URL: "https://example.com/mountain-photo",
		ImageURL: "https://example.com/images/mountain.jpg", Thumbnail: "https://imgs.search.brave.com/...",
		Source: "example.com", Width: 1920, Height: 1080, Confidence: "high",
	}}
	if !reflect.DeepEqual(out.Results, want) || out.Count != 1 {
		t.Errorf("output =\n%+v\nwant\n%+v", out, want)
	}
	if env := envelope(t, res); env["summary"] != `1 image for "mountain landscape"` {
		t.Errorf("envelope = %v", env)
	}
	if r := up.Requests()[0]; r.URL.Path != "/res/v1/images/search" || r.URL.RawQuery != "count=20&q=mountain+landscape" {
		t.Errorf("request = %s", r.URL)
	}
}

func TestVideosReturnsTheDocumentedExample(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "docs_example_videos_search.json")})
	res := call(t, mediaConfig(up), "video_search_brave", `{"query":"python tutorial","count":5}`)
	if res.Err != nil {
		t.Fatalf("call failed: %s", res.JSON)
	}
	out := res.Value.(VideoOutput)
	want := []VideoResult{{
		Title: "Python Tutorial for Beginners", URL: "https://www.youtube.com/watch?v=rfscVS0vtbw",
		Description: "Learn Python programming from scratch...", Duration: "03:45:00", Creator: "freeCodeCamp",
		Publisher: "YouTube", Views: 1523000, Thumbnail: "https://imgs.search.brave.com/...", Age: "February 12, 2025",
	}}
	if !reflect.DeepEqual(out.Results, want) || out.Count != 1 {
		t.Errorf("output =\n%+v\nwant\n%+v", out, want)
	}
	if env := envelope(t, res); env["summary"] != `1 video for "python tutorial"` || env["count"] != 1.0 {
		t.Errorf("envelope = %v", env)
	}
	if r := up.Requests()[0]; r.URL.Path != "/res/v1/videos/search" || r.URL.RawQuery != "count=5&q=python+tutorial" {
		t.Errorf("request = %s", r.URL)
	}
}

func TestMediaToolsMapEveryParameter(t *testing.T) {
	tests := []struct {
		tool, args string
		want       map[string]string
	}{
		{"news_search_brave", `{"query":"mars rover","count":25,"offset":50,"freshness":"pd","country":"gb","search_lang":"en","ui_lang":"en-gb","safesearch":"off","spellcheck":false}`,
			map[string]string{"q": "mars rover", "count": "25", "offset": "2", "freshness": "pd", "country": "GB", "search_lang": "en", "ui_lang": "en-GB", "safesearch": "off", "spellcheck": "false"}},
		{"video_search_brave", `{"query":"go generics","count":50,"offset":450,"freshness":"2025-01-01to2025-03-31","country":"ALL","search_lang":"pt-br","ui_lang":"pt-BR","safesearch":"strict","spellcheck":true}`,
			map[string]string{"q": "go generics", "count": "50", "offset": "9", "freshness": "2025-01-01to2025-03-31", "country": "ALL", "search_lang": "pt-br", "ui_lang": "pt-BR", "safesearch": "strict", "spellcheck": "true"}},
		{"image_search_brave", `{"query":"aurora","count":200,"country":"no","search_lang":"nb","safesearch":"off","spellcheck":false}`,
			map[string]string{"q": "aurora", "count": "200", "country": "NO", "search_lang": "nb", "safesearch": "off", "spellcheck": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{"type":"x","results":[]}`)})
			res := call(t, mediaConfig(up), tt.tool, tt.args)
			if res.Err != nil {
				t.Fatalf("call failed: %s", res.JSON)
			}
			q := up.Requests()[0].Query
			for k, v := range tt.want {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			if len(q) != len(tt.want) {
				t.Errorf("query = %v, want exactly %v", q, tt.want)
			}
		})
	}
}

func TestMediaToolsRejectBadInputBeforeAnyRequest(t *testing.T) {
	tests := []struct{ tool, args, wantMsg string }{
		{"news_search_brave", `{"query":"go","count":51}`, "count"},
		{"news_search_brave", `{"query":"go","count":0}`, "count"},
		{"news_search_brave", `{"query":"go","freshness":"last week"}`, "freshness"},
		{"news_search_brave", `{"query":"go","freshness":"2025-02-30to2025-03-01"}`, "not a valid date range"},
		{"news_search_brave", `{"query":"go","offset":5}`, "multiple of count"},
		{"news_search_brave", `{"query":"go","count":10,"offset":100}`, "below 100"},
		{"news_search_brave", `{"query":"go","ui_lang":"english"}`, "ui_lang"},
		{"news_search_brave", `{"query":"go","safesearch":"on"}`, "safesearch"},
		{"video_search_brave", `{"query":"go","count":51}`, "count"},
		{"video_search_brave", `{"query":"go","freshness":"2025-03-01to2025-02-01"}`, "after the end date"},
		{"video_search_brave", `{"query":"go","country":"Germany"}`, "country"},
		{"image_search_brave", `{"query":"go","count":201}`, "count"},
		{"image_search_brave", `{"query":"go","safesearch":"moderate"}`, "safesearch"},
		{"image_search_brave", `{"query":"go","offset":20}`, "offset"},
		{"image_search_brave", `{"query":"go","freshness":"pd"}`, "freshness"},
		{"image_search_brave", `{"query":"a"}`, "query"},
		{"image_search_brave", `{"query":"` + strings.Repeat("x ", 51) + `"}`, "too many words"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{}`)})
			res := call(t, mediaConfig(up), tt.tool, tt.args)
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

func TestMediaToolsUpstreamErrors(t *testing.T) {
	measured := http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0, 1977"}, "X-Ratelimit-Reset": {"1, 389223"}, "X-Ratelimit-Policy": {"1;w=1, 2000;w=2592000"}}
	withRetryAfter := measured.Clone()
	withRetryAfter.Set("Retry-After", "1")
	spent := http.Header{"X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"1, 0"}, "X-Ratelimit-Reset": {"1, 389223"}, "X-Ratelimit-Policy": {"1;w=1, 2000;w=2592000"}}
	// CONSTRUCTED: the documented OPTION_NOT_IN_PLAN answer (Brave's API
	// reference shows it with the "errors" array; live errors use "error").
	notInPlan := []byte(`{"type":"ErrorResponse","error":{"id":"5d832250-9396-4f6e-b84a-2a1fe524cd7d","status":400,"code":"OPTION_NOT_IN_PLAN","detail":"The option is not subscribed in the plan.","meta":{"component":"authentication"}},"time":1663072993}`)
	for _, tc := range []struct{ name, fixture string }{
		{"news_search_brave", "docs_example_news_search.json"},
		{"image_search_brave", "docs_example_images_search.json"},
		{"video_search_brave", "docs_example_videos_search.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok := fixture(t, "brave", tc.fixture)
			tests := []upstreamCase{
				{name: "401 plain", replies: []tooltest.Reply{{Status: 401, Body: []byte("Unauthorized"), Header: http.Header{"Content-Type": {"text/plain"}}}},
					code: tool.CodeAuthInvalid, status: 401},
				{name: "422 token invalid", replies: []tooltest.Reply{{Status: 422, Body: fixture(t, "brave", "docs_example_422_subscription_token_invalid.json")}},
					code: tool.CodeAuthInvalid, contains: "SUBSCRIPTION_TOKEN_INVALID", status: 422},
				{name: "422 validation", replies: []tooltest.Reply{{Status: 422, Body: fixture(t, "brave", "error_422_validation.json")}},
					code: tool.CodeAPI, contains: "Unable to validate request parameter(s)", status: 422},
				{name: "400 not in plan", replies: []tooltest.Reply{{Status: 400, Body: notInPlan}},
					code: tool.CodeAuthInvalid, contains: "does not include " + tc.name, status: 400},
				{name: "429 with headers and Retry-After, then success", replies: []tooltest.Reply{
					{Status: 429, Header: withRetryAfter, Body: fixture(t, "brave", "error_429_rate_limited.json")},
					{Status: 200, Body: ok}}},
				{name: "429 twice", replies: []tooltest.Reply{{Status: 429, Header: withRetryAfter, Body: fixture(t, "brave", "error_429_rate_limited.json")}},
					code: tool.CodeRateLimit, retryable: true, retried: true, contains: "1 request(s) per second", status: 429},
				{name: "429 quota spent", replies: []tooltest.Reply{{Status: 429, Header: spent, Body: fixture(t, "brave", "docs_example_429_quota_limited.json")}},
					code: tool.CodeRateLimit, message: "Rate limit exceeded. You've used your free search quota (2,000/month).", status: 429},
				{name: "503 then success", replies: []tooltest.Reply{{Status: 503, Body: []byte("busy")}, {Status: 200, Body: ok}}},
				{name: "502 twice", replies: []tooltest.Reply{{Status: 502}},
					code: tool.CodeHTTP, retryable: true, retried: true, contains: "HTTP 502", status: 502},
				{name: "malformed JSON", replies: []tooltest.Reply{{Status: 200, Body: []byte(`{"type":"x","results":[{"title":`)}},
					code: tool.CodeParse, message: "Brave Search sent a response that is not valid JSON"},
				{name: "wrong shape", replies: []tooltest.Reply{{Status: 200, Body: []byte(`{"type":"x","results":{"title":"t"}}`)}},
					code: tool.CodeParse, message: "Brave Search sent a response that is not valid JSON"},
				{name: "HTML page", replies: []tooltest.Reply{{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>Just a moment...</html>")}},
					code: tool.CodeParse, message: "Brave Search sent text/html instead of JSON"},
			}
			runUpstreamCases(t, tests, mediaConfig, tc.name, 1, true)
		})
	}
}

// CONSTRUCTED bodies from Brave's documented response fields: the docs
// examples hold one clean result each, without highlighting, repeats, more
// results than asked for, a spellchecked query or missing sub-objects.
func TestMediaToolsCleanConstructedAnswers(t *testing.T) {
	t.Run("news: highlighting, repeats, count and the altered query", func(t *testing.T) {
		body := `{"type":"news","query":{"original":"gopher conf","altered":"gophercon"},"results":[
			{"type":"news_result","title":"<strong>GopherCon</strong> &amp; friends","url":"https://a.example/1","description":"It&#x27;s <strong>on</strong>","meta_url":{"netloc":"a.example"}},
			{"type":"news_result","title":"repeat","url":"https://a.example/1"},
			{"type":"news_result","title":"no url","url":""},
			{"type":"news_result","title":"two","url":"https://b.example/2"},
			{"type":"news_result","title":"three","url":"https://c.example/3"}]}`
		up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(body)})
		res := call(t, mediaConfig(up), "news_search_brave", `{"query":"gopher conf","count":2}`)
		out := res.Value.(NewsOutput)
		want := []NewsResult{
			{Title: "GopherCon & friends", URL: "https://a.example/1", Description: "It's on", Source: "a.example"},
			{Title: "two", URL: "https://b.example/2"},
		}
		if !reflect.DeepEqual(out.Results, want) || out.Count != 2 {
			t.Errorf("results = %+v", out.Results)
		}
		if res.Summary != `2 news results for "gopher conf" (Brave searched for "gophercon")` {
			t.Errorf("summary = %q", res.Summary)
		}
	})
	t.Run("images: no properties, null sizes, no page URL", func(t *testing.T) {
		body := `{"type":"images","query":{"original":"x","altered":null},"results":[
			{"type":"image_result","title":"bare","url":"https://p.example/","meta_url":{"hostname":"p.example"}},
			{"type":"image_result","title":"only image","url":"","properties":{"url":"https://i.example/x.png","width":null,"height":null}},
			{"type":"image_result","title":"nothing","url":"","properties":{"url":""}},
			{"type":"image_result","title":"repeat","url":"https://p.example/"}]}`
		up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(body)})
		out := call(t, mediaConfig(up), "image_search_brave", `{"query":"xy"}`).Value.(ImageOutput)
		want := []ImageResult{
			{Title: "bare", URL: "https://p.example/", Source: "p.example"},
			{Title: "only image", ImageURL: "https://i.example/x.png"},
		}
		if !reflect.DeepEqual(out.Results, want) {
			t.Errorf("results = %+v", out.Results)
		}
	})
	t.Run("videos: no video block, author instead of creator, empty answer", func(t *testing.T) {
		body := `{"type":"videos","results":[
			{"type":"video_result","title":"plain","url":"https://v.example/1"},
			{"type":"video_result","title":"by author","url":"https://v.example/2","video":{"views":null,"author":{"name":"Ann"}}}]}`
		up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(body)})
		out := call(t, mediaConfig(up), "video_search_brave", `{"query":"xy"}`).Value.(VideoOutput)
		want := []VideoResult{{Title: "plain", URL: "https://v.example/1"}, {Title: "by author", URL: "https://v.example/2", Creator: "Ann"}}
		if !reflect.DeepEqual(out.Results, want) {
			t.Errorf("results = %+v", out.Results)
		}
		up = newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{"type":"videos"}`)})
		res := call(t, mediaConfig(up), "video_search_brave", `{"query":"xy"}`)
		if !strings.Contains(string(res.JSON), `"results":[]`) || res.Summary != `0 videos for "xy"` {
			t.Errorf("empty answer: %s", res.JSON)
		}
	})
}

func TestMediaToolsWithoutAKey(t *testing.T) {
	for _, name := range []string{"news_search_brave", "image_search_brave", "video_search_brave"} {
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t, tooltest.Reply{Status: 200, Body: []byte(`{}`)})
			cfg := mediaConfig(up)
			cfg.BraveAPIKey = ""
			res := call(t, cfg, name, `{"query":"semantic kernel"}`)
			wantFailure(t, res, tool.CodeAuthMissing, false, false)
			var data map[string]string
			if err := json.Unmarshal([]byte(res.Err.Event.DataJSON), &data); err != nil || data["tool"] != name {
				t.Errorf("data_json = %s (%v)", res.Err.Event.DataJSON, err)
			}
			if !strings.Contains(res.Err.Message, "BRAVE_API_KEY") || len(up.Requests()) != 0 {
				t.Errorf("message %q, %d requests", res.Err.Message, len(up.Requests()))
			}
		})
	}
}

func TestMediaSchemas(t *testing.T) {
	tests := []struct {
		tool     *tool.Tool
		maxCount float64
		safe     []any
		absent   []string
	}{
		{News(Config{}), 50, []any{"off", "moderate", "strict"}, nil},
		{Videos(Config{}), 50, []any{"off", "moderate", "strict"}, nil},
		{Images(Config{}), 200, []any{"off", "strict"}, []string{"offset", "freshness", "ui_lang"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Name(), func(t *testing.T) {
			d := definition(t, tt.tool)
			p := d.Parameters.Properties
			if p["count"]["maximum"] != tt.maxCount || p["count"]["minimum"] != 1.0 {
				t.Errorf("count = %v", p["count"])
			}
			if !reflect.DeepEqual(p["safesearch"]["enum"], tt.safe) {
				t.Errorf("safesearch = %v", p["safesearch"])
			}
			for _, name := range tt.absent {
				if _, ok := p[name]; ok {
					t.Errorf("%s is published, but Brave's endpoint has no such parameter", name)
				}
			}
			if !slices.Equal(d.Parameters.Required, []string{"query"}) || !strings.Contains(d.Description, "Brave Search API") {
				t.Errorf("required %v, description %q", d.Parameters.Required, d.Description)
			}
		})
	}
}

func TestParseBraveTools(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"web", []string{"web"}, ""},
		{"news, web", []string{"web", "news"}, ""},
		{"WEB,News,image video", []string{"web", "news", "images", "videos"}, ""},
		{"all", []string{"web", "news", "images", "videos", "local", "llm_context", "answers"}, ""},
		{"videos,videos", []string{"videos"}, ""},
		{"news_search_brave", []string{"news"}, ""},
		{"none", []string{}, ""},
		{"none,web", nil, "cannot be combined"},
		{"web,newz", nil, `unknown Brave search "newz"`},
		{" , ", nil, "empty list"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBraveTools(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) || got == nil {
				t.Errorf("got %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

func toolNames(tools []*tool.Tool) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	return names
}

func TestBraveToolSelection(t *testing.T) {
	dir := t.TempDir()
	newConfig := func(env map[string]string) Config {
		c, err := config.New(func(k string) string { return env[k] }, dir)
		if err != nil {
			t.Fatal(err)
		}
		return ConfigFromEnv(c)
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"default: web search only, which every plan includes", nil, []string{"web_search_brave", "web_search_google"}},
		{"web and news", map[string]string{"TOOLPORT_BRAVE_TOOLS": "web,news"}, []string{"web_search_brave", "news_search_brave", "web_search_google"}},
		{"all", map[string]string{"TOOLPORT_BRAVE_TOOLS": "all"}, []string{"web_search_brave", "news_search_brave", "image_search_brave", "video_search_brave",
			"local_search_brave", "llm_context_brave", "answer_brave", "web_search_google"}},
		{"images without web", map[string]string{"TOOLPORT_BRAVE_TOOLS": "images"}, []string{"image_search_brave", "web_search_google"}},
		{"none", map[string]string{"TOOLPORT_BRAVE_TOOLS": "none"}, []string{"web_search_google"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := newConfig(tt.env)
			if got := toolNames(Tools(cfg)); !slices.Equal(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate = %v", err)
			}
		})
	}

	t.Run("from the credentials file", func(t *testing.T) {
		creds := dir + "/credentials.json"
		if err := writeFile(creds, `{"web_search":{"brave":{"api_key":"k","tools":"videos, web"}}}`); err != nil {
			t.Fatal(err)
		}
		cfg := newConfig(map[string]string{"TOOLPORT_CREDENTIALS": creds})
		if got := toolNames(Tools(cfg)); !slices.Equal(got, []string{"web_search_brave", "video_search_brave", "web_search_google"}) {
			t.Errorf("tools = %v", got)
		}
		cfg = newConfig(map[string]string{"TOOLPORT_CREDENTIALS": creds, "TOOLPORT_BRAVE_TOOLS": "news"})
		if got := toolNames(Tools(cfg)); !slices.Equal(got, []string{"news_search_brave", "web_search_google"}) {
			t.Errorf("the environment does not win: %v", got)
		}
	})

	t.Run("a bad value declares the default and every call says why", func(t *testing.T) {
		up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
		cfg := newConfig(map[string]string{"TOOLPORT_BRAVE_TOOLS": "web,newz", "BRAVE_API_KEY": braveKey, "BRAVE_API_BASE_URL": up.URL})
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "TOOLPORT_BRAVE_TOOLS") {
			t.Errorf("Validate = %v", err)
		}
		if got := toolNames(Tools(cfg)); !slices.Equal(got, []string{"web_search_brave", "web_search_google"}) {
			t.Errorf("tools = %v", got)
		}
		res := call(t, cfg, "web_search_brave", `{"query":"semantic kernel"}`)
		wantFailure(t, res, tool.CodeConfig, false, false)
		if !strings.Contains(res.Err.Message, `unknown Brave search "newz"`) || len(up.Requests()) != 0 {
			t.Errorf("message %q, %d requests", res.Err.Message, len(up.Requests()))
		}
	})

	t.Run("a Config built in code with an unknown name", func(t *testing.T) {
		cfg := Config{BraveTools: []string{"web", "maps"}}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"maps"`) {
			t.Errorf("Validate = %v", err)
		}
		if got := toolNames(Tools(cfg)); !slices.Equal(got, []string{"web_search_brave", "web_search_google"}) {
			t.Errorf("tools = %v", got)
		}
	})
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
