package websearch

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// referenceServerText is how the reference Brave Search MCP server
// (modelcontextprotocol/servers, src/brave-search) renders web results for a
// model: "Title: …\nDescription: …\nURL: …" per result, a blank line
// between. Written from its published source's format, for comparison.
func referenceServerText(results []Result) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = "Title: " + r.Title + "\nDescription: " + r.Snippet + "\nURL: " + r.URL
	}
	return strings.Join(parts, "\n\n")
}

// TestBraveModelTextIsACompactList: what a model reads of a recorded Brave
// search is the summary, then every result's title, URL and snippet, in
// fewer characters than the reference server's rendering of the same
// results and far fewer than the JSON envelope.
func TestBraveModelTextIsACompactList(t *testing.T) {
	up := newUpstream(t, tooltest.Reply{Status: 200, Body: fixture(t, "brave", "web_search_what_is_semantic_kernel.json")})
	res := call(t, braveConfig(up), "web_search_brave", `{"query":"What is Semantic Kernel"}`)
	if !res.HasText() {
		t.Fatal("web_search_brave has no text form")
	}
	text, out := res.ModelText(), output(t, res)
	if !strings.HasPrefix(text, res.Summary+"\n1. [") {
		t.Errorf("the text does not open with the summary and the first result:\n%.200s", text)
	}
	for i, r := range out.Results {
		for _, want := range []string{r.Title, r.URL, r.Snippet} {
			if !strings.Contains(text, want) {
				t.Errorf("result %d: %q is not in the text", i+1, want)
			}
		}
	}
	got, ref, env := utf8.RuneCountInString(text), utf8.RuneCountInString(referenceServerText(out.Results)), utf8.RuneCount(res.JSON)
	t.Logf("text %d characters, reference server %d, JSON envelope %d", got, ref, env)
	if got > ref {
		t.Errorf("the text takes %d characters, the reference server's %d", got, ref)
	}
}

// BenchmarkBraveModelText reports the characters a model reads of one
// recorded Brave search: the text form (text-chars), the JSON envelope
// main's surfaces sent as text before it (envelope-chars, summary line
// included as MCP sent it), and the reference server's rendering of the
// same results (reference-chars).
//
//	go test -run '^$' -bench BraveModelText -benchtime 1x ./internal/pack/websearch
func BenchmarkBraveModelText(b *testing.B) {
	body := fixture(b, "brave", "web_search_what_is_semantic_kernel.json")
	up := tooltest.NewServer(b, tooltest.Reply{Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	reg := tool.NewRegistry()
	if err := reg.Register(Tools(braveConfig(up))...); err != nil {
		b.Fatal(err)
	}
	var text, env, ref int
	for b.Loop() {
		res := reg.Call(context.Background(), "web_search_brave", json.RawMessage(`{"query":"What is Semantic Kernel"}`))
		out, ok := res.Value.(BraveOutput)
		if !ok {
			b.Fatalf("the call failed: %s", res.JSON)
		}
		results := make([]Result, len(out.Results))
		for i, r := range out.Results {
			results[i] = Result{Title: r.Title, URL: r.URL, Snippet: r.Snippet}
		}
		text = utf8.RuneCountInString(res.ModelText())
		env = utf8.RuneCountInString(res.Summary) + utf8.RuneCount(res.JSON)
		ref = utf8.RuneCountInString(referenceServerText(results))
	}
	b.ReportMetric(float64(text), "text-chars")
	b.ReportMetric(float64(env), "envelope-chars")
	b.ReportMetric(float64(ref), "reference-chars")
}

// modelText checks what every text form shares: the call succeeded with a
// text form that opens with the summary, in fewer characters than the JSON
// the model read before; it returns the text after the summary line.
func modelText(t *testing.T, res *tool.Result) string {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("%s", res.JSON)
	}
	if !res.HasText() {
		t.Fatalf("no text form; the model reads the JSON:\n%.300s", res.JSON)
	}
	text := res.ModelText()
	body, ok := strings.CutPrefix(text, res.Summary+"\n")
	if !ok {
		t.Fatalf("the text does not open with the summary %q:\n%.200s", res.Summary, text)
	}
	got, env := utf8.RuneCountInString(text), utf8.RuneCount(res.JSON)
	t.Logf("text %d characters, JSON envelope %d:\n%s", got, env, text)
	if got >= env {
		t.Errorf("the text takes %d characters, the JSON %d", got, env)
	}
	return body
}

// TestLocalModelTextIsOneLinePerPlace: a model reads each place of Brave's
// documented POI example as a link and one line of its address, phone,
// rating, today's hours and distance (then its description), not the JSON.
func TestLocalModelTextIsOneLinePerPlace(t *testing.T) {
	u := byPath(t, map[string]tooltest.Reply{
		"/res/v1/web/search":         {Body: []byte(locationsSearch)},
		"/res/v1/local/pois":         {Body: normalisedPOIs(t)},
		"/res/v1/local/descriptions": {Body: fixture(t, "brave", "docs_example_local_descriptions.json")},
	})
	res := call(t, allBrave(u), "local_search_brave", `{"query":"mediterranean food san francisco","units":"imperial","descriptions":true}`)
	body := modelText(t, res)
	lines := strings.Split(body, "\n")
	want := []string{
		"1. [Park Mediterranean Grill](https://yelp.com/biz/park-mediterranean-grill-sf)",
		"   123 Main St, San Francisco, CA 94102 · +1 415-555-0123 · 4.5/5 (234 reviews) · Monday 07:00-21:00 · 0.3 miles · $$ · Mediterranean, Greek · 37.7749,-122.4194",
		"   ### Overview A cozy neighborhood cafe known for its **artisanal coffee**...",
		"2. Old & Gone Cafe",
		"   1 Side St, San Francisco · 37.1,-122.2",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("text lines =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestLLMContextModelTextIsThePassagesUnderTheirSources: a model reads
// every passage once, under its source's link and date (an untitled
// source's bare URL), with a passage's line breaks kept (code and tables
// need them).
func TestLLMContextModelTextIsThePassagesUnderTheirSources(t *testing.T) {
	body := strings.Replace(llmContextBody, strings.Repeat("long ", 2000), `for i := range 3 {\n\tgo f(i)\n}`, 1)
	u := newUpstream(t, tooltest.Reply{Body: []byte(body)})
	res := call(t, allBrave(u), "llm_context_brave", `{"query":"gopher cafe"}`)
	text := modelText(t, res)
	want := "1. [Go 1.22 Release Notes](https://go.dev/doc/go1.22)\n" +
		"   2024-02-06\n" +
		"   Each iteration has its own variable.\n" +
		"   for i := range 3 {\n   \tgo f(i)\n   }\n" +
		"2. https://example.com/b\n" +
		"   never reached\n" +
		"3. [Gopher Cafe](https://gopher.example)\n" +
		"   Open 8-18."
	if text != want {
		t.Errorf("text =\n%s\nwant\n%s", text, want)
	}
}

// TestAnswerModelTextIsTheAnswerThenItsCitations: a model reads Brave's
// answer as streamed, its [n] marks resolved by a numbered list of links.
func TestAnswerModelTextIsTheAnswerThenItsCitations(t *testing.T) {
	u := newUpstream(t, tooltest.Reply{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: answerStream(
		"Go 1.22 gives every loop iteration its own variable. ",
		`<citation>{"number":1,"url":"https://go.dev/blog/loopvar-preview","snippet":"<strong>loopvar</strong> preview"}</citation>`,
		"\n\nOlder modules keep the old meaning. ",
		`<citation>{"number":2,"url":"https://go.dev/wiki/LoopvarExperiment","snippet":"The go line in go.mod decides."}</citation>`)})
	res := call(t, allBrave(u), "answer_brave", `{"question":"what changed for loops in go 1.22?"}`)
	text := modelText(t, res)
	answer := res.Value.(AnswerOutput).Answer
	want := strings.TrimSpace(answer) + "\n\nCitations:\n" +
		"1. https://go.dev/blog/loopvar-preview\n   loopvar preview\n" +
		"2. https://go.dev/wiki/LoopvarExperiment\n   The go line in go.mod decides."
	if !strings.Contains(answer, "[1]") || !strings.Contains(answer, "[2]") || text != want {
		t.Errorf("text =\n%s\nwant\n%s", text, want)
	}
}
