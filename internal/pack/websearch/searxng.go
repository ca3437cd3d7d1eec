package websearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolport/toolport/searxng"
	"github.com/toolport/toolport/tool"
)

const searxngDescription = "Search the web using a self-hosted SearXNG metasearch instance and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks."

// searxngMaxPage is the deepest SearXNG page the tool asks for: engines
// behind an instance rarely serve more, and each page is a request to each.
const searxngMaxPage = 10

// SearxngInput is the input of web_search_searxng.
type SearxngInput struct {
	Query string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count int    `json:"count,omitempty" jsonschema:"Number of results to return (1-20)" schema:"minimum=1,maximum=20,default=10"`
	Page  int    `json:"page,omitempty" jsonschema:"SearXNG result page to start from (1-based, at most 10). A page holds the results of every engine of the instance, usually 10 to 30; when count or domain filters need more, the following pages fill in." schema:"minimum=1,maximum=10,default=1"`

	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"Only include search results from these domains"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"Never include search results from these domains"`

	Language   string `json:"language,omitempty" jsonschema:"Language of the results (e.g. en, de, pt-BR), or all" schema:"pattern=^([A-Za-z]{2}(-[A-Za-z]+)?|all|auto)$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off, moderate or strict; the instance's default when absent" schema:"enum=off|moderate|strict"`
	TimeRange  string `json:"time_range,omitempty" jsonschema:"Only results from the past day, week, month or year (engines without date filters are left out by SearXNG)" schema:"enum=day|week|month|year"`
}

// Searxng declares web_search_searxng. [Tools] declares it only when
// Config.SearxngURL is set; a caller that declares it without one gets
// CONFIG_ERROR calls saying how to set it.
//
// SearXNG has no domain parameter: allowed and blocked domains are applied
// to the results, and further pages (up to Config.MaxExtraPages) are fetched
// when they leave fewer than count. A page with no results, or only results
// of earlier pages, stops the paging.
func Searxng(cfg Config) *tool.Tool {
	s := &searxngSearch{cfg: cfg}
	if cfg.SearxngURL != "" {
		s.client, s.clientErr = cfg.searxngClient()
	}
	return tool.Must(tool.New(tool.Spec{
		Name:        "web_search_searxng",
		Title:       "SearXNG Search",
		Description: searxngDescription,
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
	}, s.search))
}

type searxngSearch struct {
	cfg       Config
	client    *searxng.Client
	clientErr error
}

// searxngSetup is what a user needs to run the tool, said whenever the
// instance is not set or not usable.
const searxngSetup = "Set TOOLPORT_SEARXNG_URL (or 'web_search.searxng.url' in ~/.config/toolport/credentials.json) " +
	"to the base URL of a SearXNG instance, e.g. http://localhost:8888, whose settings.yml lists json in search.formats."

func (s *searxngSearch) search(ctx context.Context, in SearxngInput) (Output, error) {
	if s.cfg.SearxngURL == "" {
		return Output{}, &tool.Error{Code: tool.CodeConfig, Message: "web_search_searxng needs a SearXNG instance, which Toolport does not know. " + searxngSetup}
	}
	if s.clientErr != nil {
		return Output{}, &tool.Error{Code: tool.CodeConfig, Message: "TOOLPORT_SEARXNG_URL is not a valid base URL (want e.g. http://localhost:8888)", Err: s.clientErr}
	}
	filter, err := newDomainFilter(in.AllowedDomains, in.BlockedDomains)
	if err != nil {
		return Output{}, err
	}
	if in.Count < 1 || in.Count > 20 {
		in.Count = 10 // the registry applies the default; a direct caller may not
	}
	if in.Page > searxngMaxPage {
		return Output{}, validationError("page", "maximum", fmt.Sprintf("page must be at most %d, got %d", searxngMaxPage, in.Page))
	}
	params := searxng.SearchParams{
		Query: strings.TrimSpace(in.Query), PageNo: max(in.Page, 1), Language: in.Language,
		SafeSearch: searxngSafeSearch(in.SafeSearch), TimeRange: searxng.TimeRange(in.TimeRange),
	}
	if err := params.Validate(); err != nil {
		return Output{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()

	results := []Result{}
	seen := map[string]bool{}
	// fetched holds every URL any page sent: engines that do not page send
	// page 1 again for page 2, and asking for page 3 would get it a third time.
	fetched := map[string]bool{}
	var unresponsive []searxng.UnresponsiveEngine
	for request := 0; ; request++ {
		resp, err := s.client.Search(ctx, &params)
		if err != nil {
			if request > 0 {
				break // a further page failed: the results so far still stand
			}
			var se *searxng.Error
			if errors.As(err, &se) {
				return Output{}, searxngAPIError(se)
			}
			return Output{}, upstreamFailure("SearXNG", err, parent, s.cfg.timeout())
		}
		if request == 0 {
			unresponsive = resp.UnresponsiveEngines
		}
		fresh := 0 // results on this page not seen on an earlier one
		for _, r := range resp.Results {
			if !fetched[r.URL] {
				fetched[r.URL] = true
				fresh++
			}
			if len(results) == in.Count {
				continue
			}
			// SearXNG merges an URL's duplicates across engines, but not
			// its spellings across pages.
			if r.URL == "" || seen[r.URL] || !filter.allows(r.URL) {
				continue
			}
			seen[r.URL] = true
			results = append(results, Result{Title: collapseSpace(r.Title), URL: r.URL, Snippet: collapseSpace(r.Content)})
		}
		if len(results) >= in.Count || fresh == 0 || params.PageNo >= searxngMaxPage || request >= s.cfg.maxExtraPages() {
			break
		}
		params.PageNo++
	}
	out := newOutput(params.Query, results, filter.active())
	// Only when the engines sent nothing at all: results the domain filters
	// removed are an answer, whatever engines failed beside them.
	if len(fetched) == 0 {
		out.unresponsive = describeEngines(unresponsive)
	}
	return out, nil
}

func searxngSafeSearch(s string) searxng.SafeSearch {
	switch s {
	case "off":
		return searxng.SafeSearchOff
	case "moderate":
		return searxng.SafeSearchModerate
	case "strict":
		return searxng.SafeSearchStrict
	}
	return searxng.SafeSearchDefault
}

// maxEnginesNamed bounds the engines a summary names.
const maxEnginesNamed = 5

// describeEngines names the engines that failed and why: "google (CAPTCHA), brave (timeout)".
func describeEngines(engines []searxng.UnresponsiveEngine) string {
	var parts []string
	for i, e := range engines {
		if i == maxEnginesNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(engines)-i))
			break
		}
		name := collapseSpace(e.Name)
		if r := collapseSpace(e.Reason); r != "" {
			name += " (" + r + ")"
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, ", ")
}

// searxngAPIError maps an error status from the instance.
func searxngAPIError(e *searxng.Error) *tool.Error {
	te := &tool.Error{Status: e.StatusCode, RetryAfter: e.RetryAfter, Err: e}
	switch {
	case e.FormatDisabled():
		te.Code = tool.CodeConfig
		te.Message = "The SearXNG instance refused format=json (HTTP 403): its JSON API is off. " +
			"Add json to search.formats in the instance's settings.yml (formats: [html, json]) and restart it."
	case e.RateLimited():
		te.Code = tool.CodeRateLimit
		te.Retryable = true
		te.Message = "The SearXNG instance's limiter refused the request (HTTP 429); retry in a moment. " +
			"On your own instance, set server.limiter: false in settings.yml or let Toolport's address through (pass_ip in limiter.toml)."
	case e.StatusCode == http.StatusNotFound:
		te.Code = tool.CodeConfig
		te.Message = "The SearXNG instance has no /search (HTTP 404). " + searxngSetup
	case e.StatusCode >= 300 && e.StatusCode < 400:
		te.Code = tool.CodeConfig
		te.Message = fmt.Sprintf("The SearXNG instance redirected /search (HTTP %d), as a login or proxy page does. %s", e.StatusCode, searxngSetup)
	default:
		te = tool.HTTPStatusError(e.StatusCode, e.RetryAfter, fmt.Sprintf("SearXNG answered HTTP %d (%s)", e.StatusCode, describe("", e.Message)))
		te.Err = e
	}
	return te
}
