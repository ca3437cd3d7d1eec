package websearch

import (
	"context"
	"encoding/json"
	"net/http"
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
