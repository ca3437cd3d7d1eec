package websearch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolport/toolport/brave"
	"github.com/toolport/toolport/internal/textclip"
	"github.com/toolport/toolport/tool"
)

const braveDescription = "Search the web using Brave Search API and use the results to inform responses. Provides up-to-date information for current events and recent data. Returns search result information formatted as search result blocks, including links as markdown hyperlinks."

// BraveInput is the input of web_search_brave.
type BraveInput struct {
	Query  string `json:"query" jsonschema:"The search query to use" schema:"minLength=2"`
	Count  int    `json:"count,omitempty" jsonschema:"Number of results to return (1-20)" schema:"minimum=1,maximum=20,default=10"`
	Offset int    `json:"offset,omitempty" jsonschema:"Result offset for pagination: results to skip, below 10 × count; a multiple of count costs one request, others may cost two" schema:"minimum=0,default=0"`

	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"Only include search results from these domains"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"Never include search results from these domains"`

	Freshness  string `json:"freshness,omitempty" jsonschema:"Only results from the past day (pd), week (pw), month (pm), year (py), or a range YYYY-MM-DDtoYYYY-MM-DD" schema:"pattern=^(pd|pw|pm|py|[0-9]{4}-[0-9]{2}-[0-9]{2}to[0-9]{4}-[0-9]{2}-[0-9]{2})$"`
	Country    string `json:"country,omitempty" jsonschema:"Country of the results (e.g. US, DE, or ALL)" schema:"pattern=^([A-Za-z]{2}|ALL|all)$"`
	SearchLang string `json:"search_lang,omitempty" jsonschema:"Language code of the results (e.g. en, de, pt-br)" schema:"pattern=^[A-Za-z]{2}(-[A-Za-z]+)?$,maxLength=10"`
	SafeSearch string `json:"safesearch,omitempty" jsonschema:"Adult content filter: off, moderate (Brave's default) or strict" schema:"enum=off|moderate|strict"`

	ExtraSnippets bool     `json:"extra_snippets,omitempty" jsonschema:"Also return up to 5 more excerpts of each result's page"`
	Goggles       []string `json:"goggles,omitempty" jsonschema:"Goggles that re-rank the results: URLs or inline definitions" schema:"maxItems=5,items.minLength=1,items.maxLength=2048"`
	ResultFilter  []string `json:"result_filter,omitempty" jsonschema:"Blocks to return (default web only): web results, and faq, discussions, infobox, news, videos as fields of their own when Brave has them" schema:"maxItems=6,items.enum=web|faq|discussions|infobox|news|videos"`
}

// Bounds that keep the extra blocks compact for a model: Brave's own
// answers can run to kilobytes per block.
const (
	maxBlockItems   = 5   // items kept per extra block
	maxExtraSnippet = 300 // runes per extra snippet
	maxBlockText    = 500 // runes per answer, description or comment in a block
	maxAttributes   = 10  // infobox label-value pairs
)

// BraveResult is one web_search_brave result: the common [Result] fields and
// the extra excerpts Brave returns when asked.
type BraveResult struct {
	Title         string   `json:"title" jsonschema:"Page title"`
	URL           string   `json:"url" jsonschema:"Full URL"`
	Snippet       string   `json:"snippet" jsonschema:"Result snippet or description"`
	ExtraSnippets []string `json:"extra_snippets,omitempty" jsonschema:"Further excerpts from the page (with extra_snippets)"`
}

// FAQItem is one question and answer from Brave's faq block.
type FAQItem struct {
	Question string `json:"question" jsonschema:"The question"`
	Answer   string `json:"answer" jsonschema:"The answer, as the page gives it"`
	URL      string `json:"url" jsonschema:"The page it is from"`
}

// Discussion is one forum thread from Brave's discussions block.
type Discussion struct {
	Title      string `json:"title" jsonschema:"Title of the thread"`
	URL        string `json:"url" jsonschema:"Full URL of the thread"`
	Forum      string `json:"forum,omitempty" jsonschema:"The forum, e.g. r/golang"`
	Answers    int    `json:"answers,omitempty" jsonschema:"Number of answers, when known"`
	Question   string `json:"question,omitempty" jsonschema:"The question the thread asks"`
	TopComment string `json:"top_comment,omitempty" jsonschema:"The highest-rated answer"`
	Age        string `json:"age,omitempty" jsonschema:"How old the thread is, as Brave says it"`
}

// InfoboxItem is a knowledge panel from Brave's infobox block.
type InfoboxItem struct {
	Title       string   `json:"title" jsonschema:"What the panel is about"`
	URL         string   `json:"url,omitempty" jsonschema:"Its source page"`
	Description string   `json:"description,omitempty" jsonschema:"A description of it"`
	Attributes  []string `json:"attributes,omitempty" jsonschema:"Facts as 'label: value'"`
}

// BraveOutput is what web_search_brave returns: the common [Output] fields
// and, when result_filter asks for them, Brave's other blocks, each omitted
// when empty.
type BraveOutput struct {
	Results     []BraveResult `json:"results" jsonschema:"The search results, best first"`
	Count       int           `json:"count" jsonschema:"Number of results returned"`
	FAQ         []FAQItem     `json:"faq,omitempty" jsonschema:"Questions and answers about the query (result_filter faq)"`
	Discussions []Discussion  `json:"discussions,omitempty" jsonschema:"Forum threads about the query (result_filter discussions)"`
	Infobox     []InfoboxItem `json:"infobox,omitempty" jsonschema:"Knowledge panel about what the query names (result_filter infobox)"`
	News        []NewsResult  `json:"news,omitempty" jsonschema:"News articles about the query (result_filter news)"`
	Videos      []VideoResult `json:"videos,omitempty" jsonschema:"Videos about the query (result_filter videos)"`

	query    string
	filtered bool
}

// Summary says how many results the query found, and which extra blocks
// came with them.
func (o BraveOutput) Summary() string {
	s := Output{Count: o.Count, query: o.query, filtered: o.filtered}.Summary()
	var extra []string
	for _, b := range []struct {
		n         int
		one, many string
	}{
		{len(o.FAQ), "FAQ answer", "FAQ answers"}, {len(o.Discussions), "discussion", "discussions"},
		{len(o.Infobox), "infobox", "infoboxes"}, {len(o.News), "news article", "news articles"},
		{len(o.Videos), "video", "videos"},
	} {
		switch {
		case b.n == 1:
			extra = append(extra, "1 "+b.one)
		case b.n > 1:
			extra = append(extra, fmt.Sprintf("%d %s", b.n, b.many))
		}
	}
	if len(extra) > 0 {
		s += "; also " + strings.Join(extra, ", ")
	}
	return s
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

func (b *braveSearch) search(ctx context.Context, in BraveInput) (BraveOutput, error) {
	if err := b.cfg.braveReady("web_search_brave", b.clientErr); err != nil {
		return BraveOutput{}, err
	}
	filter, err := newDomainFilter(in.AllowedDomains, in.BlockedDomains)
	if err != nil {
		return BraveOutput{}, err
	}
	if in.Count < 1 || in.Count > brave.MaxCount {
		in.Count = 10 // the registry applies the default; a direct caller may not
	}
	page, skip := in.Offset/in.Count, in.Offset%in.Count
	if page > brave.MaxPage {
		return BraveOutput{}, validationError("offset", "maximum", fmt.Sprintf(
			"offset: Brave serves at most %d pages of count results, so offset must be below %d for count %d, got %d",
			brave.MaxPage+1, (brave.MaxPage+1)*in.Count, in.Count, in.Offset))
	}
	params := brave.SearchParams{
		Query: strings.TrimSpace(in.Query), Count: in.Count, Offset: page,
		Country: in.Country, SearchLang: in.SearchLang, SafeSearch: in.SafeSearch, Freshness: in.Freshness,
		ExtraSnippets: in.ExtraSnippets, Goggles: in.Goggles,
	}
	wantWeb := len(in.ResultFilter) == 0 || slices.Contains(in.ResultFilter, "web")
	if len(in.ResultFilter) > 0 {
		// query rides along so that more_results_available still says
		// whether a further page exists.
		params.ResultFilter = slices.Compact(slices.Sorted(slices.Values(append([]string{"query"}, in.ResultFilter...))))
	}
	if err := params.Validate(); err != nil {
		return BraveOutput{}, &tool.Error{Code: tool.CodeValidation, Message: err.Error(), Err: err}
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, b.cfg.timeout())
	defer cancel()

	out := BraveOutput{Results: []BraveResult{}, query: params.Query, filtered: filter.active()}
	seen := map[string]bool{}
	for request := 0; ; request++ {
		resp, err := b.client.Search(ctx, &params)
		if err != nil {
			if request > 0 {
				break // a further page failed: the results so far still stand
			}
			return BraveOutput{}, braveFailure("web_search_brave", err, parent, b.cfg.timeout())
		}
		items := resp.Results()
		if request == 0 {
			items = items[min(skip, len(items)):]
			out.addBlocks(resp, in.ResultFilter, filter)
		}
		for _, r := range items {
			if len(out.Results) == in.Count {
				break
			}
			if r.URL == "" || seen[r.URL] || !filter.allows(r.URL) {
				continue
			}
			seen[r.URL] = true
			res := BraveResult{Title: brave.PlainText(r.Title), URL: r.URL, Snippet: brave.PlainText(r.Description)}
			if in.ExtraSnippets {
				res.ExtraSnippets = clipAll(r.ExtraSnippets, brave.MaxExtraSnippets, maxExtraSnippet)
			}
			out.Results = append(out.Results, res)
		}
		more := resp.MoreResultsAvailable() || (resp.Query == nil && len(resp.Results()) >= in.Count)
		// Without web there are no results to refill; a further page
		// would only repeat the blocks.
		if !wantWeb || len(out.Results) >= in.Count || !more || params.Offset >= brave.MaxPage || request >= b.cfg.maxExtraPages() {
			break
		}
		if !b.awaitRateWindow(ctx, resp.RateLimit) {
			break
		}
		params.Offset++
	}
	out.Count = len(out.Results)
	return out, nil
}

// addBlocks copies the blocks result_filter asks for, compact: plain text,
// clipped, at most maxBlockItems each, and only from allowed domains.
func (o *BraveOutput) addBlocks(resp *brave.SearchResponse, want []string, filter domainFilter) {
	ok := func(block, url string) bool {
		return slices.Contains(want, block) && url != "" && filter.allows(url)
	}
	if resp.FAQ != nil {
		for _, q := range resp.FAQ.Results {
			if ok("faq", q.URL) && len(o.FAQ) < maxBlockItems {
				o.FAQ = append(o.FAQ, FAQItem{Question: brave.PlainText(q.Question), Answer: textclip.Runes(brave.PlainText(q.Answer), maxBlockText), URL: q.URL})
			}
		}
	}
	if resp.Discussions != nil {
		for _, d := range resp.Discussions.Results {
			if !ok("discussions", d.URL) || len(o.Discussions) == maxBlockItems {
				continue
			}
			item := Discussion{Title: brave.PlainText(d.Title), URL: d.URL, Age: d.Age}
			if f := d.Data; f != nil {
				item.Forum, item.Answers = f.ForumName, max(f.NumAnswers, 0)
				item.Question = textclip.Runes(brave.PlainText(f.Question), maxBlockText)
				item.TopComment = textclip.Runes(brave.PlainText(f.TopComment), maxBlockText)
			}
			if item.Question == "" {
				item.Question = textclip.Runes(brave.PlainText(d.Description), maxBlockText)
			}
			o.Discussions = append(o.Discussions, item)
		}
	}
	if resp.Infobox != nil {
		for _, ib := range resp.Infobox.Results {
			// An infobox may have no URL of its own; only a URL the domain
			// filter refuses drops it.
			if !slices.Contains(want, "infobox") || (ib.URL != "" && !filter.allows(ib.URL)) || len(o.Infobox) == maxBlockItems {
				continue
			}
			desc := ib.LongDesc
			if desc == "" {
				desc = ib.Description
			}
			item := InfoboxItem{Title: brave.PlainText(ib.Title), URL: ib.URL, Description: textclip.Runes(brave.PlainText(desc), maxBlockText)}
			for _, a := range ib.Attributes {
				if len(a) < 2 || len(item.Attributes) == maxAttributes {
					continue
				}
				if label, value := brave.PlainText(string(a[0])), brave.PlainText(string(a[1])); label != "" && value != "" {
					item.Attributes = append(item.Attributes, textclip.Runes(label+": "+value, maxExtraSnippet))
				}
			}
			o.Infobox = append(o.Infobox, item)
		}
	}
	if resp.News != nil {
		for _, n := range resp.News.Results {
			if ok("news", n.URL) && len(o.News) < maxBlockItems {
				o.News = append(o.News, NewsResult{Title: brave.PlainText(n.Title), URL: n.URL,
					Description: textclip.Runes(brave.PlainText(n.Description), maxExtraSnippet), Source: metaHost(n.MetaURL), Age: n.Age})
			}
		}
	}
	if resp.Videos != nil {
		for _, v := range resp.Videos.Results {
			if !ok("videos", v.URL) || len(o.Videos) == maxBlockItems {
				continue
			}
			item := VideoResult{Title: brave.PlainText(v.Title), URL: v.URL, Age: v.Age}
			if d := v.Video; d != nil {
				item.Duration, item.Creator, item.Publisher = d.Duration, d.Creator, d.Publisher
				if item.Creator == "" && d.Author != nil {
					item.Creator = d.Author.Name
				}
			}
			o.Videos = append(o.Videos, item)
		}
	}
}

// clipAll returns the first n of ss as plain text, each clipped to runes;
// empty ones are dropped.
func clipAll(ss []string, n, runes int) []string {
	var out []string
	for _, s := range ss {
		if t := brave.PlainText(s); t != "" && len(out) < n {
			out = append(out, textclip.Runes(t, runes))
		}
	}
	return out
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
