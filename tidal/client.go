package tidal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tool"
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
	HTTPClient  *http.Client // default: a client with a 30 s timeout
	UserAgent   string
	// LegacySearch makes Search call the pre-1.10.96 form
	// GET /searchResults/{query} directly. Without it the current form is
	// tried first and the legacy one only if the API does not know it.
	LegacySearch bool
}

// ConfigFromEnv reads the TIDAL settings: TIDAL_CLIENT_ID and
// TIDAL_CLIENT_SECRET (or tidal.client_id / tidal.client_secret in the
// credentials file), TIDAL_API_BASE_URL, TIDAL_AUTH_URL and TIDAL_COUNTRY_CODE.
func ConfigFromEnv(c *config.Config) Config {
	return Config{
		ClientID:     c.Secret("TIDAL_CLIENT_ID", "tidal.client_id"),
		ClientSecret: c.Secret("TIDAL_CLIENT_SECRET", "tidal.client_secret"),
		BaseURL:      c.Default("TIDAL_API_BASE_URL", DefaultBaseURL),
		AuthURL:      c.Default("TIDAL_AUTH_URL", DefaultAuthURL),
		CountryCode:  strings.ToUpper(c.Default("TIDAL_COUNTRY_CODE", DefaultCountryCode)),
	}
}

// Client is a TIDAL API v2 client for catalogue reads. It is safe for
// concurrent use; share one per process so that the token and the rate-limit
// bucket are shared too.
type Client struct {
	cfg       Config
	base      *url.URL // API root, no trailing slash
	authURL   string
	country   string
	userAgent string
	http      *http.Client

	now   func() time.Time
	sleep func(context.Context, time.Duration) error

	tokens *tokenSource
	bucket *bucket
}

// NewClient returns a client for cfg. It fails only on a malformed URL
// (CONFIG_ERROR); missing credentials are reported by each call as
// AUTH_MISSING, so that tools can be listed before they are configured.
func NewClient(cfg Config) (*Client, error) {
	base, err := rootURL(cfg.BaseURL, DefaultBaseURL, apiPath)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeConfig, Message: "TIDAL_API_BASE_URL is not a valid http(s) URL", Err: err}
	}
	auth, err := rootURL(cfg.AuthURL, DefaultAuthURL, tokenPath)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeConfig, Message: "TIDAL_AUTH_URL is not a valid http(s) URL", Err: err}
	}
	c := &Client{
		cfg: cfg, base: base, authURL: auth.String(),
		country: cfg.CountryCode, userAgent: cfg.UserAgent, http: cfg.HTTPClient,
		now: time.Now, sleep: sleepCtx,
	}
	if c.country == "" {
		c.country = DefaultCountryCode
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second}
	}
	c.tokens = &tokenSource{c: c}
	c.bucket = newBucket(func() time.Time { return c.now() }, func(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) })
	return c, nil
}

// rootURL parses raw (or def when empty) and appends path when raw has none.
func rootURL(raw, def, path string) (*url.URL, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("tidal: %q: need an http(s) URL with a host", u.Redacted())
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = path
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// Configured reports whether credentials are set.
func (c *Client) Configured() bool { return c.cfg.ClientID != "" && c.cfg.ClientSecret != "" }

// errAuthMissing tells the agent, and through the event the human, how to
// configure TIDAL.
func errAuthMissing() *tool.Error {
	msg := "TIDAL credentials are not configured: set TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET, " +
		`or "tidal.client_id" and "tidal.client_secret" in the credentials file`
	content := "⚠ Configuration Required\n\nTIDAL catalogue tools need API client credentials.\n\n" +
		"Get them: https://developer.tidal.com/dashboard\nAdd to: ~/.config/toolport/credentials.json\n\n" +
		"Example:\n{\n  \"tidal\": {\n    \"client_id\": \"your-client-id\",\n    \"client_secret\": \"your-client-secret\"\n  }\n}"
	return &tool.Error{Code: tool.CodeAuthMissing, Message: msg, Event: &tool.Event{
		Kind: "config_required", Content: content,
		DataJSON: `{"service":"tidal","credentials":["client_id","client_secret"],"signup_url":"https://developer.tidal.com/dashboard"}`,
	}}
}

// get performs a GET of escapedPath (relative to the API root, starting
// with "/", segments already escaped) with query, and decodes the JSON:API
// answer. It waits for the rate-limit bucket, and on a 401 refreshes the
// token and tries once more.
func (c *Client) get(ctx context.Context, escapedPath string, query url.Values) (*document, error) {
	if !c.Configured() {
		return nil, errAuthMissing()
	}
	target := c.base.String() + escapedPath
	if len(query) > 0 {
		target += "?" + query.Encode()
	}

	for attempt := 0; ; attempt++ {
		if err := c.bucket.wait(ctx); err != nil {
			var rw errRateWait
			if errors.As(err, &rw) {
				return nil, &tool.Error{Code: tool.CodeRateLimit, Retryable: true, RetryAfter: rw.d,
					Message: fmt.Sprintf("TIDAL rate limit: the next request is allowed in %s", rw.d.Round(time.Millisecond)), Err: err}
			}
			return nil, tool.Classify(err)
		}
		tok, err := c.tokens.get(ctx)
		if err != nil {
			return nil, tool.Classify(err)
		}
		doc, status, err := c.do(ctx, target, tok)
		if status == http.StatusUnauthorized && attempt == 0 {
			// The token may have been revoked or expired early: get a fresh one
			// and try once more.
			c.tokens.invalidate(tok)
			continue
		}
		return doc, err
	}
}

// do sends one request. It returns the HTTP status alongside any error so
// that get can recognise a 401.
func (c *Client) do(ctx context.Context, target, token string) (*document, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, 0, &tool.Error{Code: tool.CodeInternal, Message: "tidal: building request failed", Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.api+json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, networkError("TIDAL", err)
	}
	defer resp.Body.Close()
	c.bucket.observe(resp.Header)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, resp.StatusCode, networkError("TIDAL", err)
	}
	if len(body) > maxBody {
		return nil, resp.StatusCode, &tool.Error{Code: tool.CodeParse, Status: resp.StatusCode,
			Message: fmt.Sprintf("TIDAL response is larger than %d bytes", maxBody)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, resp.StatusCode, c.statusError(resp.StatusCode, body)
	}
	doc, err := decodeDocument(body)
	if err != nil {
		return nil, resp.StatusCode, &tool.Error{Code: tool.CodeParse, Status: resp.StatusCode,
			Message: "TIDAL returned a response that is not a valid JSON:API document", Err: err}
	}
	return doc, resp.StatusCode, nil
}

// statusError turns an error answer into a *tool.Error, keeping TIDAL's own
// code and detail in the message.
func (c *Client) statusError(status int, body []byte) *tool.Error {
	var retryAfter time.Duration
	if status == http.StatusTooManyRequests {
		// TIDAL sends no Retry-After; the bucket knows when a token is back.
		retryAfter = c.bucket.exhausted()
	}
	msg := fmt.Sprintf("TIDAL API: HTTP %d", status)
	var eb struct {
		Errors []apiError `json:"errors"`
	}
	if json.Unmarshal(body, &eb) == nil && len(eb.Errors) > 0 {
		e := eb.Errors[0]
		var parts []string
		if e.Code != "" {
			parts = append(parts, e.Code)
		}
		if e.Detail != "" {
			parts = append(parts, e.Detail)
		}
		if e.Source.Parameter != "" {
			parts = append(parts, "parameter "+e.Source.Parameter)
		}
		if len(parts) > 0 {
			msg += ": " + clip(strings.Join(parts, ": "), maxErrorDetail)
		}
	}
	if status == http.StatusUnauthorized {
		msg += " (the access token was refused even after a refresh; check the TIDAL client credentials)"
	}
	return tool.HTTPStatusError(status, retryAfter, msg)
}

// networkError classifies a transport failure; tool.Classify keeps the URL
// out of the message.
func networkError(what string, err error) *tool.Error {
	te := tool.Classify(err)
	if te.Code == tool.CodeInternal {
		te = &tool.Error{Code: tool.CodeNetwork, Retryable: true, Message: what + ": connection failed", Err: err}
	}
	return te
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
