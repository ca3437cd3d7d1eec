package tidal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

// Defaults for [Config].
const (
	DefaultBaseURL     = "https://openapi.tidal.com/v2"
	DefaultAuthURL     = "https://auth.tidal.com/v1/oauth2/token"
	DefaultCountryCode = "US"
	DefaultUserAgent   = "toolport-tidal/1"

	apiPath   = "/v2"
	tokenPath = "/v1/oauth2/token"

	// maxBody bounds a response body. A search with nested includes is a few
	// hundred KB; album pages are ~40 KB.
	maxBody = 8 << 20
	// maxErrorDetail bounds the upstream text kept in an error message.
	maxErrorDetail = 300
)

// Config configures a [Client]. Zero fields take the defaults.
type Config struct {
	ClientID     string
	ClientSecret string
	// BaseURL is the API root. A bare scheme and host (a test server) gets
	// TIDAL's "/v2" appended; a URL with a path is used as is.
	BaseURL string
	// AuthURL is the token endpoint. A bare scheme and host gets
	// "/v1/oauth2/token" appended.
	AuthURL string
	// CountryCode is the ISO 3166-1 alpha-2 market whose catalogue is searched.
	CountryCode string
	// HTTPClient sends the requests; default: a client with a 30 s timeout.
	// The client never follows redirects, whatever HTTPClient says: a
	// redirect would carry the client secret or the bearer token elsewhere.
	HTTPClient *http.Client
	UserAgent  string
	// LegacySearch makes Search call the pre-1.10.96 form
	// GET /searchResults/{query} directly. Without it the current form is
	// tried first and the legacy one only if the API does not know it.
	LegacySearch bool
	// Progress, when set, is called as long calls advance (album pages,
	// ISRC and id lookups), with the context of the call.
	Progress func(context.Context, Progress)
	// Limiter, when set, is waited for before every request, on top of the
	// client's own bucket. Processes that share one TIDAL client id give it
	// a limiter shared between them (Toolport's is kept in Redis), so that
	// together they keep to the one quota TIDAL counts for the id; the
	// client's bucket still adopts what TIDAL's headers announce.
	Limiter Limiter
	// Cache, when set, keeps successful catalogue answers for CacheTTL
	// (DefaultCacheTTL when 0), keyed by the request's URL (path, query and
	// country; never a credential), so that processes sharing it ask TIDAL
	// once. Its failures only cost the reuse.
	Cache    Cache
	CacheTTL time.Duration
}

// DefaultCacheTTL is how long a catalogue answer is reused: search results
// change as releases are added (daily), an album's tracks and a track's
// metadata hardly ever; six hours keeps a new release findable the same day.
const DefaultCacheTTL = 6 * time.Hour

// Cache stores answers for a while (Toolport's in-process or Redis cache).
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Limiter grants requests at a rate. Wait blocks until one may go; an error
// that has a RetryAfter() time.Duration method means the wait would be too
// long, and is reported as [ErrRateLimited].
type Limiter interface {
	Wait(ctx context.Context) error
}

// Progress is how far a long call has got.
type Progress struct {
	Done, Total int
	Message     string
}

// report hands p to Config.Progress, if set.
func (c *Client) report(ctx context.Context, p Progress) {
	if c.cfg.Progress != nil {
		c.cfg.Progress(ctx, p)
	}
}

// Client is a TIDAL API v2 client for catalogue reads. It is safe for
// concurrent use; share one per process so that the token and the rate-limit
// bucket are shared too.
type Client struct {
	cfg     Config
	base    *url.URL // API root, no trailing slash
	authURL string
	country string
	// core sends requests (User-Agent, redirects refused, body capped); the
	// request itself is built here: paths come escaped, and the token and
	// Idempotency-Key vary by call.
	core *httpclient.Core

	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	tokens tokenProvider
	bucket *bucket
	// user is set on a client made by [Client.WithUser]: calls then carry
	// the user's token instead of the client-credentials one.
	user bool
	// use is set on a client made by [Client.WithCacheUse].
	use *cacheUse
}

// tokenProvider hands out bearer tokens: the client-credentials source, or a
// user's (see [Client.WithUser]).
type tokenProvider interface {
	get(ctx context.Context) (string, error)
	invalidate(tok string)
}

// NewClient returns a client for cfg. It fails only on a malformed URL
// ([ErrConfig]); missing credentials are reported by each call as
// [ErrAuthMissing], so that tools can be listed before they are configured.
func NewClient(cfg Config) (*Client, error) {
	base, err := rootURL(cfg.BaseURL, DefaultBaseURL, apiPath)
	if err != nil {
		return nil, &Error{Kind: ErrConfig, Message: "TIDAL_API_BASE_URL is not a valid http(s) URL: " + err.Error(), Err: err}
	}
	auth, err := rootURL(cfg.AuthURL, DefaultAuthURL, tokenPath)
	if err != nil {
		return nil, &Error{Kind: ErrConfig, Message: "TIDAL_AUTH_URL is not a valid http(s) URL: " + err.Error(), Err: err}
	}
	c := &Client{
		cfg: cfg, base: base, authURL: auth.String(),
		country: cfg.CountryCode, core: httpclient.NewCore("tidal", "", DefaultUserAgent, maxBody),
		now: time.Now, sleep: httpclient.SleepCtx,
	}
	if c.country == "" {
		c.country = DefaultCountryCode
	}
	c.core.SetUserAgent(cfg.UserAgent)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = httpclient.NewClient(30 * time.Second) // pooled for concurrent calls
	}
	c.core.SetHTTPClient(hc)
	c.tokens = &tokenSource{c: c}
	c.bucket = newBucket(func() time.Time { return c.now() }, func(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) })
	return c, nil
}

// rootURL parses raw (or def when empty) and appends path when raw has none.
func rootURL(raw, def, path string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		raw = def
	}
	u, err := httpclient.ParseBaseURL(raw)
	if err != nil {
		return nil, err
	}
	if u.Path == "" {
		u.Path = path
	}
	return u, nil
}

// Configured reports whether credentials are set: the client id and secret,
// or a user's login for a client made by [Client.WithUser].
func (c *Client) Configured() bool {
	return c.user || c.cfg.ClientID != "" && c.cfg.ClientSecret != ""
}

// errAuthMissing says which settings to set; it names both the environment
// and the credentials-file entries.
func errAuthMissing() *Error {
	return newError(ErrAuthMissing, "TIDAL credentials are not configured: set TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET, "+
		`or "tidal.client_id" and "tidal.client_secret" in the credentials file`)
}

// get performs a GET of escapedPath (relative to the API root, starting
// with "/", segments already escaped) with query, and decodes the JSON:API
// answer. It waits for the rate-limit bucket, and on a 401 refreshes the
// token and tries once more.
func (c *Client) get(ctx context.Context, escapedPath string, query url.Values) (*document, error) {
	return c.send(ctx, http.MethodGet, escapedPath, query, nil, "")
}

// send performs a request of method with an optional JSON:API body (and
// Idempotency-Key, for mutations TIDAL replays on a retry), as get does. A
// 2xx answer with no body decodes to an empty document.
func (c *Client) send(ctx context.Context, method, escapedPath string, query url.Values, body []byte, idempotencyKey string) (*document, error) {
	if !c.Configured() {
		return nil, errAuthMissing()
	}
	target := c.base.String() + escapedPath
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	// Only catalogue reads are shared: a user's own resources (favourites,
	// playlists) must never be answered from another user's cache entry.
	cacheable := method == http.MethodGet && !c.user
	if cacheable {
		if doc, ok := c.cached(ctx, target); ok {
			return doc, nil
		}
	}

	for attempt := 0; ; attempt++ {
		if err := c.waitShared(ctx); err != nil {
			return nil, err
		}
		if err := c.bucket.wait(ctx); err != nil {
			var rw errRateWait
			if errors.As(err, &rw) {
				return nil, &Error{Kind: ErrRateLimited, RetryAfter: rw.d,
					Message: fmt.Sprintf("TIDAL rate limit: the next request is allowed in %s", rw.d.Round(time.Millisecond)), Err: err}
			}
			return nil, contextError(err)
		}
		tok, err := c.tokens.get(ctx)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return nil, e
			}
			return nil, contextError(err)
		}
		doc, raw, status, err := c.do(ctx, method, target, tok, body, idempotencyKey)
		if err == nil && cacheable {
			c.keep(ctx, target, raw)
		}
		if status == http.StatusUnauthorized && attempt == 0 {
			// The token may have been revoked or expired early: get a fresh one
			// and try once more.
			c.tokens.invalidate(tok)
			continue
		}
		return doc, err
	}
}

// waitShared waits for Config.Limiter, if any.
func (c *Client) waitShared(ctx context.Context) error {
	if c.cfg.Limiter == nil {
		return nil
	}
	err := c.cfg.Limiter.Wait(ctx)
	if err == nil {
		return nil
	}
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		d := ra.RetryAfter()
		return &Error{Kind: ErrRateLimited, RetryAfter: d,
			Message: fmt.Sprintf("TIDAL rate limit (shared): the next request is allowed in %s", d.Round(time.Millisecond)), Err: err}
	}
	return contextError(err)
}

// cacheKey names a request's answer in Config.Cache. The "v2" entries start
// with the time they were stored (8 bytes, Unix nanoseconds, big-endian), so
// that a call can ask for answers at most so old and learn how old they are.
func cacheKey(target string) string { return "tidal:v2:" + target }

// cacheUse is what a client's calls ask of the cache ([Client.WithCacheUse]).
type cacheUse struct {
	maxAge time.Duration
	used   func(age time.Duration)
}

// WithCacheUse returns a client sharing c's connection, tokens and rate
// limit whose catalogue reads accept an answer from Config.Cache only if it
// is at most maxAge old (0: none, the request goes to TIDAL and refreshes the
// cache), and call used, when not nil, with the age of every cached answer
// they use. c's own calls use answers up to the cache TTL. A tool makes one
// for each call, with the call's cache arguments.
func (c *Client) WithCacheUse(maxAge time.Duration, used func(age time.Duration)) *Client {
	u := *c
	u.use = &cacheUse{maxAge: max(maxAge, 0), used: used}
	return &u
}

// cached returns the cached answer to target, if there is one the call may
// use.
func (c *Client) cached(ctx context.Context, target string) (*document, bool) {
	if c.cfg.Cache == nil {
		return nil, false
	}
	use, asked := c.use, c.use != nil
	if asked && use.maxAge == 0 {
		return nil, false
	}
	raw, ok, err := c.cfg.Cache.Get(ctx, cacheKey(target))
	if err != nil || !ok || len(raw) < 8 {
		return nil, false
	}
	age := c.now().Sub(time.Unix(0, int64(binary.BigEndian.Uint64(raw[:8]))))
	if age < 0 {
		age = 0 // another replica's clock is ahead: the answer is new
	}
	if age > c.cacheTTL() || (asked && age > use.maxAge) {
		return nil, false
	}
	doc, err := decodeDocument(raw[8:])
	if err != nil {
		return nil, false
	}
	if asked && use.used != nil {
		use.used(age)
	}
	return doc, true
}

func (c *Client) cacheTTL() time.Duration {
	if c.cfg.CacheTTL > 0 {
		return c.cfg.CacheTTL
	}
	return DefaultCacheTTL
}

// keep stores a successful answer's body with the time it was stored.
func (c *Client) keep(ctx context.Context, target string, body []byte) {
	if c.cfg.Cache == nil {
		return
	}
	entry := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint64(entry, uint64(c.now().UnixNano()))
	entry = append(entry, body...)
	_ = c.cfg.Cache.Set(ctx, cacheKey(target), entry, c.cacheTTL()) // a failure only costs the reuse
}

// do sends one request. It returns the body of a successful answer, and the
// HTTP status alongside any error so that get can recognise a 401.
func (c *Client) do(ctx context.Context, method, target, token string, reqBody []byte, idempotencyKey string) (*document, []byte, int, error) {
	var rd io.Reader
	if reqBody != nil {
		rd = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil { // the root was checked, and paths are escaped: a bug
		return nil, nil, 0, &Error{Kind: ErrConfig, Message: "building the request failed", Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.api+json")
	req.Header.Set("User-Agent", c.core.UserAgent())
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, body, err := c.core.Send(req)
	if resp == nil {
		return nil, nil, 0, networkError("TIDAL", err)
	}
	c.bucket.observe(resp.Header)
	switch {
	case errors.Is(err, httpclient.ErrBodyTooLarge):
		return nil, nil, resp.StatusCode, malformed(fmt.Sprintf("TIDAL response is larger than %d bytes", maxBody), resp.StatusCode, err)
	case err != nil:
		return nil, nil, resp.StatusCode, networkError("TIDAL", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, resp.StatusCode, c.statusError(resp.StatusCode, body)
	}
	if len(bytes.TrimSpace(body)) == 0 && method != http.MethodGet {
		return &document{}, nil, resp.StatusCode, nil // 204 No Content
	}
	doc, err := decodeDocument(body)
	if err != nil {
		return nil, nil, resp.StatusCode, malformed("TIDAL returned a response that is not a valid JSON:API document", resp.StatusCode, err)
	}
	return doc, body, resp.StatusCode, nil
}

// statusError turns an error answer into an *Error, keeping TIDAL's own
// code, category and detail, clipped.
func (c *Client) statusError(status int, body []byte) *Error {
	e := &Error{Kind: statusKind(status), StatusCode: status}
	if status == http.StatusTooManyRequests {
		// TIDAL sends no Retry-After; the bucket knows when a token is back.
		e.RetryAfter = c.bucket.exhausted()
	}
	msg := fmt.Sprintf("TIDAL API: HTTP %d", status)
	var eb struct {
		Errors []apiError `json:"errors"`
	}
	if json.Unmarshal(body, &eb) == nil && len(eb.Errors) > 0 {
		a := eb.Errors[0]
		e.Code, e.Detail = httpclient.Clip(a.Code, 100), httpclient.Clip(a.Detail, maxErrorDetail)
		e.Category, e.Parameter = httpclient.Clip(a.Meta.Category, 100), httpclient.Clip(a.Source.Parameter, 100)
		var parts []string
		if a.Code != "" {
			parts = append(parts, a.Code)
		}
		if a.Detail != "" {
			parts = append(parts, a.Detail)
		}
		if a.Source.Parameter != "" {
			parts = append(parts, "parameter "+a.Source.Parameter)
		}
		if len(parts) > 0 {
			msg += ": " + httpclient.Clip(strings.Join(parts, ": "), maxErrorDetail)
		}
	}
	switch {
	case status == http.StatusUnauthorized && c.user:
		msg += " (the TIDAL login was refused; run 'toolport tidal login' again)"
	case status == http.StatusUnauthorized:
		msg += " (the access token was refused even after a refresh; check the TIDAL client credentials)"
	}
	e.Message = msg
	return e
}
