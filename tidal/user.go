package tidal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolport/toolport/internal/httpclient"
)

// DefaultLoginURL is TIDAL's authorization endpoint for user login
// (the OpenAPI spec's Authorization_Code_PKCE flow).
const DefaultLoginURL = "https://login.tidal.com/authorize"

// UserScopes are the scopes a user login asks for: create playlists and add
// to them, and read the user's collection (favourite tracks and albums).
var UserScopes = []string{"playlists.read", "playlists.write", "collection.read", "user.read"}

// UserToken is a user's login: what the token endpoint answered, kept in a
// file between runs. Its fields are secrets.
type UserToken struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry"`
	Scope        string    `json:"scope,omitempty"`
	UserID       string    `json:"user_id,omitempty"`
}

func userToken(t *oauth2.Token, prev *UserToken) *UserToken {
	u := &UserToken{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
	if s, ok := t.Extra("scope").(string); ok {
		u.Scope = s
	}
	switch id := t.Extra("user_id").(type) {
	case string:
		u.UserID = id
	case float64:
		u.UserID = fmt.Sprintf("%.0f", id)
	}
	if prev != nil {
		if u.RefreshToken == "" { // a refresh answer may leave it out: keep the old one
			u.RefreshToken = prev.RefreshToken
		}
		if u.UserID == "" {
			u.UserID = prev.UserID
		}
		if u.Scope == "" {
			u.Scope = prev.Scope
		}
	}
	return u
}

// UserAuth runs TIDAL's user authorization: OAuth 2 authorization code with
// PKCE (S256) and a loopback redirect, which is what the API's OpenAPI spec
// offers third-party apps (it has no device-code flow). The client secret is
// optional: a public client sends only its id.
type UserAuth struct {
	oc   oauth2.Config
	http *http.Client
}

// UserAuthConfig configures a [UserAuth]. ClientID and RedirectURL are
// required; the redirect URL must be registered for the app in TIDAL's
// developer dashboard.
type UserAuthConfig struct {
	ClientID, ClientSecret string
	// LoginURL is the authorization endpoint (DefaultLoginURL when empty).
	LoginURL string
	// AuthURL is the token endpoint, as in [Config] (a bare scheme and
	// host gets "/v1/oauth2/token").
	AuthURL     string
	RedirectURL string
	Scopes      []string
	HTTPClient  *http.Client
}

// NewUserAuth checks cfg and returns a UserAuth.
func NewUserAuth(cfg UserAuthConfig) (*UserAuth, error) {
	if cfg.ClientID == "" {
		return nil, newError(ErrAuthMissing, "TIDAL user login needs the app's client id: set TIDAL_CLIENT_ID or tidal.client_id in the credentials file")
	}
	login := cfg.LoginURL
	if login == "" {
		login = DefaultLoginURL
	}
	if _, err := httpclient.ParseBaseURL(login); err != nil {
		return nil, &Error{Kind: ErrConfig, Message: "TIDAL_LOGIN_URL is not a valid http(s) URL", Err: err}
	}
	token, err := rootURL(cfg.AuthURL, DefaultAuthURL, tokenPath)
	if err != nil {
		return nil, &Error{Kind: ErrConfig, Message: "TIDAL_AUTH_URL is not a valid http(s) URL", Err: err}
	}
	if err := checkRedirect(cfg.RedirectURL); err != nil {
		return nil, err
	}
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = UserScopes
	}
	style := oauth2.AuthStyleInParams // a public client: client_id in the form
	if cfg.ClientSecret != "" {
		style = oauth2.AuthStyleInHeader
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = httpclient.NewClient(30 * time.Second)
	}
	return &UserAuth{
		oc: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL, Scopes: scopes,
			Endpoint: oauth2.Endpoint{AuthURL: login, TokenURL: token.String(), AuthStyle: style}},
		http: httpclient.NoRedirects(hc),
	}, nil
}

// checkRedirect accepts only loopback http redirects: the CLI listens there
// for the code, and nothing else on the network can receive it.
func checkRedirect(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Port() == "" {
		return newError(ErrConfig, "the TIDAL redirect URL must be http://localhost:PORT/PATH or http://127.0.0.1:PORT/PATH")
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return nil
	}
	return newError(ErrConfig, "the TIDAL redirect URL must be on this machine (localhost or 127.0.0.1)")
}

// Login is one login in progress: the URL to open and what the callback
// must match.
type Login struct {
	a        *UserAuth
	state    string
	verifier string
	// URL is where the user logs in and consents.
	URL string
}

// Start begins a login with a fresh state and PKCE verifier.
func (a *UserAuth) Start() (*Login, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("tidal: random state: %w", err)
	}
	l := &Login{a: a, state: base64.RawURLEncoding.EncodeToString(b), verifier: oauth2.GenerateVerifier()}
	l.URL = a.oc.AuthCodeURL(l.state, oauth2.S256ChallengeOption(l.verifier))
	return l, nil
}

// ErrLoginRefused reports a callback that cannot complete the login: an
// error from TIDAL (the user declined), or no code. ErrStateMismatch
// reports one whose state is not this login's (a forged or stale redirect):
// a loopback listener should refuse it and keep waiting.
var (
	ErrLoginRefused  = errors.New("tidal: login refused")
	ErrStateMismatch = errors.New("tidal: login state mismatch")
)

// Complete checks the callback's query (state, then error or code) and
// exchanges the code, with the PKCE verifier, for the user's tokens.
func (l *Login) Complete(ctx context.Context, q url.Values) (*UserToken, error) {
	if q.Get("state") != l.state {
		return nil, &Error{Kind: ErrAuthInvalid, Auth: true, Err: ErrStateMismatch,
			Message: "the login callback's state does not match this login (a stale or forged redirect)"}
	}
	if e := q.Get("error"); e != "" {
		msg := "TIDAL did not grant access: " + httpclient.OneLine(e, 60)
		if d := q.Get("error_description"); d != "" {
			msg += ": " + httpclient.OneLine(d, maxErrorDetail)
		}
		return nil, &Error{Kind: ErrAuthInvalid, Auth: true, Message: msg, Err: ErrLoginRefused}
	}
	code := q.Get("code")
	if code == "" || len(code) > 4096 {
		return nil, &Error{Kind: ErrAuthInvalid, Auth: true, Message: "the login callback has no authorization code", Err: ErrLoginRefused}
	}
	tok, err := l.a.oc.Exchange(l.a.ctx(ctx), code, oauth2.VerifierOption(l.verifier))
	if err != nil {
		return nil, oauthFailure("exchanging the login code", err)
	}
	return userToken(tok, nil), nil
}

func (a *UserAuth) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, a.http)
}

// oauthFailure reports a token endpoint error without its body, which may
// echo what was sent.
func oauthFailure(what string, err error) *Error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		e := &Error{Kind: statusKind(re.Response.StatusCode), Auth: true, StatusCode: re.Response.StatusCode,
			Code: httpclient.Clip(re.ErrorCode, 60)}
		if re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusUnauthorized {
			e.Kind = ErrAuthInvalid
		}
		e.Message = fmt.Sprintf("TIDAL auth: %s failed: HTTP %d", what, re.Response.StatusCode)
		if re.ErrorCode != "" {
			e.Message += " (" + e.Code + ")"
		}
		if e.Kind == ErrAuthInvalid {
			e.Message += "; run 'toolport tidal login' again"
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return networkError("TIDAL auth", err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return networkError("TIDAL auth", err)
	}
	return &Error{Kind: ErrMalformed, Auth: true, Message: "TIDAL auth: " + what + ": unreadable answer", Err: err}
}

// TokenSource returns the bearer tokens of tok's login, refreshing with the
// refresh token when the access token has expired (a minute early), and
// calling saved with each new token so that it can be kept. It is safe for
// concurrent use: one refresh at a time.
func (a *UserAuth) TokenSource(tok *UserToken, saved func(*UserToken) error) *UserTokenSource {
	return &UserTokenSource{a: a, tok: tok, saved: saved, now: time.Now}
}

// UserTokenSource is a user's tokens, refreshed when they expire.
type UserTokenSource struct {
	a     *UserAuth
	saved func(*UserToken) error
	now   func() time.Time

	mu  sync.Mutex
	tok *UserToken
}

// Token returns a valid access token, refreshing it first when needed.
func (s *UserTokenSource) Token(ctx context.Context) (*UserToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.AccessToken != "" && (s.tok.Expiry.IsZero() || s.now().Add(refreshEarly).Before(s.tok.Expiry)) {
		return s.tok, nil
	}
	return s.refreshLocked(ctx)
}

func (s *UserTokenSource) refreshLocked(ctx context.Context) (*UserToken, error) {
	if s.tok.RefreshToken == "" {
		return nil, &Error{Kind: ErrAuthInvalid, Auth: true, Message: "the TIDAL login has expired; run 'toolport tidal login' again"}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenTimeout)
	defer cancel()
	// An expired token makes oauth2 use the refresh token.
	src := s.a.oc.TokenSource(s.a.ctx(rctx), &oauth2.Token{RefreshToken: s.tok.RefreshToken, Expiry: time.Unix(1, 0)})
	t, err := src.Token()
	if err != nil {
		return nil, oauthFailure("refreshing the login", err)
	}
	s.tok = userToken(t, s.tok)
	if s.saved != nil {
		if err := s.saved(s.tok); err != nil {
			return nil, &Error{Kind: ErrConfig, Auth: true, Message: "the refreshed TIDAL login could not be saved", Err: err}
		}
	}
	return s.tok, nil
}

// get and invalidate make the source a tokenProvider for [Client.WithUser].
func (s *UserTokenSource) get(ctx context.Context) (string, error) {
	t, err := s.Token(ctx)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// invalidate forces a refresh on the next call after the API refused tok.
func (s *UserTokenSource) invalidate(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.AccessToken == tok {
		cp := *s.tok
		cp.AccessToken = ""
		s.tok = &cp
	}
}

// WithUser returns a client that calls the API as the logged-in user of ts,
// sharing c's configuration, HTTP client and rate-limit bucket. Catalogue
// calls work on it too.
func (c *Client) WithUser(ts *UserTokenSource) *Client {
	u := *c
	u.tokens = ts
	u.user = true
	return &u
}

// maxTokenFile bounds the token file read.
const maxTokenFile = 64 << 10

// ErrNoLogin reports that no user login is stored.
var ErrNoLogin = errors.New("tidal: not logged in")

// LoadUserToken reads a login saved by [SaveUserToken]. A missing file is
// ErrNoLogin.
func LoadUserToken(path string) (*UserToken, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no TIDAL login at %s; run 'toolport tidal login'", ErrNoLogin, path)
	}
	if err != nil {
		return nil, fmt.Errorf("tidal: reading the login: %w", err)
	}
	defer f.Close()
	b, err := httpclient.ReadBody(f, maxTokenFile)
	if err != nil {
		return nil, fmt.Errorf("tidal: reading the login %s: %w", path, err)
	}
	var t UserToken
	if err := json.Unmarshal(b, &t); err != nil || t.AccessToken == "" && t.RefreshToken == "" {
		return nil, fmt.Errorf("tidal: the login file %s is not a saved TIDAL login; run 'toolport tidal login'", path)
	}
	return &t, nil
}

// SaveUserToken writes t to path with mode 0600 (its directory 0700),
// atomically: a crash leaves the old login or the new one, never half.
func SaveUserToken(path string, t *UserToken) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("tidal: encoding the login: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tidal-login-*")
	if err != nil {
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("tidal: saving the login: %w", err)
	}
	return nil
}

// Secrets lists t's values for redaction.
func (t *UserToken) Secrets() []string {
	var out []string
	for _, s := range []string{t.AccessToken, t.RefreshToken} {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
