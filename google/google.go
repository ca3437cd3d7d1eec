// Package google is a client for the Google Custom Search JSON API
// (https://customsearch.googleapis.com/customsearch/v1).
//
// Google closed this API to new customers and ends it on 2027-01-01
// ([EndOfService]); existing keys keep working until then. The client follows the shape of
// google/go-github: a [Client] over an *http.Client, typed request and response
// structs, and a typed [*Error] for upstream failures.
//
// The API key travels in the "key" query parameter, as the API documents. It
// therefore sits in the request URL, so the client rewrites the URL in every
// transport error it returns (net/http's *url.Error prints it) and scrubs the
// key from upstream messages: no error from this package holds the key.
//
// Supported surface: [NewClient] and its options, the typed requests and
// responses, the Decode functions, [*Error] with its fields and
// [CheckResponse]. Sending, the body cap and secret scrubbing are
// Toolport's internal client core, shared by all its API clients.
package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// EndOfService is when the Custom Search JSON API stops serving. Google's
// overview (https://developers.google.com/custom-search/v1/overview) says
// "The Custom Search JSON API is closed to new customers" and "Existing
// Custom Search JSON API customers have until January 1, 2027 to transition
// to an alternative solution". Its site-restricted variant already ended on
// 2025-01-08, so nothing of the API remains after this date.
var EndOfService = time.Date(2027, time.January, 1, 0, 0, 0, 0, time.UTC)

// Defaults and the API's own limits.
const (
	DefaultBaseURL      = "https://customsearch.googleapis.com"
	DefaultUserAgent    = "toolport (+https://github.com/toolport/toolport)"
	DefaultMaxBodyBytes = 5 << 20

	MaxNum        = 10  // results per request
	MaxResults    = 100 // start + num may not exceed this
	MaxQueryBytes = 2048

	searchPath = "/customsearch/v1"
)

// ErrBodyTooLarge reports a response body over the client's limit.
var ErrBodyTooLarge = errors.New("google: response body too large")

// Client calls the Custom Search JSON API. It is safe for concurrent use.
type Client struct {
	core   *httpclient.Core // base URL, User-Agent, body cap, sending, scrubbing, CheckResponse
	apiKey string           // sent in the query, as the API requires
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL points the client at another server: scheme and host (and an
// optional path prefix), e.g. "http://127.0.0.1:8082". The client appends
// /customsearch/v1.
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
// Redirects are not followed: the API does not send them.
func NewClient(httpClient *http.Client, apiKey string, opts ...Option) (*Client, error) {
	core := httpclient.NewCore("google", DefaultBaseURL, DefaultUserAgent, DefaultMaxBodyBytes)
	core.AddSecret(apiKey)
	core.SetBodyTooLarge(ErrBodyTooLarge)
	return httpclient.Build(&Client{core: core, apiKey: apiKey}, core, httpClient, opts)
}

// SiteSearchFilter says whether SiteSearch includes or excludes its site.
type SiteSearchFilter string

// The two site filters.
const (
	SiteInclude SiteSearchFilter = "i"
	SiteExclude SiteSearchFilter = "e"
)

// SearchParams is one search request. Zero values are left to Google's
// defaults.
type SearchParams struct {
	Query    string // q, required
	EngineID string // cx: the Programmable Search Engine, required
	Num      int    // results, 1..10
	Start    int    // 1-based index of the first result; Start+Num may not exceed 100
	// SiteSearch restricts results to one site (and its subdomains), or
	// excludes it, as SiteSearchFilter says. The API takes a single site.
	SiteSearch       string
	SiteSearchFilter SiteSearchFilter
	Safe             string // "active" or "off"
}

// Validate checks p against the API's documented limits.
func (p *SearchParams) Validate() error {
	switch {
	case strings.TrimSpace(p.Query) == "":
		return errors.New("query must not be empty")
	case len(p.Query) > MaxQueryBytes:
		return fmt.Errorf("query is too long: at most %d bytes", MaxQueryBytes)
	case strings.TrimSpace(p.EngineID) == "":
		return errors.New("the search engine ID (cx) is not set")
	case p.Num < 0 || p.Num > MaxNum:
		return fmt.Errorf("num must be between 1 and %d, got %d", MaxNum, p.Num)
	case p.Start < 0:
		return fmt.Errorf("start is 1-based, got %d", p.Start)
	case max(p.Start, 1)+effectiveNum(p.Num) > MaxResults:
		return fmt.Errorf("start + num must be at most %d (Google serves only the first %d results), got start=%d num=%d",
			MaxResults, MaxResults, max(p.Start, 1), effectiveNum(p.Num))
	case p.SiteSearchFilter != "" && p.SiteSearchFilter != SiteInclude && p.SiteSearchFilter != SiteExclude:
		return fmt.Errorf("siteSearchFilter must be i or e, got %q", p.SiteSearchFilter)
	case p.SiteSearchFilter != "" && p.SiteSearch == "":
		return errors.New("siteSearchFilter needs siteSearch")
	}
	return nil
}

func effectiveNum(n int) int {
	if n == 0 {
		return MaxNum
	}
	return n
}

func (p *SearchParams) values(key string) url.Values {
	v := url.Values{}
	v.Set("key", key)
	v.Set("cx", strings.TrimSpace(p.EngineID))
	v.Set("q", strings.TrimSpace(p.Query))
	if p.Num > 0 {
		v.Set("num", strconv.Itoa(p.Num))
	}
	if p.Start > 0 {
		v.Set("start", strconv.Itoa(p.Start))
	}
	if p.SiteSearch != "" {
		v.Set("siteSearch", p.SiteSearch)
		filter := p.SiteSearchFilter
		if filter == "" {
			filter = SiteInclude
		}
		v.Set("siteSearchFilter", string(filter))
	}
	if p.Safe != "" {
		v.Set("safe", p.Safe)
	}
	return v
}

// SearchResponse is the part of Google's answer that Toolport reads. Items is
// empty when nothing matched.
type SearchResponse struct {
	Kind              string             `json:"kind"`
	Queries           Queries            `json:"queries"`
	SearchInformation *SearchInformation `json:"searchInformation,omitempty"`
	Items             []Item             `json:"items"`
}

// Queries describes this request and the next page, if any.
type Queries struct {
	Request  []QueryInfo `json:"request,omitempty"`
	NextPage []QueryInfo `json:"nextPage,omitempty"`
}

// QueryInfo is one entry of "queries".
type QueryInfo struct {
	TotalResults string `json:"totalResults,omitempty"` // a decimal string
	SearchTerms  string `json:"searchTerms,omitempty"`
	Count        int    `json:"count,omitempty"`
	StartIndex   int    `json:"startIndex,omitempty"`
}

// SearchInformation holds timing and the estimated total.
type SearchInformation struct {
	SearchTime   float64 `json:"searchTime"`
	TotalResults string  `json:"totalResults"` // a decimal string
}

// Item is one result. Title and Snippet are plain text; HTMLTitle and
// HTMLSnippet carry <b> highlighting.
type Item struct {
	Title       string `json:"title"`
	HTMLTitle   string `json:"htmlTitle,omitempty"`
	Link        string `json:"link"`
	DisplayLink string `json:"displayLink,omitempty"`
	Snippet     string `json:"snippet"`
	HTMLSnippet string `json:"htmlSnippet,omitempty"`
}

// Search runs one search. Failures are an [*Error] for an upstream error
// status, [ErrBodyTooLarge], a [*ParseError], or a transport or context error
// whose URL has the key replaced by "[REDACTED]".
func (c *Client) Search(ctx context.Context, p *SearchParams) (*SearchResponse, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("google: %w", err)
	}
	return httpclient.GetDecoded(ctx, c.core, searchPath, p.values(c.apiKey), c.check, DecodeSearchResponse)
}

// check is [CheckResponse] with the key scrubbed from the upstream's text.
func (c *Client) check(resp *http.Response, body []byte, now time.Time) error {
	err := CheckResponse(resp, body, now)
	if e, ok := err.(*Error); ok {
		e.scrub(c.core.Scrub)
	}
	return err
}

// ParseError reports a body that is not the JSON the API documents.
type ParseError struct {
	ContentType string
	Err         error // the decoder's error; it names a position, never the body
}

func (e *ParseError) Error() string { return httpclient.ParseErrorText("google", e.ContentType, e.Err) }

func (e *ParseError) Unwrap() error { return e.Err }

// DecodeSearchResponse parses a 200 body, tolerating a leading UTF-8 BOM.
func DecodeSearchResponse(body []byte, contentType string) (*SearchResponse, error) {
	body = httpclient.TrimBOM(body)
	var sr SearchResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		return nil, &ParseError{ContentType: contentType, Err: err}
	}
	return &sr, nil
}
