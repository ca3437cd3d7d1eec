package brave

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// Brave's LLM Context API (GET /res/v1/llm/context, part of the Search plan):
// a single search whose answer is the pages' relevant text, cut to a token
// budget, for grounding a model. Limits are those of Brave's API reference.
const (
	llmContextPath = "/res/v1/llm/context"

	MaxContextCount    = 50 // search results considered
	MaxContextURLs     = 50
	MinContextTokens   = 1024
	MaxContextTokens   = 32768
	MaxContextSnippets = 100
	MinTokensPerURL    = 512
	MaxTokensPerURL    = 8192
)

// LLMContextParams is one LLM Context request. Zero values are left to
// Brave's defaults (20 results, 20 URLs, 8192 tokens, balanced threshold).
type LLMContextParams struct {
	Query      string // q: required, at most 400 characters and 50 words
	Country    string // two-letter country code, or "ALL"
	SearchLang string // e.g. "en"
	Freshness  string // pd, pw, pm, py, or YYYY-MM-DDtoYYYY-MM-DD
	Count      int    // search results considered, 1..50

	MaxURLs           int // maximum_number_of_urls, 1..50
	MaxTokens         int // maximum_number_of_tokens, 1024..32768 (approximate)
	MaxSnippets       int // maximum_number_of_snippets, 1..100
	MaxTokensPerURL   int // maximum_number_of_tokens_per_url, 512..8192
	MaxSnippetsPerURL int // maximum_number_of_snippets_per_url, 1..100

	// ThresholdMode is how relevant a passage must be to be included:
	// strict, balanced or lenient.
	ThresholdMode string
	Goggles       []string // as for [SearchParams.Goggles]
	EnableLocal   *bool    // nil lets Brave decide
}

// Validate checks p against the API's documented limits.
func (p *LLMContextParams) Validate() error {
	if err := validateCommon(p.Query, p.Count, MaxContextCount, p.Country, p.SearchLang, ""); err != nil {
		return err
	}
	type bound struct {
		name     string
		v, lo, h int
	}
	for _, b := range []bound{
		{"maximum_number_of_urls", p.MaxURLs, 1, MaxContextURLs},
		{"maximum_number_of_tokens", p.MaxTokens, MinContextTokens, MaxContextTokens},
		{"maximum_number_of_snippets", p.MaxSnippets, 1, MaxContextSnippets},
		{"maximum_number_of_tokens_per_url", p.MaxTokensPerURL, MinTokensPerURL, MaxTokensPerURL},
		{"maximum_number_of_snippets_per_url", p.MaxSnippetsPerURL, 1, MaxContextSnippets},
	} {
		if b.v != 0 && (b.v < b.lo || b.v > b.h) {
			return fmt.Errorf("%s must be between %d and %d, got %d", b.name, b.lo, b.h, b.v)
		}
	}
	switch p.ThresholdMode {
	case "", "strict", "balanced", "lenient":
	default:
		return fmt.Errorf("context_threshold_mode must be strict, balanced or lenient, got %q", p.ThresholdMode)
	}
	if err := validateGoggles(p.Goggles); err != nil {
		return err
	}
	return ValidateFreshness(p.Freshness)
}

func (p *LLMContextParams) values() url.Values {
	v := localeValues(p.Query, p.Count, p.Country, p.SearchLang, "", "", nil)
	pagedValues(v, 0, p.Freshness)
	for k, n := range map[string]int{
		"maximum_number_of_urls": p.MaxURLs, "maximum_number_of_tokens": p.MaxTokens,
		"maximum_number_of_snippets": p.MaxSnippets, "maximum_number_of_tokens_per_url": p.MaxTokensPerURL,
		"maximum_number_of_snippets_per_url": p.MaxSnippetsPerURL,
	} {
		if n > 0 {
			v.Set(k, strconv.Itoa(n))
		}
	}
	if p.ThresholdMode != "" {
		v.Set("context_threshold_mode", p.ThresholdMode)
	}
	for _, g := range p.Goggles {
		v.Add("goggles", g)
	}
	if p.EnableLocal != nil {
		v.Set("enable_local", strconv.FormatBool(*p.EnableLocal))
	}
	return v
}

// LLMContextResponse is the answer of the LLM Context API.
type LLMContextResponse struct {
	Type      string    `json:"type,omitempty"` // absent on success; "ErrorResponse" on an error in a 200
	Grounding Grounding `json:"grounding"`
	// Sources describes every URL the grounding cites, keyed by URL.
	Sources map[string]ContextSource `json:"sources"`

	RateLimit RateLimit `json:"-"`
}

// Grounding is the content, by kind: pages (Generic), and with local recall
// a point of interest (POI) and places on a map (Map).
type Grounding struct {
	Generic []GroundingItem `json:"generic"`
	POI     *GroundingItem  `json:"poi,omitempty"`
	Map     []GroundingItem `json:"map,omitempty"`
}

// GroundingItem is one page's passages. Snippets are plain text or
// JSON-serialised structured data (tables, code); Name is set for places.
type GroundingItem struct {
	Name     string   `json:"name,omitempty"`
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Snippets []string `json:"snippets"`
}

// ContextSource is what Brave knows of a cited URL. Age, when present, is
// the page's date in several forms, e.g. ["Wednesday, January 15, 2025",
// "2025-01-15", "392 days ago"].
type ContextSource struct {
	Title    string   `json:"title"`
	Hostname string   `json:"hostname"`
	Age      []string `json:"age,omitempty"`
}

// LLMContext runs one LLM Context search. Failures are as for
// [Client.Search].
func (c *Client) LLMContext(ctx context.Context, p *LLMContextParams) (*LLMContextResponse, error) {
	return query(ctx, c, llmContextPath, p, DecodeLLMContextResponse, func(r *LLMContextResponse) *RateLimit { return &r.RateLimit })
}

// DecodeLLMContextResponse parses a 200 body of the LLM Context API.
func DecodeLLMContextResponse(body []byte, contentType string) (*LLMContextResponse, error) {
	return decodeAnswer[LLMContextResponse](body, contentType, func(r *LLMContextResponse) string { return r.Type })
}
