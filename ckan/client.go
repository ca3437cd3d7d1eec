// Package ckan is a client for the CKAN action API
// (https://docs.ckan.org/en/latest/api/). The Toolport tools built on it
// (searchDatasets, getDatasetDetails, …) live in internal/pack/opendata.
//
// The client works with any CKAN portal; the default is Israel's national
// portal, data.gov.il. It follows what real portals do rather than what the
// API reference promises: errors may arrive with HTTP 200 and
// "success": false, group_list pages with all_fields are capped at 25,
// tag_list has no usage counts, unknown parameters are silently ignored, and
// some CDNs refuse clients without a browser-like User-Agent.
//
// Failures are typed: [*Error] when the portal reported one, [*DecodeError]
// when its answer cannot be understood, [*NetworkError] when no answer came,
// and the context's error on cancellation or deadline. The client never
// retries: callers decide (Toolport's tool registry retries a transient
// failure once), and a retry inside the client would multiply theirs.
//
// Supported surface: [NewClient] and its options, the typed calls, requests
// and results, [*Error], [*DecodeError] and [*NetworkError]. Sending and the
// body cap are Toolport's internal client core, shared by all its API
// clients.
package ckan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Defaults of a new Client.
const (
	// DefaultBaseURL is data.gov.il's action API root.
	DefaultBaseURL = "https://data.gov.il/api/3"

	// DefaultUserAgent looks like a browser and names Toolport: data.gov.il's
	// CDN answers 403 to clients that send no User-Agent or a bare library one.
	DefaultUserAgent = "Mozilla/5.0 (compatible; Toolport/1.0; +https://github.com/toolport/toolport)"

	// DefaultTimeout bounds one API call, body included.
	DefaultTimeout = 30 * time.Second

	// DefaultMaxBodyBytes bounds a response body. A package_search of 1000
	// rows with full metadata is a few MB on real portals.
	DefaultMaxBodyBytes = 32 << 20
)

// apiPath is the path of the action API below a portal's root.
const apiPath = "/api/3"

// Client calls one CKAN portal's action API. It is safe for concurrent use.
// Build one with [NewClient].
type Client struct {
	core    *httpclient.Core // base URL (ending in /api/3), User-Agent, body cap, sending
	timeout time.Duration
	hc      *http.Client // from WithHTTPClient; handed to core by NewClient
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc (for a
// transport with an SSRF policy, a proxy, or test instrumentation). Portals
// redirect (http to https, a moved API), so the client follows redirects as
// hc does: hc decides where they may go.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithUserAgent sets the User-Agent header sent with every request.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.core.SetUserAgent(ua) }
}

// WithTimeout bounds each call, from sending the request to reading the last
// byte of the body. Zero or negative leaves the default.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMaxBodyBytes bounds the size of a response body; a larger body fails
// with a [*DecodeError]. Zero or negative leaves the default.
func WithMaxBodyBytes(n int64) Option {
	return func(c *Client) { c.core.SetMaxBodyBytes(n) }
}

// NewClient returns a client for the portal at baseURL. baseURL is either the
// portal's root ("https://demo.ckan.org", "http://127.0.0.1:8080") or its API
// root ("https://data.gov.il/api/3"); "/api/3" is appended when missing. An
// empty baseURL selects [DefaultBaseURL]. Only http and https URLs without
// credentials, query or fragment are accepted.
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	if strings.TrimSpace(baseURL) == "" {
		baseURL = DefaultBaseURL
	}
	base, err := normalizeBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{core: httpclient.NewCore("ckan", "", DefaultUserAgent, DefaultMaxBodyBytes), timeout: DefaultTimeout}
	if err := c.core.SetBaseURL(base.String()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBaseURL, err)
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		// After the options: a client made per call for a named portal
		// brings its own, and needs no transport of its own.
		c.hc = httpclient.NewClient(0)
	}
	c.core.SetRedirectingHTTPClient(c.hc)
	return c, nil
}

// ErrBaseURL reports a base URL the client cannot use. Test with errors.Is.
var ErrBaseURL = errors.New("ckan: invalid portal URL")

// normalizeBaseURL checks raw and returns it with the action API path.
func normalizeBaseURL(raw string) (*url.URL, error) {
	u, err := httpclient.ParseBaseURL(raw)
	if err != nil {
		// The reason never repeats the URL, which is the caller's own input.
		return nil, fmt.Errorf("%w: %v", ErrBaseURL, err)
	}
	p := strings.TrimSuffix(u.Path, "/action")
	if !strings.HasSuffix(p, apiPath) {
		p += apiPath
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}, nil
}

// BaseURL returns the action API root the client calls, e.g.
// "https://data.gov.il/api/3".
func (c *Client) BaseURL() string { return c.core.BaseURL().String() }

// SiteURL returns the portal's root, where dataset pages live
// ("https://data.gov.il").
func (c *Client) SiteURL() string {
	u := c.core.BaseURL()
	u.Path = strings.TrimSuffix(u.Path, apiPath)
	return u.String()
}

// ActionURL returns the URL of a GET call of action with params. It is what
// the tools report as apiUrl, so that a person can reproduce a result.
func (c *Client) ActionURL(action string, params url.Values) string {
	u := httpclient.WithPath(c.core.BaseURL(), "/action/"+action)
	if len(params) > 0 {
		u.RawQuery = params.Encode()
	}
	return u.String()
}

// Response describes the HTTP exchange behind a successful call.
type Response struct {
	Method     string
	URL        string // the full request URL (for POST, the endpoint)
	StatusCode int
	Header     http.Header
}

// Get calls action with params as a query string and decodes its result
// into result (a pointer), which may be nil to discard it.
func (c *Client) Get(ctx context.Context, action string, params url.Values, result any) (*Response, error) {
	return c.do(ctx, action, http.MethodGet, params, nil, result)
}

// Post calls action with body encoded as JSON, the form CKAN accepts for
// every action and the only sane one for structured arguments such as
// datastore filters.
func (c *Client) Post(ctx context.Context, action string, body, result any) (*Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("ckan: %s: encoding request: %w", action, err)
	}
	return c.do(ctx, action, http.MethodPost, nil, raw, result)
}

func (c *Client) do(ctx context.Context, action, method string, params url.Values, reqBody []byte, result any) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.core.NewRequest(ctx, method, "/action/"+action, params, reqBody)
	if err != nil {
		return nil, fmt.Errorf("ckan: %s: %w", action, err)
	}
	resp, body, err := c.core.Send(req)
	switch {
	case err == nil:
	case resp != nil && errors.Is(err, httpclient.ErrBodyTooLarge):
		return nil, &DecodeError{Action: action, StatusCode: resp.StatusCode,
			Reason: fmt.Sprintf("response larger than %d bytes; ask for fewer rows", c.core.MaxBodyBytes()), Err: err}
	case ctx.Err() != nil:
		// Report the context's error itself, so that callers (and
		// tool.Classify) see a cancellation or deadline, not a URL.
		return nil, fmt.Errorf("ckan: %s: %w", action, ctx.Err())
	default:
		return nil, &NetworkError{Action: action, Err: err}
	}
	info := &Response{Method: req.Method, URL: req.URL.String(), StatusCode: resp.StatusCode, Header: resp.Header}
	if err := decodeResponse(action, resp.StatusCode, resp.Header, body, result); err != nil {
		return nil, err
	}
	return info, nil
}

// envelope is the JSON every CKAN action answers with.
type envelope struct {
	Help    string          `json:"help"`
	Success *bool           `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// utf8BOM is stripped from bodies: some proxies and portals prepend it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decodeResponse turns a response into result or a typed error: [*Error]
// when the portal reported a failure (by status or by "success": false),
// [*DecodeError] when the body cannot be understood.
func decodeResponse(action string, status int, header http.Header, body []byte, result any) error {
	body = bytes.TrimPrefix(body, utf8BOM)
	var env envelope
	jsonErr := json.Unmarshal(body, &env)
	isEnvelope := jsonErr == nil && env.Success != nil

	if status < 200 || status > 299 {
		e := &Error{Action: action, StatusCode: status, RetryAfter: header.Get("Retry-After")}
		var bare string
		switch {
		case isEnvelope && !*env.Success:
			e.parseErrorObject(env.Error)
		case json.Unmarshal(body, &bare) == nil:
			// CKAN answers some bad requests with a bare JSON string, e.g.
			// 400 "Bad request - Action name not known: resource_search".
			e.Message = httpclient.ClipRunes(bare, 300)
		}
		return e
	}
	if jsonErr != nil {
		reason := "response is not valid JSON: " + jsonErr.Error()
		if ct := header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "json") {
			reason = fmt.Sprintf("response is %s, not JSON", mediaType(ct))
		}
		return &DecodeError{Action: action, StatusCode: status, Reason: reason, Snippet: snippet(body), Err: jsonErr}
	}
	if env.Success == nil {
		return &DecodeError{Action: action, StatusCode: status, Reason: `response is not a CKAN API response (no "success" field)`, Snippet: snippet(body)}
	}
	if !*env.Success {
		e := &Error{Action: action, StatusCode: status}
		e.parseErrorObject(env.Error)
		return e
	}
	if result == nil {
		return nil
	}
	if len(env.Result) == 0 || string(env.Result) == "null" {
		return &DecodeError{Action: action, StatusCode: status, Reason: `response has no "result"`}
	}
	if err := json.Unmarshal(env.Result, result); err != nil {
		return &DecodeError{Action: action, StatusCode: status, Reason: "unexpected result structure: " + jsonMessage(err), Err: err}
	}
	return nil
}

// mediaType returns the media type of a Content-Type header, without parameters.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(mt)
}

// jsonMessage describes a decoding error without echoing large values.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Sprintf("field %s: expected %v, got JSON %s", field, te.Type, te.Value)
	}
	return err.Error()
}

// snippet keeps the start of a body for an error message, valid UTF-8 only.
func snippet(body []byte) string {
	const max = 120
	s := httpclient.ClipRunes(strings.ToValidUTF8(string(body[:min(len(body), max*4)]), ""), max)
	return strings.Join(strings.Fields(s), " ")
}
