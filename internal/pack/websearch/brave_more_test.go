package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// allBrave is braveConfig with every Brave tool declared.
func allBrave(u *tooltest.Server) Config {
	cfg := braveConfig(u)
	cfg.BraveTools = slices.Clone(braveOrder)
	return cfg
}

// byPath answers each Brave endpoint with its own reply.
func byPath(t *testing.T, replies map[string]tooltest.Reply) *tooltest.Server {
	t.Helper()
	return tooltest.NewServer(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) {
		rep, ok := replies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ct := "application/json"
		if rep.Header.Get("Content-Type") != "" {
			ct = rep.Header.Get("Content-Type")
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(cmp(rep.Status, 200))
		w.Write(rep.Body)
	}})
}

func cmp(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// normalisedPOIs is Brave's documented POI example with its one published
// flaw, a trailing comma, removed (see brave/testdata/SOURCES.md).
func normalisedPOIs(t *testing.T) []byte {
	return regexp.MustCompile(`,(\s*[}\]])`).ReplaceAll(fixture(t, "brave", "docs_example_local_pois.jsonc"), []byte("$1"))
}

// locationsSearch is CONSTRUCTED from Brave's documented LocationResult: a
// web search's locations block with the documented example's id and one
// place the POI endpoint no longer knows.
const locationsSearch = `{"type":"search","query":{"original":"mediterranean food san francisco"},"locations":{"type":"locations","results":[
	{"type":"location_result","id":"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=","title":"Park Mediterranean Grill"},
	{"type":"location_result","id":"locEXPIRED","title":"Old &amp; Gone Cafe","postal_address":{"streetAddress":"1 Side St","addressLocality":"San Francisco"},"coordinates":[37.1,-122.2]}]}}`

func TestLocalSearchFindsPlacesThenTheirDetails(t *testing.T) {
	u := byPath(t, map[string]tooltest.Reply{
		"/res/v1/web/search":         {Body: []byte(locationsSearch)},
		"/res/v1/local/pois":         {Body: normalisedPOIs(t)},
		"/res/v1/local/descriptions": {Body: fixture(t, "brave", "docs_example_local_descriptions.json")},
	})
	res := call(t, allBrave(u), "local_search_brave", `{"query":"mediterranean food san francisco","units":"imperial","descriptions":true}`)
	if res.Err != nil {
		t.Fatalf("%s", res.JSON)
	}
	reqs := u.Requests()
	if len(reqs) != 3 || reqs[0].Query.Get("result_filter") != "locations" ||
		!reflect.DeepEqual(reqs[1].Query["ids"], []string{"loc4CQWMJWLD4VBEBZ62XQLJTGK6YCJEEJDNAAAAAAA=", "locEXPIRED"}) || reqs[1].Query.Get("units") != "imperial" {
		t.Fatalf("requests = %+v", reqs)
	}
	out := res.Value.(LocalOutput)
	lat, lon := 37.7749, -122.4194
	want := Place{Name: "Park Mediterranean Grill", URL: "https://yelp.com/biz/park-mediterranean-grill-sf",
		Address: "123 Main St, San Francisco, CA 94102", Phone: "+1 415-555-0123", Rating: 4.5, RatingMax: 5, Reviews: 234,
		HoursToday: "Monday 07:00-21:00", Latitude: &lat, Longitude: &lon, Distance: "0.3 miles",
		Categories: []string{"Mediterranean", "Greek"}, PriceRange: "$$", Description: "### Overview\nA cozy neighborhood cafe known for its **artisanal coffee**..."}
	if out.Count != 2 || !reflect.DeepEqual(out.Places[0], want) {
		t.Fatalf("places[0] =\n%+v\nwant\n%+v", out.Places[0], want)
	}
	if p := out.Places[1]; p.Name != "Old & Gone Cafe" || p.Address != "1 Side St, San Francisco" || *p.Latitude != 37.1 {
		t.Errorf("the expired place keeps the search's record: %+v", p)
	}
	if res.Summary != `2 places for "mediterranean food san francisco"` {
		t.Errorf("summary = %q", res.Summary)
	}
}

func TestLocalSearchWithoutLocationsMakesOneRequest(t *testing.T) {
	u := newUpstream(t, tooltest.Reply{Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
	res := call(t, allBrave(u), "local_search_brave", `{"query":"what is semantic kernel"}`)
	if res.Err != nil || res.Value.(LocalOutput).Count != 0 || len(u.Requests()) != 1 || !strings.Contains(res.Summary, "No places") {
		t.Errorf("%s (%q) after %d requests", res.JSON, res.Summary, len(u.Requests()))
	}
}

// llmContextBody is CONSTRUCTED from Brave's documented LLM Context
// response (see brave/testdata/SOURCES.md): two pages, a point of interest,
// and a snippet far over the budget.
var llmContextBody = `{"grounding":{"generic":[
	{"url":"https://go.dev/doc/go1.22","title":"Go 1.22 Release Notes","snippets":["Each iteration has its own variable.","` + strings.Repeat("long ", 2000) + `"]},
	{"url":"https://example.com/b","title":"","snippets":["never reached"]}],
	"poi":{"name":"Gopher Cafe","url":"https://gopher.example","title":null,"snippets":["Open 8-18."]},"map":[]},
	"sources":{"https://go.dev/doc/go1.22":{"title":"Go 1.22 Release Notes","hostname":"go.dev","age":["Tuesday, February 6, 2024","2024-02-06","600 days ago"]}}}`

func TestLLMContextKeepsToTheTokenBudget(t *testing.T) {
	u := newUpstream(t, tooltest.Reply{Body: []byte(llmContextBody)})
	res := call(t, allBrave(u), "llm_context_brave", `{"query":"go loop variables","max_tokens":1024,"max_urls":5,"threshold":"strict"}`)
	if res.Err != nil {
		t.Fatalf("%s", res.JSON)
	}
	q := u.Last(t).Query
	if u.Last(t).URL.Path != "/res/v1/llm/context" || q.Get("maximum_number_of_tokens") != "1024" || q.Get("maximum_number_of_urls") != "5" || q.Get("context_threshold_mode") != "strict" {
		t.Errorf("request = %s", u.Last(t).URL)
	}
	out := res.Value.(LLMContextOutput)
	total := 0
	for _, s := range out.Sources {
		for _, sn := range s.Snippets {
			total += len([]rune(strings.TrimSuffix(sn, "…")))
		}
	}
	if total > 1024*maxRunesPerToken {
		t.Errorf("%d characters of content for a budget of 1024 tokens", total)
	}
	if out.Count != 1 || out.Sources[0].Host != "go.dev" || out.Sources[0].Date != "2024-02-06" || len(out.Sources[0].Snippets) != 2 {
		t.Errorf("sources = %+v", out.Sources)
	}
}

func TestLLMContextTakesEveryKindOfGrounding(t *testing.T) {
	body := strings.Replace(llmContextBody, strings.Repeat("long ", 2000), "short", 1)
	u := newUpstream(t, tooltest.Reply{Body: []byte(body)})
	res := call(t, allBrave(u), "llm_context_brave", `{"query":"gopher cafe"}`)
	if res.Err != nil {
		t.Fatalf("%s", res.JSON)
	}
	out := res.Value.(LLMContextOutput)
	var urls []string
	for _, s := range out.Sources {
		urls = append(urls, s.URL+" "+s.Title)
	}
	if want := []string{"https://go.dev/doc/go1.22 Go 1.22 Release Notes", "https://example.com/b ", "https://gopher.example Gopher Cafe"}; !reflect.DeepEqual(urls, want) {
		t.Errorf("sources = %q", urls)
	}
	if u.Last(t).Query.Get("maximum_number_of_tokens") != "4096" {
		t.Errorf("default budget: %s", u.Last(t).URL)
	}
}

// answerStream is CONSTRUCTED from Brave's documented streaming format
// (see brave/testdata/SOURCES.md).
func answerStream(pieces ...string) []byte {
	var b strings.Builder
	for _, p := range pieces {
		c, _ := json.Marshal(p)
		fmt.Fprintf(&b, "data: {\"object\":\"chat.completion.chunk\",\"model\":\"brave\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", c)
	}
	b.WriteString(`data: {"object":"chat.completion.chunk","model":"brave","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	return []byte(b.String())
}

func TestAnswerStreamsAsProgressAndEndsWithCitations(t *testing.T) {
	sentence := strings.Repeat("Go 1.22 gives every loop iteration its own variable. ", 3)
	u := newUpstream(t, tooltest.Reply{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: answerStream(
		sentence, `<citation>{"number":1,"url":"https://go.dev/blog/loopvar-preview","snippet":"<strong>loopvar</strong> preview"}</citation>`,
		sentence, `<usage>{"X-Request-Total-Cost":0.005}</usage>`)})
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	if err := reg.Register(Tools(Config{BraveAPIKey: braveKey, BraveBaseURL: u.URL, BraveTools: []string{BraveAnswer}, Timeout: 5 * time.Second})...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p)
	})
	res := reg.Call(ctx, "answer_brave", json.RawMessage(`{"question":"what changed for loops in go 1.22?"}`))
	assertNoSecret(t, res)
	if res.Err != nil {
		t.Fatalf("%s", res.JSON)
	}
	out := res.Value.(AnswerOutput)
	if !strings.Contains(out.Answer, "own variable. [1] Go 1.22") || strings.Contains(out.Answer, "<") ||
		!reflect.DeepEqual(out.Citations, []AnswerCitation{{Number: 1, URL: "https://go.dev/blog/loopvar-preview", Snippet: "loopvar preview"}}) {
		t.Errorf("output = %+v", out)
	}
	if len(progress) < 2 || !strings.HasPrefix(progress[0].Message, "Go 1.22 gives") || strings.Contains(progress[len(progress)-1].Message, "citation") {
		t.Errorf("progress = %+v", progress)
	}
	var body map[string]any
	_ = json.Unmarshal(u.Last(t).Body, &body)
	if u.Last(t).Method != http.MethodPost || body["stream"] != true || body["enable_citations"] != true {
		t.Errorf("request body = %s", u.Last(t).Body)
	}
}

func TestNewBraveToolsMapFailures(t *testing.T) {
	tools := map[string]string{
		"local_search_brave": `{"query":"pizza in rome"}`,
		"llm_context_brave":  `{"query":"pizza in rome"}`,
		"answer_brave":       `{"question":"best pizza in rome?"}`,
	}
	rate := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"1, 2000"}, "X-Ratelimit-Remaining": {"0, 1977"}, "X-Ratelimit-Reset": {"1, 389223"}}
	all := Config{BraveAPIKey: braveKey, BraveTools: []string{BraveLocal, BraveLLM, BraveAnswer}, Timeout: 5 * time.Second, MaxRateWait: -1}
	for name, args := range tools {
		t.Run(name+"/not in plan", func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Status: 400, Body: []byte(`{"type":"ErrorResponse","error":{"code":"OPTION_NOT_IN_PLAN","detail":"The option is not subscribed in the plan."}}`)})
			cfg := all
			cfg.BraveBaseURL = u.URL
			res := call(t, cfg, name, args)
			wantFailure(t, res, tool.CodeAuthInvalid, false, false)
			plan := "Search"
			if name == "answer_brave" {
				plan = "Answers"
			}
			if !strings.Contains(res.Err.Message, name) || !strings.Contains(res.Err.Message, "Brave's "+plan+" plan") {
				t.Errorf("message = %q", res.Err.Message)
			}
		})
		t.Run(name+"/429", func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Status: 429, Header: rate, Body: fixture(t, "brave", "error_429_rate_limited.json")})
			cfg := all
			cfg.BraveBaseURL = u.URL
			res := call(t, cfg, name, args)
			if res.Err == nil || res.Err.Code != tool.CodeRateLimit || !res.Err.Retryable {
				t.Errorf("%s", res.JSON)
			}
		})
		t.Run(name+"/5xx", func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Status: 503, Body: []byte("unavailable")})
			cfg := all
			cfg.BraveBaseURL = u.URL
			res := call(t, cfg, name, args)
			if res.Err == nil || !res.Err.Retryable || len(u.Requests()) != 2 {
				t.Errorf("%s after %d requests", res.JSON, len(u.Requests()))
			}
		})
		t.Run(name+"/malformed", func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Body: []byte(`{"grounding":`)})
			cfg := all
			cfg.BraveBaseURL = u.URL
			res := call(t, cfg, name, args)
			if res.Err == nil || res.Err.Code != tool.CodeParse {
				t.Errorf("%s", res.JSON)
			}
		})
		t.Run(name+"/timeout", func(t *testing.T) {
			u := newUpstream(t, tooltest.Reply{Handle: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }})
			cfg := all
			cfg.BraveBaseURL, cfg.Timeout = u.URL, 50*time.Millisecond
			wantFailure(t, call(t, cfg, name, args), tool.CodeTimeout, true, true)
		})
		t.Run(name+"/no key", func(t *testing.T) {
			cfg := all
			cfg.BraveAPIKey = ""
			wantFailure(t, call(t, cfg, name, args), tool.CodeAuthMissing, false, false)
		})
	}
}

func TestNewBraveToolsAreChosenByName(t *testing.T) {
	got, err := ParseBraveTools("answers, places,context")
	if err != nil || !reflect.DeepEqual(got, []string{BraveLocal, BraveLLM, BraveAnswer}) {
		t.Fatalf("got %v, %v", got, err)
	}
	all, _ := ParseBraveTools("all")
	var names []string
	for _, tl := range Tools(Config{BraveTools: all, Google: GoogleOff}) {
		names = append(names, tl.Name())
	}
	for _, n := range []string{"local_search_brave", "llm_context_brave", "answer_brave"} {
		if !slices.Contains(names, n) {
			t.Errorf("all: %v lacks %s", names, n)
		}
	}
	for _, tl := range Tools(Config{Google: GoogleOff}) {
		if tl.Name() != "web_search_brave" {
			t.Errorf("declared by default: %s", tl.Name())
		}
	}
}

func TestAnswerSendsTheAnswersKeyWhenThereIsOne(t *testing.T) {
	u := newUpstream(t, tooltest.Reply{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: answerStream("Yes.")})
	cfg := allBrave(u)
	cfg.BraveAnswersAPIKey = "answers-plan-key"
	if res := call(t, cfg, "answer_brave", `{"question":"is it?"}`); res.Err != nil || strings.Contains(string(res.JSON), "answers-plan-key") {
		t.Fatalf("%s", res.JSON)
	}
	if got := u.Last(t).Header.Get("X-Subscription-Token"); got != "answers-plan-key" {
		t.Errorf("token = %q", got)
	}
	if res := call(t, allBrave(u), "answer_brave", `{"question":"is it?"}`); res.Err != nil || u.Last(t).Header.Get("X-Subscription-Token") != braveKey {
		t.Errorf("without one: %s, token %q", res.JSON, u.Last(t).Header.Get("X-Subscription-Token"))
	}
}
