package brave

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// llmContextBody is CONSTRUCTED from the response documented in Brave's
// LLM Context reference (brave/brave-search-skills,
// brave-search/references/llm-context.md): no recording of the endpoint
// exists. It has pages, a point of interest and a map place.
const llmContextBody = `{
  "grounding": {
    "generic": [
      {"url": "https://go.dev/doc/go1.22", "title": "Go 1.22 Release Notes",
       "snippets": ["Go 1.22 changes for loops: each iteration has its own variable.", "{\"table\":[[\"version\",\"date\"],[\"1.22\",\"2024-02\"]]}"]},
      {"url": "https://example.com/loops", "title": "Loop variables", "snippets": ["The loopvar experiment became the default."]}
    ],
    "poi": {"name": "Gopher Cafe", "url": "https://gopher.example", "title": "Gopher Cafe - home", "snippets": ["Open 8-18."]},
    "map": [{"name": "Gopher Park", "url": "https://park.example", "title": "Park", "snippets": null}]
  },
  "sources": {
    "https://go.dev/doc/go1.22": {"title": "Go 1.22 Release Notes", "hostname": "go.dev", "age": ["Tuesday, February 6, 2024", "2024-02-06", "600 days ago"]},
    "https://example.com/loops": {"title": "Loop variables", "hostname": "example.com", "age": null}
  }
}`

func TestLLMContextSendsTheDocumentedRequest(t *testing.T) {
	c, last := serve(t, 200, jsonHeader, []byte(llmContextBody))
	local := false
	r, err := c.LLMContext(context.Background(), &LLMContextParams{
		Query: " go loop variables ", Country: "de", SearchLang: "en", Freshness: "pm", Count: 5,
		MaxURLs: 3, MaxTokens: 2048, MaxSnippets: 10, MaxTokensPerURL: 1024, MaxSnippetsPerURL: 4,
		ThresholdMode: "strict", Goggles: []string{"$discard\n$site=go.dev"}, EnableLocal: &local,
	})
	if err != nil {
		t.Fatal(err)
	}
	q := last().Query
	for k, want := range map[string]string{
		"q": "go loop variables", "country": "DE", "search_lang": "en", "freshness": "pm", "count": "5",
		"maximum_number_of_urls": "3", "maximum_number_of_tokens": "2048", "maximum_number_of_snippets": "10",
		"maximum_number_of_tokens_per_url": "1024", "maximum_number_of_snippets_per_url": "4",
		"context_threshold_mode": "strict", "goggles": "$discard\n$site=go.dev", "enable_local": "false",
	} {
		if q.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, q.Get(k), want)
		}
	}
	if last().URL.Path != "/res/v1/llm/context" {
		t.Errorf("path = %s", last().URL.Path)
	}
	g := r.Grounding
	if len(g.Generic) != 2 || len(g.Generic[0].Snippets) != 2 || g.POI == nil || g.POI.Name != "Gopher Cafe" ||
		len(g.Map) != 1 || g.Map[0].Snippets != nil {
		t.Errorf("grounding = %+v", g)
	}
	if s := r.Sources["https://go.dev/doc/go1.22"]; s.Hostname != "go.dev" || len(s.Age) != 3 || r.Sources["https://example.com/loops"].Age != nil {
		t.Errorf("sources = %+v", r.Sources)
	}
}

func TestLLMContextParamsValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    LLMContextParams
		want string
	}{
		{"empty", LLMContextParams{Query: " "}, "empty"},
		{"tokens low", LLMContextParams{Query: "q", MaxTokens: 1000}, "maximum_number_of_tokens"},
		{"tokens high", LLMContextParams{Query: "q", MaxTokens: 40000}, "maximum_number_of_tokens"},
		{"urls", LLMContextParams{Query: "q", MaxURLs: 51}, "maximum_number_of_urls"},
		{"per url", LLMContextParams{Query: "q", MaxTokensPerURL: 100}, "per_url"},
		{"count", LLMContextParams{Query: "q", Count: 51}, "count"},
		{"threshold", LLMContextParams{Query: "q", ThresholdMode: "loose"}, "context_threshold_mode"},
		{"freshness", LLMContextParams{Query: "q", Freshness: "yesterday"}, "freshness"},
		{"goggles", LLMContextParams{Query: "q", Goggles: []string{""}}, "goggles[0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLLMContextErrorsAreTyped(t *testing.T) {
	p := &LLMContextParams{Query: "q"}
	t.Run("plan lacks it", func(t *testing.T) {
		c, _ := serve(t, 400, jsonHeader, []byte(`{"type":"ErrorResponse","error":{"code":"OPTION_NOT_IN_PLAN","detail":"The option is not subscribed in the plan.","status":400}}`))
		_, err := c.LLMContext(context.Background(), p)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeOptionNotInPlan {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("5xx", func(t *testing.T) {
		c, _ := serve(t, 502, nil, nil)
		_, err := c.LLMContext(context.Background(), p)
		var e *Error
		if !errors.As(err, &e) || e.StatusCode != 502 {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		c, _ := serve(t, 200, jsonHeader, []byte(`{"grounding":{"generic":{}}}`))
		_, err := c.LLMContext(context.Background(), p)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled while Brave is silent", func(t *testing.T) {
		c, ctx := stalled(t)
		if _, err := c.LLMContext(ctx, p); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}
