package websearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/tooltest"
)

// braveBlocksBody is CONSTRUCTED from Brave's Web Search API reference: the
// recording (web_search_what_is_semantic_kernel.json) holds only the query,
// mixed and web blocks. Highlighting and entities are as live answers carry
// them; the faq block has more items than the tool keeps, and one of each
// block is on blocked.example.
func braveBlocksBody(t *testing.T) []byte {
	t.Helper()
	faq := []map[string]any{}
	for i := range 7 {
		faq = append(faq, map[string]any{"question": fmt.Sprintf("Q<strong>%d</strong>?", i), "answer": "A &amp; " + strings.Repeat("x", 600),
			"title": "FAQ", "url": fmt.Sprintf("https://faq%d.example/", i)})
	}
	faq[1]["url"] = "https://blocked.example/faq"
	body := map[string]any{
		"type":  "search",
		"query": map[string]any{"original": "go generics", "more_results_available": true},
		"web": map[string]any{"type": "search", "results": []any{
			map[string]any{"title": "Go <strong>generics</strong>", "url": "https://go.dev/doc/tutorial/generics", "description": "Tutorial",
				"extra_snippets": []string{"Type parameters &amp; constraints.", "", strings.Repeat("y", 400), "4", "5", "6", "7"}},
		}},
		"faq": map[string]any{"type": "faq", "results": faq},
		"discussions": map[string]any{"type": "search", "results": []any{
			map[string]any{"type": "discussion", "title": "Generics in <strong>Go</strong>", "url": "https://www.reddit.com/r/golang/comments/abc/",
				"description": "thread", "age": "2 years ago",
				"data": map[string]any{"forum_name": "r/golang", "num_answers": 42, "score": "120", "question": "Are they worth it?", "top_comment": "Yes, for containers."}},
			map[string]any{"type": "discussion", "title": "Without data", "url": "https://forum.example/t/1", "description": "Is &quot;any&quot; enough?"},
			map[string]any{"type": "discussion", "title": "Blocked", "url": "https://blocked.example/t/2"},
		}},
		"infobox": map[string]any{"type": "graph", "results": []any{
			map[string]any{"type": "infobox", "title": "Go", "url": "https://en.wikipedia.org/wiki/Go_(programming_language)",
				"description": "Programming language", "long_desc": "Go is a <b>statically</b> typed language.",
				"attributes": []any{[]any{"Designed by", "Robert Griesemer"}, []any{"First appeared", nil}, []any{"Typing", "static"}}},
		}},
		"news": map[string]any{"type": "news", "results": []any{
			map[string]any{"title": "Go 1.26 released", "url": "https://go.dev/blog/go1.26", "description": "News", "age": "1 day ago", "meta_url": map[string]any{"hostname": "go.dev"}},
		}},
		"videos": map[string]any{"type": "videos", "results": []any{
			map[string]any{"type": "video_result", "title": "Generics talk", "url": "https://www.youtube.com/watch?v=x", "age": "3 years ago",
				"video": map[string]any{"duration": "35:12", "publisher": "YouTube", "author": map[string]any{"name": "GopherCon"}}},
		}},
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBraveReturnsTheBlocksResultFilterAsksFor(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: braveBlocksBody(t)})
	res := call(t, braveConfig(up), "web_search_brave",
		`{"query":"go generics","count":1,"extra_snippets":true,"result_filter":["web","faq","discussions","infobox","news","videos"],"blocked_domains":["blocked.example"]}`)
	out := braveOutput(t, res)

	if q := up.Requests()[0].URL.Query(); q.Get("result_filter") != "discussions,faq,infobox,news,query,videos,web" || q.Get("extra_snippets") != "true" {
		t.Errorf("request = %v", q)
	}
	if len(out.Results) != 1 || !slices.Equal(out.Results[0].ExtraSnippets, []string{"Type parameters & constraints.", strings.Repeat("y", 300) + "…", "4", "5", "6"}) {
		t.Errorf("results = %+v", out.Results)
	}
	if len(out.FAQ) != maxBlockItems || out.FAQ[0].Question != "Q0?" || out.FAQ[1].URL != "https://faq2.example/" ||
		!strings.HasPrefix(out.FAQ[0].Answer, "A & x") || len([]rune(out.FAQ[0].Answer)) != maxBlockText+1 {
		t.Errorf("faq = %+v", out.FAQ)
	}
	wantDiscussions := []Discussion{
		{Title: "Generics in Go", URL: "https://www.reddit.com/r/golang/comments/abc/", Forum: "r/golang", Answers: 42,
			Question: "Are they worth it?", TopComment: "Yes, for containers.", Age: "2 years ago"},
		{Title: "Without data", URL: "https://forum.example/t/1", Question: `Is "any" enough?`},
	}
	if !slices.Equal(out.Discussions, wantDiscussions) {
		t.Errorf("discussions = %+v", out.Discussions)
	}
	if len(out.Infobox) != 1 || out.Infobox[0].Description != "Go is a statically typed language." ||
		!slices.Equal(out.Infobox[0].Attributes, []string{"Designed by: Robert Griesemer", "Typing: static"}) {
		t.Errorf("infobox = %+v", out.Infobox)
	}
	if len(out.News) != 1 || out.News[0] != (NewsResult{Title: "Go 1.26 released", URL: "https://go.dev/blog/go1.26", Description: "News", Source: "go.dev", Age: "1 day ago"}) {
		t.Errorf("news = %+v", out.News)
	}
	if len(out.Videos) != 1 || out.Videos[0] != (VideoResult{Title: "Generics talk", URL: "https://www.youtube.com/watch?v=x", Duration: "35:12", Creator: "GopherCon", Publisher: "YouTube", Age: "3 years ago"}) {
		t.Errorf("videos = %+v", out.Videos)
	}
	if want := `1 result for "go generics" (domain-filtered); also 5 FAQ answers, 2 discussions, 1 infobox, 1 news article, 1 video`; res.Summary != want {
		t.Errorf("summary = %q\nwant      %q", res.Summary, want)
	}
	if strings.Contains(string(res.JSON), "blocked.example") || strings.Contains(string(res.JSON), "<strong>") {
		t.Errorf("JSON holds a blocked URL or markup: %s", res.JSON)
	}
}

func TestBraveBlocksOnlyWhenAsked(t *testing.T) {
	// Without result_filter the output is what it always was: the web
	// results, no blocks, no extra snippets, even when Brave sends them.
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: braveBlocksBody(t)})
	res := call(t, braveConfig(up), "web_search_brave", `{"query":"go generics","count":1}`)
	out := braveOutput(t, res)
	if out.FAQ != nil || out.Discussions != nil || out.Infobox != nil || out.News != nil || out.Videos != nil || out.Results[0].ExtraSnippets != nil {
		t.Errorf("output = %+v", out)
	}
	var env map[string]any
	if err := json.Unmarshal(res.JSON, &env); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"faq", "discussions", "infobox", "news", "videos"} {
		if _, ok := env[k]; ok {
			t.Errorf("the JSON has %q: %s", k, res.JSON)
		}
	}
	if strings.Contains(string(res.JSON), "extra_snippets") || res.Summary != `1 result for "go generics"` {
		t.Errorf("JSON %s, summary %q", res.JSON, res.Summary)
	}
	if q := up.Requests()[0].URL.Query(); q.Has("result_filter") || q.Has("extra_snippets") || q.Has("goggles") {
		t.Errorf("request = %v", q)
	}
}

func TestBraveFilterWithoutWebFetchesOnePage(t *testing.T) {
	// The body says more results exist, and no web results come back: a
	// further page would only repeat the faq block.
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: braveBlocksBody(t)})
	res := call(t, braveConfig(up), "web_search_brave", `{"query":"go generics","result_filter":["faq","faq"]}`)
	out := braveOutput(t, res)
	if n := len(up.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if q := up.Requests()[0].URL.Query(); q.Get("result_filter") != "faq,query" {
		t.Errorf("result_filter = %q", q.Get("result_filter"))
	}
	// The CONSTRUCTED body has web results anyway; the tool returns what
	// Brave sends, but only the asked blocks.
	if len(out.FAQ) != maxBlockItems || out.News != nil || out.Videos != nil {
		t.Errorf("output = %+v", out)
	}
}

func TestBraveSendsGoggles(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
	goggles := []string{"https://raw.githubusercontent.com/brave/goggles-quickstart/main/goggles/tech_blogs.goggle", "$boost=3,site=learn.microsoft.com"}
	args, _ := json.Marshal(map[string]any{"query": "What is Semantic Kernel", "goggles": goggles, "extra_snippets": true})
	res := call(t, braveConfig(up), "web_search_brave", string(args))
	out := braveOutput(t, res)
	if q := up.Requests()[0].URL.Query(); !slices.Equal(q["goggles"], goggles) || q.Get("extra_snippets") != "true" {
		t.Errorf("request = %v", q)
	}
	// The recording has no extra_snippets and no blocks: nothing is
	// invented, and the summary is the plain one.
	for _, r := range out.Results {
		if r.ExtraSnippets != nil {
			t.Errorf("%s has extra snippets %q", r.URL, r.ExtraSnippets)
		}
	}
	if out.Count != 10 || res.Summary != `10 results for "What is Semantic Kernel"` {
		t.Errorf("count %d, summary %q", out.Count, res.Summary)
	}
}
