// Package brave is a client for the Brave Search API: web search
// (https://api.search.brave.com/res/v1/web/search) and the news, image and
// video searches beside it (/res/v1/news/search, /res/v1/images/search,
// /res/v1/videos/search).
//
// It follows the shape of google/go-github: a [Client] built once over an
// *http.Client, typed request and response structs, and a typed [*Error] for
// every upstream failure, so callers branch on values rather than on text.
// The API key travels only in the X-Subscription-Token header; it never
// appears in a URL, an error message or a returned value.
//
// Supported surface: [NewClient] and its options, the typed requests and
// responses, the Decode functions, [*Error] with its fields and
// [CheckResponse]. Sending, the body cap and secret scrubbing are
// Toolport's internal client core, shared by all its API clients.
package brave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Defaults and the API's own limits.
const (
	DefaultBaseURL      = "https://api.search.brave.com"
	DefaultUserAgent    = "toolport (+https://github.com/toolport/toolport)"
	DefaultMaxBodyBytes = 5 << 20 // a page of 20 results is ~60 KB; anything near this is not a search answer

	MaxCount      = 20  // results per page
	MaxPage       = 9   // Brave's offset is a page index 0..9
	MaxQueryRunes = 400 // Brave rejects longer queries
	MaxQueryWords = 50

	searchPath = "/res/v1/web/search"
)

// ErrBodyTooLarge reports a response body over the client's limit.
var ErrBodyTooLarge = errors.New("brave: response body too large")

// Client calls the Brave Web Search API. It is safe for concurrent use.
type Client struct {
	core    *httpclient.Core // base URL, User-Agent, key header, body cap, sending, CheckResponse
	limiter Limiter
}

// Limiter grants requests at a rate. Wait blocks until one may go; an error
// that has a RetryAfter() time.Duration method means the wait would be too
// long.
type Limiter interface {
	Wait(ctx context.Context) error
}

// WithLimiter makes every request wait for l first: Brave's per-second limit
// kept on the client's side, and, with a limiter shared between processes,
// kept by all of them together. A wait that would be too long fails as a
// RATE_LIMITED [*Error] with RetryAfter set, without a request.
func WithLimiter(l Limiter) Option {
	return func(c *Client) error {
		c.limiter = l
		return nil
	}
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL points the client at another server: scheme and host (and an
// optional path prefix), e.g. "http://127.0.0.1:8081". The client appends
// each endpoint's path, e.g. /res/v1/web/search.
func WithBaseURL(raw string) Option {
	return func(c *Client) error { return c.core.SetBaseURL(raw) }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) error { c.core.SetUserAgent(ua); return nil }
}

// WithMaxBodyBytes bounds how much of a response body is read.
func WithMaxBodyBytes(n int64) Option {
	return func(c *Client) error { c.core.SetMaxBodyBytes(n); return nil }
}

// NewClient returns a client that authenticates with apiKey. A nil httpClient
// means a new client over its own pooled transport ([httpclient.NewTransport]);
// deadlines come from the context of each call.
// The client never follows redirects: the API does not send them, and following
// one would hand the subscription token to another host.
func NewClient(httpClient *http.Client, apiKey string, opts ...Option) (*Client, error) {
	core := httpclient.NewCore("brave", DefaultBaseURL, DefaultUserAgent, DefaultMaxBodyBytes)
	core.SetHeader("X-Subscription-Token", apiKey)
	core.AddSecret(apiKey)
	core.SetBodyTooLarge(ErrBodyTooLarge)
	c := &Client{core: core}
	return httpclient.Build(c, core, httpClient, opts)
}

// SearchParams is one web search request. Zero values are left to Brave's
// defaults.
type SearchParams struct {
	Query string // q: required, at most 400 characters and 50 words
	Count int    // results per page, 1..20 (Brave's default is 20)
	// Offset is a PAGE index, 0..9, in units of Count: Offset 1 with Count 10
	// returns results 11-20. It is not a result offset.
	Offset     int
	Country    string // two-letter country code, or "ALL"
	SearchLang string // e.g. "en", "pt-br"
	SafeSearch string // off, moderate or strict
	Freshness  string // pd, pw, pm, py, or YYYY-MM-DDtoYYYY-MM-DD

	// ExtraSnippets asks for up to 5 further excerpts per web result.
	ExtraSnippets bool
	// Goggles re-rank the results: each is a Goggle's URL or an inline
	// definition, sent as a repeated goggles parameter.
	Goggles []string
	// ResultFilter names the blocks to return (see [ResultFilters]); empty
	// means Brave's default, every block that applies.
	ResultFilter []string
}

// Bounds on Goggles. Brave documents none; they keep the GET's query string
// well under the URL sizes servers accept.
const (
	MaxGoggles     = 5
	MaxGoggleBytes = 2048

	MaxExtraSnippets = 5 // extra excerpts Brave returns per result at most
)

// ResultFilters are the values result_filter accepts.
var ResultFilters = []string{"discussions", "faq", "infobox", "news", "query", "summarizer", "videos", "web", "locations"}

var (
	// Compiled on first use: every command of a binary that links this
	// package would pay for compiling them at start-up (BENCHMARKS.md).
	countryRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:[a-z]{2}|all)$`) })
	searchLangRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:[a-z]{2}(-[a-z]{2,4})?)$`) })
	dateRangeRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})$`)
	})
)

// Validate checks p against the API's documented limits, so that a mistake is
// reported before a request is spent on it.
func (p *SearchParams) Validate() error {
	q := strings.TrimSpace(p.Query)
	switch {
	case q == "":
		return errors.New("query must not be empty")
	case len([]rune(q)) > MaxQueryRunes:
		return fmt.Errorf("query is too long: Brave accepts at most %d characters", MaxQueryRunes)
	case len(strings.Fields(q)) > MaxQueryWords:
		return fmt.Errorf("query has too many words: Brave accepts at most %d", MaxQueryWords)
	case p.Count < 0 || p.Count > MaxCount:
		return fmt.Errorf("count must be between 1 and %d, got %d", MaxCount, p.Count)
	case p.Offset < 0 || p.Offset > MaxPage:
		return fmt.Errorf("offset is a page index and must be between 0 and %d, got %d", MaxPage, p.Offset)
	case p.Country != "" && !countryRe().MatchString(p.Country):
		return fmt.Errorf("country must be a two-letter country code or ALL, got %q", p.Country)
	case p.SearchLang != "" && !searchLangRe().MatchString(p.SearchLang):
		return fmt.Errorf("search_lang must be a language code such as en or pt-br, got %q", p.SearchLang)
	}
	switch p.SafeSearch {
	case "", "off", "moderate", "strict":
	default:
		return fmt.Errorf("safesearch must be off, moderate or strict, got %q", p.SafeSearch)
	}
	if err := validateGoggles(p.Goggles); err != nil {
		return err
	}
	for _, f := range p.ResultFilter {
		if !slices.Contains(ResultFilters, f) {
			return fmt.Errorf("result_filter: %q is not one of %s", f, strings.Join(ResultFilters, ", "))
		}
	}
	return ValidateFreshness(p.Freshness)
}

// validateGoggles checks goggles against [MaxGoggles] and [MaxGoggleBytes].
func validateGoggles(goggles []string) error {
	if len(goggles) > MaxGoggles {
		return fmt.Errorf("goggles: at most %d, got %d", MaxGoggles, len(goggles))
	}
	for i, g := range goggles {
		if strings.TrimSpace(g) == "" || len(g) > MaxGoggleBytes {
			return fmt.Errorf("goggles[%d] must be a Goggle URL or definition of 1 to %d bytes", i, MaxGoggleBytes)
		}
	}
	return nil
}

// ValidateFreshness checks a freshness filter: "" (none), pd, pw, pm, py, or a
// date range YYYY-MM-DDtoYYYY-MM-DD with real dates, the first not after the
// second.
func ValidateFreshness(f string) error {
	switch f {
	case "", "pd", "pw", "pm", "py":
		return nil
	}
	m := dateRangeRe().FindStringSubmatch(f)
	if m == nil {
		return fmt.Errorf("freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD, got %q", f)
	}
	from, err1 := time.Parse(time.DateOnly, m[1])
	to, err2 := time.Parse(time.DateOnly, m[2])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("freshness %q: not a valid date range", f)
	}
	if from.After(to) {
		return fmt.Errorf("freshness %q: the start date is after the end date", f)
	}
	return nil
}

// values renders p as the query string.
func (p *SearchParams) values() url.Values {
	v := url.Values{}
	v.Set("q", strings.TrimSpace(p.Query))
	if p.Count > 0 {
		v.Set("count", strconv.Itoa(p.Count))
	}
	if p.Offset > 0 {
		v.Set("offset", strconv.Itoa(p.Offset))
	}
	if p.Country != "" {
		v.Set("country", strings.ToUpper(p.Country))
	}
	if p.SearchLang != "" {
		v.Set("search_lang", strings.ToLower(p.SearchLang))
	}
	if p.SafeSearch != "" {
		v.Set("safesearch", p.SafeSearch)
	}
	if p.Freshness != "" {
		v.Set("freshness", p.Freshness)
	}
	if p.ExtraSnippets {
		v.Set("extra_snippets", "true")
	}
	for _, g := range p.Goggles {
		v.Add("goggles", g)
	}
	if len(p.ResultFilter) > 0 {
		v.Set("result_filter", strings.Join(p.ResultFilter, ","))
	}
	return v
}

// SearchResponse is the part of Brave's answer that Toolport reads. Web is nil
// when Brave found nothing (a 200 without a "web" block).
type SearchResponse struct {
	Type  string      `json:"type"`
	Query *Query      `json:"query,omitempty"`
	Web   *WebResults `json:"web,omitempty"`

	// The other blocks, each nil when absent. A block whose shape does not
	// decode is dropped rather than failing the search: the web results are
	// the answer, these are extras.
	FAQ         *FAQ         `json:"faq,omitempty"`
	Discussions *Discussions `json:"discussions,omitempty"`
	Infobox     *Infobox     `json:"infobox,omitempty"`
	News        *NewsBlock   `json:"news,omitempty"`
	Videos      *VideoBlock  `json:"videos,omitempty"`
	Locations   *Locations   `json:"locations,omitempty"` // places, for [Client.LocalPOIs]

	// RateLimit is read from the X-RateLimit-* headers.
	RateLimit RateLimit `json:"-"`
}

// Results returns the web results, or nil when there are none.
func (r *SearchResponse) Results() []WebResult {
	if r == nil || r.Web == nil {
		return nil
	}
	return r.Web.Results
}

// MoreResultsAvailable reports whether Brave says a further page exists.
func (r *SearchResponse) MoreResultsAvailable() bool {
	return r != nil && r.Query != nil && r.Query.MoreResultsAvailable
}

// Query describes how Brave understood the query.
type Query struct {
	Original             string `json:"original"`
	Altered              string `json:"altered,omitempty"` // the spellchecked query, when Brave changed it
	MoreResultsAvailable bool   `json:"more_results_available"`
	SpellcheckOff        bool   `json:"spellcheck_off,omitempty"`
	ShowStrictWarning    bool   `json:"show_strict_warning,omitempty"` // strict safesearch hid results`
}

// WebResults is the "web" block.
type WebResults struct {
	Type           string      `json:"type"`
	Results        []WebResult `json:"results"`
	FamilyFriendly bool        `json:"family_friendly"`
}

// WebResult is one web result. Title and Description are HTML fragments:
// they hold <strong> highlighting and entities such as &#x27;; see [PlainText].
type WebResult struct {
	Title         string   `json:"title"`
	URL           string   `json:"url"`
	Description   string   `json:"description"`
	Age           string   `json:"age,omitempty"`
	PageAge       string   `json:"page_age,omitempty"`
	Language      string   `json:"language,omitempty"`
	ExtraSnippets []string `json:"extra_snippets,omitempty"`
}

// Search runs one web search. Failures are an [*Error] for an upstream error
// status, [ErrBodyTooLarge], a [*ParseError] for a body that is not the
// expected JSON, or a transport or context error from the http.Client.
func (c *Client) Search(ctx context.Context, p *SearchParams) (*SearchResponse, error) {
	return query(ctx, c, searchPath, p, DecodeSearchResponse, func(r *SearchResponse) *RateLimit { return &r.RateLimit })
}

// params is what every endpoint's parameters do: check themselves before
// any request, and encode as a query string.
type params interface {
	Validate() error
	values() url.Values
}

// query runs one search of an endpoint: the parameters are checked, the
// body of a success is decoded by decode, and the rate-limit headers go
// where rateLimit points in the result.
func query[R any](ctx context.Context, c *Client, path string, p params,
	decode func(body []byte, contentType string) (*R, error), rateLimit func(*R) *RateLimit) (*R, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	body, resp, err := c.get(ctx, path, p.values())
	if err != nil {
		return nil, err
	}
	r, err := decode(body, resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	*rateLimit(r) = ParseRateLimit(resp.Header)
	return r, nil
}

// get sends one GET to path with query and returns the body of a 2xx answer;
// any other status is an [*Error] with the key scrubbed from its detail. The
// response's body is already closed.
func (c *Client) get(ctx context.Context, path string, query url.Values) ([]byte, *http.Response, error) {
	req, err := c.core.NewRequest(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := c.wait(ctx); err != nil {
		return nil, nil, err
	}
	resp, body, err := c.core.Do(req, c.check)
	return body, resp, err
}

// wait waits for the limiter, if any; a wait that would be too long is a
// RATE_LIMITED [*Error] with RetryAfter set.
func (c *Client) wait(ctx context.Context) error {
	if c.limiter == nil {
		return nil
	}
	err := c.limiter.Wait(ctx)
	var ra interface{ RetryAfter() time.Duration }
	if err != nil && errors.As(err, &ra) {
		return &Error{StatusCode: http.StatusTooManyRequests, Code: CodeRateLimited, RetryAfter: ra.RetryAfter(),
			Detail: "client-side limit: the next request is allowed in " + ra.RetryAfter().Round(time.Millisecond).String()}
	}
	return err
}

// check is [CheckResponse] with the key scrubbed from the upstream's text
// (Brave has echoed a bad token back in an error's detail).
func (c *Client) check(resp *http.Response, body []byte, now time.Time) error {
	err := CheckResponse(resp, body, now)
	if e, ok := err.(*Error); ok {
		e.Detail = c.core.Scrub(e.Detail)
	}
	return err
}

// ParseError reports a body that is not the JSON the API documents.
type ParseError struct {
	ContentType string // the response's Content-Type
	Err         error  // the decoder's error; it names a position, never the body
}

func (e *ParseError) Error() string { return httpclient.ParseErrorText("brave", e.ContentType, e.Err) }

func (e *ParseError) Unwrap() error { return e.Err }

// DecodeSearchResponse parses a 200 body. A leading UTF-8 byte-order mark is
// ignored. A body whose type is "ErrorResponse" is returned as an [*Error].
func DecodeSearchResponse(body []byte, contentType string) (*SearchResponse, error) {
	body = httpclient.TrimBOM(body)
	// The optional blocks are read as raw JSON first (the outer fields
	// shadow SearchResponse's) and decoded one by one, each on its own.
	var w struct {
		SearchResponse
		FAQ         json.RawMessage `json:"faq"`
		Discussions json.RawMessage `json:"discussions"`
		Infobox     json.RawMessage `json:"infobox"`
		News        json.RawMessage `json:"news"`
		Videos      json.RawMessage `json:"videos"`
		Locations   json.RawMessage `json:"locations"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &ParseError{ContentType: contentType, Err: err}
	}
	sr := w.SearchResponse
	sr.FAQ = decodeBlock[FAQ](w.FAQ)
	sr.Discussions = decodeBlock[Discussions](w.Discussions)
	sr.Infobox = decodeBlock[Infobox](w.Infobox)
	sr.News = decodeBlock[NewsBlock](w.News)
	sr.Videos = decodeBlock[VideoBlock](w.Videos)
	sr.Locations = decodeBlock[Locations](w.Locations)
	if sr.Type == "ErrorResponse" {
		e := &Error{StatusCode: http.StatusOK}
		e.fill(body)
		return nil, e
	}
	return &sr, nil
}
