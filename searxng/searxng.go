// Package searxng is a client for the JSON API of a SearXNG instance
// (https://docs.searxng.org/dev/search_api.html), the open-source metasearch
// engine a user runs themselves: no vendor account, no key.
//
// It follows the shape of google/go-github: a [Client] over an *http.Client,
// typed request and response structs, and a typed [*Error] for upstream
// failures. SearXNG has no canonical public address, so [NewClient] needs a
// base URL; there is no default.
//
// Two answers need care. An instance whose settings.yml leaves "json" out of
// search.formats answers every format=json request with 403 Forbidden
// ([Error.FormatDisabled]); an instance with its bot limiter on answers a
// client it distrusts with 429 Too Many Requests. A 200 with no results and
// a non-empty UnresponsiveEngines is an outage of the engines behind the
// instance, not an empty answer.
//
// Supported surface: [NewClient] and its options, the typed requests and
// responses, the Decode functions, [*Error] with its fields and
// [CheckResponse]. Sending, the body cap and secret scrubbing are
// Toolport's internal client core, shared by all its API clients.
package searxng

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolport/toolport/internal/httpclient"
)

// Defaults and limits.
const (
	DefaultUserAgent    = "toolport (+https://github.com/toolport/toolport)"
	DefaultMaxBodyBytes = 5 << 20
	MaxQueryBytes       = 2048

	searchPath = "/search"
)

// ErrBodyTooLarge reports a response body over the client's limit.
var ErrBodyTooLarge = errors.New("searxng: response body too large")

// ErrNoBaseURL reports a client made without WithBaseURL.
var ErrNoBaseURL = errors.New("searxng: no base URL: a SearXNG instance has no default address; pass WithBaseURL")

// Client calls one SearXNG instance. It is safe for concurrent use.
type Client struct {
	core *httpclient.Core // base URL, User-Agent, body cap, sending, CheckResponse
}

// Option configures a Client.
type Option func(*Client) error

// WithBaseURL names the instance: scheme and host and an optional path prefix
// (e.g. "https://search.example.org" or "http://127.0.0.1:8888/searxng"). The
// client appends /search.
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

// NewClient returns a client for the instance WithBaseURL names; without it,
// it fails with [ErrNoBaseURL]. A nil httpClient means a new client over its
// own pooled transport; deadlines come from the context of each call.
// Redirects are not followed: an instance that redirects /search (to a login
// page, say) is misconfigured for API use, and following it would hide that.
func NewClient(httpClient *http.Client, opts ...Option) (*Client, error) {
	core := httpclient.NewCore("searxng", "", DefaultUserAgent, DefaultMaxBodyBytes)
	core.SetBodyTooLarge(ErrBodyTooLarge)
	c, err := httpclient.Build(&Client{core: core}, core, httpClient, opts)
	if err == nil && core.BaseURL() == nil {
		return nil, ErrNoBaseURL
	}
	return c, err
}

// SafeSearch is SearXNG's safesearch level.
type SafeSearch int

// The three levels; SafeSearchDefault leaves the instance's setting.
const (
	SafeSearchDefault  SafeSearch = -1
	SafeSearchOff      SafeSearch = 0
	SafeSearchModerate SafeSearch = 1
	SafeSearchStrict   SafeSearch = 2
)

// TimeRange is SearXNG's time_range: "day", "week", "month" or "year".
type TimeRange string

// The documented time ranges.
const (
	TimeRangeDay   TimeRange = "day"
	TimeRangeWeek  TimeRange = "week"
	TimeRangeMonth TimeRange = "month"
	TimeRangeYear  TimeRange = "year"
)

// SearchParams is one search request. Zero values are left to the
// instance's defaults, except Categories, which defaults to "general" (web
// results; an instance's default tab could be another).
type SearchParams struct {
	Query      string     // q, required
	PageNo     int        // 1-based page; 0 means 1
	Language   string     // e.g. "en", "de-CH", "all"
	SafeSearch SafeSearch // SafeSearchDefault leaves it out
	TimeRange  TimeRange
	Categories string // comma-separated; "" means "general"
}

// Validate checks p before a request is sent.
func (p *SearchParams) Validate() error {
	switch {
	case strings.TrimSpace(p.Query) == "":
		return errors.New("query must not be empty")
	case len(p.Query) > MaxQueryBytes:
		return fmt.Errorf("query is too long: at most %d bytes", MaxQueryBytes)
	case p.PageNo < 0:
		return fmt.Errorf("pageno is 1-based, got %d", p.PageNo)
	case p.SafeSearch < SafeSearchDefault || p.SafeSearch > SafeSearchStrict:
		return fmt.Errorf("safesearch must be 0, 1 or 2, got %d", p.SafeSearch)
	}
	switch p.TimeRange {
	case "", TimeRangeDay, TimeRangeWeek, TimeRangeMonth, TimeRangeYear:
	default:
		return fmt.Errorf("time_range must be day, week, month or year, got %q", p.TimeRange)
	}
	return nil
}

func (p *SearchParams) values() url.Values {
	v := url.Values{}
	v.Set("q", strings.TrimSpace(p.Query))
	v.Set("format", "json")
	v.Set("pageno", strconv.Itoa(max(p.PageNo, 1)))
	cat := p.Categories
	if cat == "" {
		cat = "general"
	}
	v.Set("categories", cat)
	if p.Language != "" {
		v.Set("language", p.Language)
	}
	if p.SafeSearch != SafeSearchDefault {
		v.Set("safesearch", strconv.Itoa(int(p.SafeSearch)))
	}
	if p.TimeRange != "" {
		v.Set("time_range", string(p.TimeRange))
	}
	return v
}

// SearchResponse is the part of SearXNG's JSON answer that Toolport reads.
type SearchResponse struct {
	Query           string   `json:"query"`
	NumberOfResults int64    `json:"number_of_results"` // the engines' estimate; 0 when none gave one
	Results         []Result `json:"results"`
	Answers         []Answer `json:"answers"`
	Suggestions     []string `json:"suggestions"`
	// UnresponsiveEngines lists the engines that failed this search, with why.
	UnresponsiveEngines []UnresponsiveEngine `json:"unresponsive_engines"`
}

// Result is one merged result. Content is plain text.
type Result struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Content  string   `json:"content"`
	Engine   string   `json:"engine"`
	Engines  []string `json:"engines"`
	Score    float64  `json:"score"`
	Category string   `json:"category"`
	// PublishedDate is as the engine gave it (ISO 8601, usually without a
	// zone); "" when absent or null.
	PublishedDate string `json:"publishedDate"`
}

// Answer is a direct answer. Older instances send a bare string, newer ones
// an object {"answer": …, "url": …}; both decode here.
type Answer struct {
	Text string
	URL  string
}

// UnmarshalJSON accepts a string or an object with "answer" (and "url").
func (a *Answer) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &a.Text)
	}
	var o struct {
		Answer string `json:"answer"`
		URL    string `json:"url"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	a.Text, a.URL = o.Answer, o.URL
	return nil
}

// UnresponsiveEngine is one [name, reason] pair of unresponsive_engines.
type UnresponsiveEngine struct {
	Name   string
	Reason string // e.g. "timeout", "CAPTCHA", "Suspended: too many requests"
}

// UnmarshalJSON reads the pair; a missing reason is "".
func (u *UnresponsiveEngine) UnmarshalJSON(b []byte) error {
	var pair []string
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) > 0 {
		u.Name = pair[0]
	}
	if len(pair) > 1 {
		u.Reason = pair[1]
	}
	return nil
}

// Search runs one search. Failures are an [*Error] for an error status,
// [ErrBodyTooLarge], a [*ParseError], or a transport or context error.
func (c *Client) Search(ctx context.Context, p *SearchParams) (*SearchResponse, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	return httpclient.GetDecoded(ctx, c.core, searchPath, p.values(), CheckResponse, DecodeSearchResponse)
}

// ParseError reports a body that is not SearXNG's JSON answer.
type ParseError struct {
	ContentType string
	Err         error // the decoder's error; it names a position, never the body
}

func (e *ParseError) Error() string {
	return httpclient.ParseErrorText("searxng", e.ContentType, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// errNotObject reports a JSON body that is not an object (e.g. null): an
// HTML page or proxy answer served with 200 must not pass for "no results".
var errNotObject = errors.New("the body is not a JSON object with \"results\"")

// DecodeSearchResponse parses a 200 body.
func DecodeSearchResponse(body []byte, contentType string) (*SearchResponse, error) {
	body = httpclient.TrimBOM(body)
	var probe struct {
		Results *json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, &ParseError{ContentType: contentType, Err: err}
	}
	if probe.Results == nil {
		return nil, &ParseError{ContentType: contentType, Err: errNotObject}
	}
	var sr SearchResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		return nil, &ParseError{ContentType: contentType, Err: err}
	}
	return &sr, nil
}
