package websearch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/toolport/toolport/google"
	"github.com/toolport/toolport/tool"
)

const googleDescription = "Search the web using Google Custom Search API and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks. Note: Google has closed the Custom Search JSON API to new customers and shuts it down on 2027-01-01."

// GoogleInput is the input of web_search_google.
type GoogleInput struct {
	Query string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Num   int    `json:"num,omitempty" jsonschema:"Number of results to return (1-10)" schema:"minimum=1,maximum=10,default=10"`
	Start int    `json:"start,omitempty" jsonschema:"Result index offset for pagination (1-based, max 91; start + num must not exceed 100)" schema:"minimum=1,maximum=91,default=1"`

	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"Only include search results from these domains"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"Never include search results from these domains"`
}

// Google declares web_search_google.
//
// Google's siteSearch takes a single site. A single allowed domain is sent as
// siteSearch with siteSearchFilter=i; otherwise, with no allowed domains, the
// first blocked domain is sent with siteSearchFilter=e. Every other domain rule
// is applied to the results, so several allowed domains may leave fewer than
// num results (no further pages are fetched: each one spends daily quota).
func Google(cfg Config) *tool.Tool {
	client, clientErr := cfg.googleClient()
	g := &googleSearch{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:        "web_search_google",
		Title:       "Google Search",
		Description: googleDescription,
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Notice:      GoogleEndNotice(cfg),
		Available:   cfg.googleAvailable(clientErr),
	}, g.search))
}

type googleSearch struct {
	cfg       Config
	client    *google.Client
	clientErr error
}

func (g *googleSearch) search(ctx context.Context, in GoogleInput) (Output, error) {
	// After the end, a call says so instead of sending a request whose 4xx
	// would say nothing useful; a user who turned the tool on keeps trying.
	if g.cfg.GoogleEnded() && g.cfg.Google != GoogleOn {
		return Output{}, googleEnded()
	}
	if g.cfg.GoogleAPIKey == "" || g.cfg.GoogleEngineID == "" {
		return Output{}, googleMissing()
	}
	if g.clientErr != nil {
		return Output{}, &tool.Error{Code: tool.CodeConfig, Message: "GOOGLE_SEARCH_BASE_URL is not a valid base URL (want e.g. https://customsearch.googleapis.com)", Err: g.clientErr}
	}
	filter, err := newDomainFilter(in.AllowedDomains, in.BlockedDomains)
	if err != nil {
		return Output{}, err
	}
	in.Num, in.Start = max(in.Num, 1), max(in.Start, 1)
	if in.Start+in.Num > google.MaxResults {
		return Output{}, validationError("start", "maximum", fmt.Sprintf(
			"start + num must not exceed %d (Google serves only the first %d results), got start=%d num=%d: lower num to %d or start",
			google.MaxResults, google.MaxResults, in.Start, in.Num, max(google.MaxResults-in.Start, 1)))
	}
	params := google.SearchParams{Query: strings.TrimSpace(in.Query), EngineID: g.cfg.GoogleEngineID, Num: in.Num, Start: in.Start}
	switch {
	case len(filter.allowed) == 1:
		params.SiteSearch, params.SiteSearchFilter = filter.allowed[0], google.SiteInclude
	case len(filter.allowed) == 0 && len(filter.blocked) > 0:
		params.SiteSearch, params.SiteSearchFilter = filter.blocked[0], google.SiteExclude
	}
	if err := params.Validate(); err != nil {
		return Output{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, g.cfg.timeout())
	defer cancel()
	resp, err := g.client.Search(ctx, &params)
	if err != nil {
		var ge *google.Error
		if errors.As(err, &ge) {
			return Output{}, googleAPIError(ge)
		}
		return Output{}, upstreamFailure("Google Custom Search", err, parent, g.cfg.timeout())
	}
	results := []Result{}
	seen := map[string]bool{}
	for _, it := range resp.Items {
		if len(results) == in.Num {
			break
		}
		if it.Link == "" || seen[it.Link] || !filter.allows(it.Link) {
			continue
		}
		seen[it.Link] = true
		results = append(results, Result{Title: collapseSpace(it.Title), URL: it.Link, Snippet: collapseSpace(it.Snippet)})
	}
	return newOutput(params.Query, results, filter.active()), nil
}

// GoogleEndNotice says when Google's API ends, or ended, by cfg's clock and
// what to use instead, for `toolport list`, `doctor` and the page.
func GoogleEndNotice(cfg Config) string {
	end := google.EndOfService.Format(time.DateOnly)
	if cfg.GoogleEnded() {
		return "Google's Custom Search JSON API ended on " + end + "; use web_search_brave (BRAVE_API_KEY) or web_search_searxng (TOOLPORT_SEARXNG_URL, a SearXNG instance of your own)"
	}
	days := int(math.Ceil(google.EndOfService.Sub(cfg.now()).Hours() / 24))
	return fmt.Sprintf("Google ends the Custom Search JSON API on %s (in %d days); use web_search_brave (BRAVE_API_KEY) or web_search_searxng (TOOLPORT_SEARXNG_URL, a SearXNG instance of your own) instead", end, days)
}

func googleEnded() *tool.Error {
	return &tool.Error{Code: tool.CodeUpstreamGone, Message: "Google's Custom Search JSON API ended on " +
		google.EndOfService.Format(time.DateOnly) + " (Google closed it to new customers and gave existing ones until then). " +
		"Use web_search_brave (set BRAVE_API_KEY) or web_search_searxng (set TOOLPORT_SEARXNG_URL to a SearXNG instance of your own). If your key still works, set TOOLPORT_GOOGLE_SEARCH=on."}
}

// collapseSpace joins Google's line-broken snippets into one line.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
