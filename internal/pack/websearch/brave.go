package websearch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/tool"
)

const braveDescription = "Search the web using Brave Search API and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks."

// BraveInput is the input of web_search_brave.
type BraveInput struct {
	Query  string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count  int    `json:"count,omitempty" jsonschema:"Number of results to return (1-20)" schema:"minimum=1,maximum=20,default=10"`
	Offset int    `json:"offset,omitempty" jsonschema:"Result offset for pagination: how many results to skip. Brave serves results in pages of count (at most 10 pages), so offset must be below 10 × count; a multiple of count (0, 10, 20 … for count 10) costs one request, any other offset may cost two." schema:"minimum=0,default=0"`

	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"Only include search results from these domains"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"Never include search results from these domains"`

	Freshness  string `json:"freshness,omitempty" jsonschema:"Only results Brave found in this period: pd (past day), pw (past week), pm (past month), py (past year), or a date range YYYY-MM-DDtoYYYY-MM-DD" schema:"pattern=^(pd|pw|pm|py|[0-9]{4}-[0-9]{2}-[0-9]{2}to[0-9]{4}-[0-9]{2}-[0-9]{2})$"`
	Country    string `json:"country,omitempty" jsonschema:"Two-letter country code the results should come from (e.g. US, DE), or ALL" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string `json:"search_lang,omitempty" jsonschema:"Language code of the results (e.g. en, de, pt-br)" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off, moderate (Brave's default) or strict" schema:"enum=off|moderate|strict"`
}

// Brave declares web_search_brave.
//
// Brave's offset parameter is a page index (0-9) in units of count, not a
// result offset: the tool's offset, a number of results to skip, is sent as
// page offset/count and the first offset%count results of that page are
// dropped. Domain filters are applied to the results (Brave has none); when
// they leave fewer than count results, up to Config.MaxExtraPages further
// pages are fetched, pausing for Brave's per-second window when its headers
// say it is spent.
func Brave(cfg Config) *tool.Tool {
	client, clientErr := cfg.braveClient()
	b := &braveSearch{cfg: cfg, client: client, clientErr: clientErr}
	return tool.Must(tool.New(tool.Spec{
		Name:        "web_search_brave",
		Title:       "Brave Search",
		Description: braveDescription,
		Pack:        "web",
		Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true},
		Available:   cfg.braveAvailable(clientErr),
	}, b.search))
}

type braveSearch struct {
	cfg       Config
	client    *brave.Client
	clientErr error
}

func (b *braveSearch) search(ctx context.Context, in BraveInput) (Output, error) {
	if err := b.cfg.braveReady("web_search_brave", b.clientErr); err != nil {
		return Output{}, err
	}
	filter, err := newDomainFilter(in.AllowedDomains, in.BlockedDomains)
	if err != nil {
		return Output{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxCount {
		in.Count = 10 // the registry applies the default; a direct caller may not
	}
	page, skip := in.Offset/in.Count, in.Offset%in.Count
	if page > brave.MaxPage {
		return Output{}, validationError("offset", "maximum", fmt.Sprintf(
			"offset: Brave serves at most %d pages of count results, so offset must be below %d for count %d, got %d",
			brave.MaxPage+1, (brave.MaxPage+1)*in.Count, in.Count, in.Offset))
	}
	params := brave.SearchParams{
		Query: strings.TrimSpace(in.Query), Count: in.Count, Offset: page,
		Country: in.Country, SearchLang: in.SearchLang, SafeSearch: in.SafeSearch, Freshness: in.Freshness,
	}
	if err := params.Validate(); err != nil {
		return Output{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, b.cfg.timeout())
	defer cancel()

	results := []Result{}
	seen := map[string]bool{}
	for request := 0; ; request++ {
		resp, err := b.client.Search(ctx, &params)
		if err != nil {
			if request > 0 {
				break // a further page failed: the results so far still stand
			}
			var be *brave.Error
			if errors.As(err, &be) {
				return Output{}, braveAPIError(be)
			}
			return Output{}, upstreamFailure("Brave Search", err, parent, b.cfg.timeout())
		}
		items := resp.Results()
		if request == 0 {
			items = items[min(skip, len(items)):]
		}
		for _, r := range items {
			if len(results) == in.Count {
				break
			}
			if r.URL == "" || seen[r.URL] || !filter.allows(r.URL) {
				continue
			}
			seen[r.URL] = true
			results = append(results, Result{Title: brave.PlainText(r.Title), URL: r.URL, Snippet: brave.PlainText(r.Description)})
		}
		more := resp.MoreResultsAvailable() || (resp.Query == nil && len(resp.Results()) >= in.Count)
		if len(results) >= in.Count || !more || params.Offset >= brave.MaxPage || request >= b.cfg.maxExtraPages() {
			break
		}
		if !b.awaitRateWindow(ctx, resp.RateLimit) {
			break
		}
		params.Offset++
	}
	return newOutput(params.Query, results, filter.active()), nil
}

// awaitRateWindow waits for a spent rate-limit window to reset before the next
// page, if that is soon enough. It reports whether to go on.
func (b *braveSearch) awaitRateWindow(ctx context.Context, rl brave.RateLimit) bool {
	var wait time.Duration
	for _, w := range rl.Windows {
		if w.Remaining == 0 {
			wait = max(wait, w.Reset)
			if w.Reset == 0 {
				wait = max(wait, time.Second)
			}
		}
	}
	if wait == 0 {
		return true
	}
	if wait > b.cfg.maxRateWait() {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
