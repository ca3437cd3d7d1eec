package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolport/toolport/internal/llm"
)

// toolDefRequest makes one model call with defs through provider's real
// SDK and returns the bytes of the "tools" array of the request it sent:
// what every model call of a chat turn pays for its tool definitions.
func toolDefRequest(tb testing.TB, provider string, defs []llm.ToolDef) int {
	tb.Helper()
	var mu sync.Mutex
	var body []byte
	reply := benchAnthropicReply
	if provider == "openai" {
		reply = benchOpenAIReply
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = b
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, reply)
	}))
	defer srv.Close()
	var p llm.Provider
	var err error
	if provider == "openai" {
		p, err = llm.NewOpenAI("m", llm.Options{APIKey: "k", BaseURL: srv.URL + "/v1"})
	} else {
		p, err = llm.NewAnthropic("m", llm.Options{APIKey: "k", BaseURL: srv.URL})
	}
	if err != nil {
		tb.Fatal(err)
	}
	s, err := p.Stream(context.Background(), llm.Request{System: "Be brief.", Tools: defs, Messages: []llm.Message{llm.UserText("find go")}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := llm.Collect(s); err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		tb.Fatalf("the request is not JSON: %v", err)
	}
	if len(req.Tools) != len(defs) {
		tb.Fatalf("the request carries %d tools, want %d", len(req.Tools), len(defs))
	}
	n := 0
	for _, t := range req.Tools {
		n += len(t)
	}
	return n
}

// serveToolDefs are the definitions of every tool `toolport serve` declares
// by default (every pack, the default Brave searches).
func serveToolDefs(tb testing.TB) []llm.ToolDef {
	tb.Helper()
	defs, err := llm.ToolDefs(realRegistry(tb, nil))
	if err != nil {
		tb.Fatal(err)
	}
	return defs
}

// offeredToolDefs are those a chat agent offers its model of serveToolDefs'
// tools with no upstream keys: the available ones only.
func offeredToolDefs(tb testing.TB) []llm.ToolDef {
	tb.Helper()
	offered, left := realRegistry(tb, nil).Available()
	if len(left) == 0 {
		tb.Fatal("every tool is available without keys")
	}
	defs, err := llm.ToolDefs(offered)
	if err != nil {
		tb.Fatal(err)
	}
	return defs
}

// TestOfferedToolDefsAreSmaller: without keys, the tools a model is offered
// leave out every search and TIDAL call that could only fail, and their
// definitions cost less on every model call.
func TestOfferedToolDefsAreSmaller(t *testing.T) {
	all, offered := serveToolDefs(t), offeredToolDefs(t)
	names := map[string]bool{}
	for _, d := range offered {
		names[d.Name] = true
	}
	for _, name := range []string{"web_search_brave", "tidalSearch", "albumTracks", "suggestPlaylist", "savePlaylistToTidal"} {
		if names[name] {
			t.Errorf("%s is offered without its credentials", name)
		}
	}
	for _, name := range []string{"web_fetch", "semanticSearch", "batchMetadata", "searchDatasets"} {
		if !names[name] {
			t.Errorf("%s is not offered; it needs no credentials", name)
		}
	}
	for _, provider := range []string{"anthropic", "openai"} {
		before, after := toolDefRequest(t, provider, all), toolDefRequest(t, provider, offered)
		t.Logf("%s: %d tools %d bytes (~%d tokens at 4 bytes a token) → %d tools %d bytes (~%d tokens)",
			provider, len(all), before, before/4, len(offered), after, after/4)
		if after >= before {
			t.Errorf("%s: offered definitions take %d bytes, all %d", provider, after, before)
		}
	}
}

// BenchmarkToolDefBytes reports the bytes of the tool definitions in one
// model request, with every pack (the default Brave searches) and no keys:
// all the tools ("all", what serve offered before) and those a chat agent
// offers now ("offered"). est-tokens is bytes/4, a rough
// estimate, not a tokenizer's count.
//
//	go test -run '^$' -bench ToolDefBytes -benchtime 1x ./internal/llm
func BenchmarkToolDefBytes(b *testing.B) {
	sets := []struct {
		name string
		defs func(testing.TB) []llm.ToolDef
	}{{"all", serveToolDefs}, {"offered", offeredToolDefs}}
	for _, provider := range []string{"anthropic", "openai"} {
		for _, set := range sets {
			b.Run(provider+"/"+set.name, func(b *testing.B) {
				defs := set.defs(b)
				var n int
				for b.Loop() {
					n = toolDefRequest(b, provider, defs)
				}
				b.ReportMetric(float64(len(defs)), "tools")
				b.ReportMetric(float64(n), "tool-def-bytes")
				b.ReportMetric(float64(n)/4, "est-tokens")
			})
		}
	}
}

// toolDefBudget is the most the 25 tools of serveToolDefs may take in an
// Anthropic request: 0.7 of the 38.6 KB they took when issue 29 was filed.
// A definition that grows past it must be paid for by another; tools added
// since are measured on their own.
const toolDefBudget = 27_020

// budgetedTools are the 25 tools toolDefBudget holds.
const budgetedTools = `web_search_brave web_search_google web_fetch
	searchDatasets getDatasetDetails listGroups listTags listOrganizations queryDatastore
	getResourceDetails searchResources getOrganizationDetails getDatasetActivity
	getOrganizationActivity getDatasetSchema listAllDatasets listLicenses getStatus previewResource
	semanticSearch tidalSearch albumTracks batchMetadata suggestPlaylist savePlaylistToTidal`

// TestToolDefsWithinBudget: every pack's tool definitions, as a model call
// carries them, stay within toolDefBudget.
func TestToolDefsWithinBudget(t *testing.T) {
	budgeted := map[string]bool{}
	for _, name := range strings.Fields(budgetedTools) {
		budgeted[name] = true
	}
	var defs []llm.ToolDef
	for _, d := range serveToolDefs(t) {
		if budgeted[d.Name] {
			defs = append(defs, d)
			delete(budgeted, d.Name)
		}
	}
	if len(budgeted) > 0 {
		t.Fatalf("tools not declared any more: %v", budgeted)
	}
	if n := toolDefRequest(t, "anthropic", defs); n > toolDefBudget {
		t.Errorf("the 25 tool definitions take %d bytes, over the budget of %d", n, toolDefBudget)
	}
}
