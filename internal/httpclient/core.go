package httpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Redacted is what every client puts where a secret was: one marker, so that
// a reader of logs and errors looks for one string.
const Redacted = "[REDACTED]"

// CheckFunc turns a response whose body has been read into the client's own
// typed error (nil for a success). now is the time a Retry-After date is
// measured from. Each public client exports its CheckResponse with this
// signature, go-github style.
type CheckFunc func(resp *http.Response, body []byte, now time.Time) error

// Core is the part every API client shares: the base URL, the User-Agent,
// static headers (an API key), the body cap, request building, sending,
// reading the capped body, the client's CheckResponse hook, and scrubbing its
// secrets from errors. A public client embeds one in its Client and keeps its
// own options, typed requests, typed errors and decoding; Core itself is not
// public, so that its shape can change without breaking importers.
//
// A Core is configured before first use (by the client's NewClient and
// options) and is then safe for concurrent use.
type Core struct {
	// Now is the clock Retry-After dates are measured against; tests set it.
	Now func() time.Time

	name      string
	http      *http.Client
	base      *url.URL
	userAgent string
	maxBody   int64
	header    http.Header
	secrets   []string
	tooLarge  error
}

// NewCore returns a core for the client called name (the prefix of its
// errors, e.g. "brave"). Its HTTP client is set next, by
// [Core.SetHTTPClient] or [Core.SetRedirectingHTTPClient]. defaultBase may be
// "" for an API with no default address; it must otherwise be a valid base
// URL (it is a constant of the client, so a bad one panics).
func NewCore(name, defaultBase, userAgent string, maxBody int64) *Core {
	c := &Core{
		Now: time.Now, name: name,
		userAgent: userAgent, maxBody: maxBody, header: http.Header{}, tooLarge: fmt.Errorf("%s: %w", name, ErrBodyTooLarge),
	}
	if defaultBase != "" {
		u, err := ParseBaseURL(defaultBase)
		if err != nil {
			panic(fmt.Sprintf("httpclient: %s: default base URL: %v", name, err))
		}
		c.base = u
	}
	return c
}

// SetBaseURL points the client at raw ([ParseBaseURL]'s rules: trailing
// slashes dropped, paths are appended to it as is). The error names the
// client and never repeats the URL, which may hold a secret.
func (c *Core) SetBaseURL(raw string) error {
	u, err := ParseBaseURL(raw)
	if err != nil {
		return fmt.Errorf("%s: base URL must be http(s)://host[:port][/path]: %w", c.name, err)
	}
	c.base = u
	return nil
}

// SetBaseURLUnlessEmpty is [Core.SetBaseURL], except that an empty (or
// all-space) raw keeps the default: for a keyless client whose caller
// passes an unset setting straight through.
func (c *Core) SetBaseURLUnlessEmpty(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	return c.SetBaseURL(raw)
}

// BaseURL returns the base URL, nil when none is set.
func (c *Core) BaseURL() *url.URL {
	if c.base == nil {
		return nil
	}
	u := *c.base
	return &u
}

// SetUserAgent sets the User-Agent header; "" keeps the current one.
func (c *Core) SetUserAgent(ua string) {
	if ua != "" {
		c.userAgent = ua
	}
}

// UserAgent returns the User-Agent header requests carry.
func (c *Core) UserAgent() string { return c.userAgent }

// SetMaxBodyBytes bounds how much of a response body is read; n <= 0 keeps
// the current bound.
func (c *Core) SetMaxBodyBytes(n int64) {
	if n > 0 {
		c.maxBody = n
	}
}

// MaxBodyBytes returns the body cap.
func (c *Core) MaxBodyBytes() int64 { return c.maxBody }

// SetHTTPClient sends requests through a copy of hc (nil: a new client over
// its own [NewTransport]) that refuses redirects ([NoRedirects]): a redirect
// would hand a key to another host, or hide a misconfigured base URL.
func (c *Core) SetHTTPClient(hc *http.Client) { c.http = NoRedirects(hc) }

// SetRedirectingHTTPClient sends requests through hc as it is, following
// redirects as hc does: for an upstream that redirects legitimately and a
// caller whose hc checks where (CKAN portals behind safehttp).
func (c *Core) SetRedirectingHTTPClient(hc *http.Client) { c.http = hc }

// HTTPClient returns the http.Client requests go through.
func (c *Core) HTTPClient() *http.Client { return c.http }

// SetHeader sets a header sent with every request, such as an API key.
func (c *Core) SetHeader(key, value string) { c.header.Set(key, value) }

// AddSecret registers s (an API key) to be replaced by [Redacted] wherever
// the core puts upstream or transport text into an error; "" is ignored.
func (c *Core) AddSecret(s string) {
	if s != "" {
		c.secrets = append(c.secrets, s)
	}
}

// SetBodyTooLarge sets the sentinel an over-long body's error wraps, for a
// client that exports its own (it should itself wrap [ErrBodyTooLarge] or
// be documented as the client's sentinel).
func (c *Core) SetBodyTooLarge(sentinel error) { c.tooLarge = sentinel }

// Scrub returns s with every registered secret, raw or query-escaped,
// replaced by [Redacted].
func (c *Core) Scrub(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
		if esc := url.QueryEscape(sec); esc != sec {
			s = strings.ReplaceAll(s, esc, Redacted)
		}
	}
	return s
}

// scrubErr scrubs the URL of a *url.Error in err, the one place net/http puts
// a request's URL (and so a key sent in the query) into an error's text. The
// *url.Error was made for this request alone, so it is changed in place.
func (c *Core) scrubErr(err error) error {
	var ue *url.Error
	if len(c.secrets) > 0 && errors.As(err, &ue) {
		ue.URL = c.Scrub(ue.URL)
	}
	return err
}

// NewRequest builds a request for path (appended to the base URL as is, see
// [WithPath]) with query, carrying Accept: application/json, the User-Agent
// and the static headers. A non-nil body is sent as application/json.
func (c *Core) NewRequest(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Request, error) {
	if c.base == nil {
		return nil, fmt.Errorf("%s: no base URL", c.name)
	}
	u := WithPath(c.base, path)
	u.RawQuery = query.Encode()
	var rd io.Reader // a nil *bytes.Reader would be a non-nil body
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("%s: building request: %w", c.name, c.scrubErr(err))
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Do sends req and reads its body under the cap; check (the client's
// CheckResponse; nil accepts any status) turns an error status into the
// client's typed error, which Do returns as is. The response's body is
// closed; its status and headers stay readable. Transport and context
// failures are wrapped with the client's name and scrubbed, so that
// errors.Is(err, context.DeadlineExceeded) holds and no key shows. A body
// over the cap fails with an error wrapping the client's sentinel (see
// [Core.SetBodyTooLarge]) rather than being cut.
func (c *Core) Do(req *http.Request, check CheckFunc) (*http.Response, []byte, error) {
	resp, body, err := c.Send(req)
	switch {
	case resp == nil && err != nil:
		return nil, nil, fmt.Errorf("%s: %w", c.name, err)
	case errors.Is(err, ErrBodyTooLarge):
		return nil, nil, fmt.Errorf("%w (over %d bytes)", c.tooLarge, c.maxBody)
	case err != nil:
		return nil, nil, fmt.Errorf("%s: reading response: %w", c.name, err)
	}
	if check != nil {
		if err := check(resp, body, c.Now()); err != nil {
			return nil, nil, err
		}
	}
	return resp, body, nil
}

// Send sends req and reads its body under the cap, for a client that
// classifies failures itself (ckan's NetworkError and DecodeError); most use
// [Core.Do]. A nil resp means no answer came (the transport's error,
// scrubbed); otherwise err is a body read error or wraps [ErrBodyTooLarge].
// The body is closed either way.
func (c *Core) Send(req *http.Request) (*http.Response, []byte, error) {
	if c.http == nil {
		return nil, nil, fmt.Errorf("%s: no HTTP client", c.name)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, c.scrubErr(err)
	}
	defer resp.Body.Close()
	body, err := ReadBody(resp.Body, c.maxBody)
	if err != nil {
		return resp, nil, c.scrubErr(err)
	}
	return resp, body, nil
}

// Get is [Core.NewRequest] for a GET, then [Core.Do].
func (c *Core) Get(ctx context.Context, path string, query url.Values, check CheckFunc) (*http.Response, []byte, error) {
	req, err := c.NewRequest(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return nil, nil, err
	}
	return c.Do(req, check)
}

// SleepCtx waits d, or until ctx ends (then it returns ctx.Err()); for d <= 0
// it only reports ctx.Err(), so that an ended context always wins. It is the
// one context-aware sleep of Toolport's clients, caches and limiters.
func SleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
