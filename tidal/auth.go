package tidal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolport/toolport/internal/httpclient"
)

const (
	// refreshEarly is how long before expiry a token is replaced, so that a
	// request never leaves with a token that dies in flight.
	refreshEarly = 60 * time.Second
	// defaultTokenLifetime is assumed when the token answer has no expires_in.
	defaultTokenLifetime = time.Hour
	// tokenTimeout bounds one token request, independently of the caller that
	// happened to start it (others wait on the same request).
	tokenTimeout = 30 * time.Second
	maxTokenBody = 64 << 10
)

// tokenSource fetches OAuth2 client-credentials tokens and caches them. One
// refresh at a time: callers that need a token while a refresh is running
// wait for it instead of starting their own.
type tokenSource struct {
	c *Client

	mu       sync.Mutex
	token    string
	expiry   time.Time // when to stop using token (already moved early)
	inflight *tokenCall
	// joined, when set (by tests), is called each time a caller waits for
	// a refresh another caller started.
	joined func()
}

type tokenCall struct {
	done  chan struct{}
	token string
	err   error
}

// get returns a valid access token, fetching one if needed.
func (ts *tokenSource) get(ctx context.Context) (string, error) {
	ts.mu.Lock()
	if ts.token != "" && ts.c.now().Before(ts.expiry) {
		tok := ts.token
		ts.mu.Unlock()
		return tok, nil
	}
	call := ts.inflight
	if call != nil && ts.joined != nil {
		ts.joined()
	}
	if call == nil {
		call = &tokenCall{done: make(chan struct{})}
		ts.inflight = call
		// The fetch outlives the caller that started it: if that caller gives
		// up, the others still get their token.
		fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenTimeout)
		go func() {
			defer cancel()
			tok, lifetime, err := ts.fetch(fetchCtx)
			ts.mu.Lock()
			if err == nil {
				ts.token = tok
				ts.expiry = ts.c.now().Add(lifetime - earlyMargin(lifetime))
			}
			ts.inflight = nil
			ts.mu.Unlock()
			call.token, call.err = tok, err
			close(call.done)
		}()
	}
	ts.mu.Unlock()
	select {
	case <-call.done:
		return call.token, call.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// earlyMargin is refreshEarly, or half the lifetime for short-lived tokens.
func earlyMargin(lifetime time.Duration) time.Duration {
	if lifetime < 2*refreshEarly {
		return lifetime / 2
	}
	return refreshEarly
}

// invalidate drops tok after the API rejected it. A token that has already
// been replaced is left alone, so that many requests failing with the same
// stale token cause one refresh, not many.
func (ts *tokenSource) invalidate(tok string) {
	ts.mu.Lock()
	if ts.token == tok {
		ts.token = ""
	}
	ts.mu.Unlock()
}

type tokenResponse struct {
	AccessToken string  `json:"access_token"`
	TokenType   string  `json:"token_type"`
	ExpiresIn   float64 `json:"expires_in"`
}

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// fetch performs the client-credentials grant. Error messages name the
// configuration to check but never carry the secret or a token.
func (ts *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	c := ts.c
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.authURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &Error{Kind: ErrConfig, Auth: true, Message: "TIDAL auth URL is invalid", Err: err}
	}
	req.SetBasicAuth(c.cfg.ClientID, c.cfg.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.core.UserAgent())
	resp, err := c.core.HTTPClient().Do(req)
	if err != nil {
		e := networkError("TIDAL auth", err)
		e.Auth = true
		return "", 0, e
	}
	defer resp.Body.Close()
	body, err := httpclient.ReadBody(resp.Body, maxTokenBody)
	switch {
	case errors.Is(err, httpclient.ErrBodyTooLarge):
		if resp.StatusCode == http.StatusOK {
			return "", 0, &Error{Kind: ErrMalformed, Auth: true, StatusCode: resp.StatusCode,
				Message: fmt.Sprintf("TIDAL auth answered with more than %d bytes", maxTokenBody), Err: err}
		}
		body = nil // an error status says enough
	case err != nil:
		e := networkError("TIDAL auth", err)
		e.Auth = true
		return "", 0, e
	}
	if resp.StatusCode != http.StatusOK {
		return "", 0, tokenError(resp.StatusCode, body)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", 0, &Error{Kind: ErrMalformed, Auth: true, StatusCode: resp.StatusCode, Message: "TIDAL auth answered without an access token", Err: err}
	}
	if tt := strings.ToLower(tr.TokenType); tt != "" && tt != "bearer" {
		return "", 0, &Error{Kind: ErrMalformed, Auth: true, StatusCode: resp.StatusCode,
			Message: fmt.Sprintf("TIDAL auth returned an unsupported token type %.20q", tr.TokenType)}
	}
	lifetime := defaultTokenLifetime
	if tr.ExpiresIn > 0 && tr.ExpiresIn < 366*24*3600 {
		lifetime = time.Duration(tr.ExpiresIn * float64(time.Second))
	}
	return tr.AccessToken, lifetime, nil
}

// tokenError reports an error answer of the token endpoint. 400, 401 and
// 403 mean the client credentials were refused (OAuth2 answers
// invalid_client with 400 or 401).
func tokenError(status int, body []byte) *Error {
	var oe oauthError
	_ = json.Unmarshal(body, &oe)
	e := &Error{Kind: statusKind(status), Auth: true, StatusCode: status,
		Code: httpclient.Clip(oe.Error, 60), Detail: httpclient.Clip(oe.Description, maxErrorDetail)}
	switch {
	case status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuthInvalid
		e.Message = "TIDAL rejected the client credentials; check TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET (or tidal.client_id / tidal.client_secret in the credentials file)"
		if oe.Error != "" {
			e.Message += " (" + e.Code + ")"
		}
	default:
		e.Message = fmt.Sprintf("TIDAL auth failed: HTTP %d", status)
	}
	return e
}
