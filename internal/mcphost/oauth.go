package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuth runs the authorization flows (MCP authorization, 2025-11-25) of the
// attached streamable HTTP servers that answer 401 and have no bearer token
// configured. The official SDK's auth.AuthorizationCodeHandler does the
// protocol: protected resource metadata (RFC 9728), authorization server
// metadata (RFC 8414), dynamic client registration (RFC 7591), PKCE S256,
// the resource indicator and the code exchange. What Toolport adds is the
// shape of a server, not of a command line:
//
//   - the flow does not block a turn: the connection attempt that met the
//     401 fails at once with state "needs authorization" and the
//     authorization URL ([Status]), while the flow waits for the user in
//     the background;
//   - the user's browser comes back to Toolport's own callback route,
//     which hands the query to [OAuth.Callback]: the state must match a
//     pending flow (single use), then the SDK exchanges the code, and the
//     server is connected again and its tools listed;
//   - tokens (access, refresh, expiry, and the client registration that
//     refreshing needs) are kept in a [TokenStore] (the credentials file),
//     so a restart needs no new login, and refreshed when they expire, by
//     the injected clock. They never reach logs, errors or statuses, and
//     each joins the registry's secrets ([tool.Registry.AddSecrets]) the
//     moment it is obtained, refreshed or read, so that a server quoting
//     it back in a result shows [REDACTED];
//   - a process with no callback route (`toolport mcp`) starts no flow
//     ([OAuthConfig.AuthorizeElsewhere]): it uses and refreshes the tokens
//     another process saved, and says where to authorize when none do. A
//     refused refresh first looks in the store, where the other process
//     may have saved the tokens it rotated.
//
// One OAuth serves every [Host] of a process ([Options.OAuth]).
type OAuth struct {
	redirectURL string
	elsewhere   string
	store       TokenStore
	client      *http.Client
	now         func() time.Time
	flowTTL     time.Duration

	mu    sync.Mutex
	flows map[string]*flow // pending flows by state
}

// TokenStore keeps a server's OAuth tokens between runs. The data is an
// opaque JSON object (this package's); url is the server's, so that tokens
// of a server whose URL changed are not sent to the new one.
type TokenStore interface {
	// LoadOAuth returns what was saved for server at url; nil when nothing.
	LoadOAuth(server, url string) (json.RawMessage, error)
	// SaveOAuth replaces it; nil deletes it.
	SaveOAuth(server, url string, data json.RawMessage) error
}

// OAuthConfig configures [NewOAuth].
type OAuthConfig struct {
	// RedirectURL is Toolport's callback, http://127.0.0.1:<port>/oauth/callback.
	RedirectURL string
	// AuthorizeElsewhere is for a process with no callback route (`toolport
	// mcp`): RedirectURL is then empty and no flow is started here. Saved
	// tokens are used and refreshed, read again from the Store while a
	// server has none (another process may have saved them), and a server
	// that needs a new authorization fails its calls with AUTH_MISSING
	// saying this text: where the user authorizes it.
	AuthorizeElsewhere string
	// Store keeps tokens between runs; nil keeps them in memory only.
	Store TokenStore
	// HTTPClient reaches the authorization servers; nil means a new one.
	HTTPClient *http.Client
	// Now is the clock of token expiry; nil means time.Now.
	Now func() time.Time
	// FlowTTL bounds how long a flow waits for the user; 0 means an hour.
	FlowTTL time.Duration
}

// NewOAuth checks cfg and returns the flows' broker.
func NewOAuth(cfg OAuthConfig) (*OAuth, error) {
	switch {
	case cfg.AuthorizeElsewhere != "" && cfg.RedirectURL != "":
		return nil, errors.New("mcphost: an OAuth with a redirect URL authorizes here, not elsewhere")
	case cfg.AuthorizeElsewhere != "":
	default:
		u, err := url.Parse(cfg.RedirectURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("mcphost: the OAuth redirect URL must be an http(s) URL without query or fragment")
		}
	}
	o := &OAuth{redirectURL: cfg.RedirectURL, elsewhere: cfg.AuthorizeElsewhere, store: cfg.Store, client: cfg.HTTPClient, now: cfg.Now, flowTTL: cfg.FlowTTL,
		flows: map[string]*flow{}}
	if o.client == nil {
		o.client = &http.Client{Timeout: 30 * time.Second}
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.flowTTL <= 0 {
		o.flowTTL = time.Hour
	}
	return o, nil
}

// Errors of [OAuth.Callback].
var (
	// ErrUnknownState: no pending flow has the callback's state (a forged
	// or replayed callback, or one from before a restart).
	ErrUnknownState = errors.New("no authorization is waiting for this state; start again from Settings")
	// ErrBadCallback: the callback lacks a code (and says no error).
	ErrBadCallback = errors.New("the authorization server's redirect carries no code")
)

// Callback completes the pending flow whose state the callback's query q
// carries: it hands the SDK the code (or the authorization server's
// refusal), waits for the exchange and the new connection, and returns the
// server's name. Its errors quote neither the code nor a token.
func (o *OAuth) Callback(ctx context.Context, q url.Values) (string, error) {
	state := q.Get("state")
	if state == "" || len(state) > 512 {
		return "", ErrUnknownState
	}
	o.mu.Lock()
	fl := o.flows[state]
	delete(o.flows, state) // single use, whatever comes of it
	o.mu.Unlock()
	if fl == nil {
		return "", ErrUnknownState
	}
	var res callbackResult
	switch code := q.Get("code"); {
	case q.Get("error") != "":
		res.err = fmt.Errorf("the authorization server refused: %s", clip(oneLine(q.Get("error")+" "+q.Get("error_description")), 300))
	case code == "" || len(code) > 4096:
		res.err = ErrBadCallback
	default:
		res.result = &auth.AuthorizationResult{Code: code, State: state, Iss: q.Get("iss")}
	}
	select {
	case fl.callback <- res:
	case <-fl.done: // the flow ended meanwhile (timed out, host closed)
		return fl.server, fmt.Errorf("MCP server %q: the authorization ended before the callback: %s", fl.server, fl.errText())
	}
	select {
	case <-fl.done:
	case <-ctx.Done():
		return fl.server, ctx.Err()
	}
	if msg := fl.errText(); msg != "" {
		return fl.server, fmt.Errorf("MCP server %q: %s", fl.server, msg)
	}
	return fl.server, nil
}

func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s))
}

type callbackResult struct {
	result *auth.AuthorizationResult
	err    error
}

// flow is one authorization waiting for, or finishing after, the user.
type flow struct {
	server   string
	callback chan callbackResult // the callback's code, handed to the SDK's fetcher
	urlReady chan struct{}       // closed when url is set
	done     chan struct{}       // closed when the flow ended (err set)
	url      string              // set before urlReady closes
	err      string              // set before done closes; "" on success
}

func (f *flow) errText() string {
	select {
	case <-f.done:
		return f.err
	default:
		return ""
	}
}

// storedToken is what is kept of a server's authorization: the token and
// the client registration and endpoint that refreshing it needs.
type storedToken struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	TokenURL     string    `json:"token_url"`
	AuthStyle    int       `json:"auth_style,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`

	// accepted: the server took this access token at least once (loaded
	// tokens were). A fresh token the server refuses is not refreshed in
	// a loop: the flow starts again, saying so.
	accepted bool
}

func (t *storedToken) config() *oauth2.Config {
	return &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret, Scopes: t.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyle(t.AuthStyle)}}
}

// expiryMargin: a token this close to its expiry is refreshed first.
const expiryMargin = 30 * time.Second

// connAuth is one server's side of OAuth: the SDK transport's
// auth.OAuthHandler.
type connAuth struct {
	o *OAuth
	c *conn

	mu      sync.Mutex
	tok     *storedToken
	pending *flow  // the flow waiting for the user; nil when none
	lastErr string // why the last flow or token failed
	// away: a new authorization is needed and must be made elsewhere
	// (OAuthConfig.AuthorizeElsewhere); cleared when a connection works.
	away bool
}

func newConnAuth(o *OAuth, c *conn) *connAuth {
	a := &connAuth{o: o, c: c}
	a.load()
	return a
}

// load takes the saved tokens, if any; the caller holds a.mu or owns a.
func (a *connAuth) load() {
	if t := a.stored(); t != nil {
		a.tok = t
	}
}

// stored reads the saved tokens; nil when there are none. Their secrets
// join the registry's scrubber.
func (a *connAuth) stored() *storedToken {
	if a.o.store == nil {
		return nil
	}
	c := a.c
	raw, err := a.o.store.LoadOAuth(c.cfg.Name, c.cfg.URL)
	if err != nil {
		c.h.opts.Logger.Warn("reading an MCP server's saved authorization failed", "server", c.cfg.Name, "error", err)
		return nil
	}
	if len(raw) == 0 {
		return nil
	}
	var t storedToken
	if err := json.Unmarshal(raw, &t); err != nil || t.AccessToken == "" && t.RefreshToken == "" || t.TokenURL == "" {
		c.h.opts.Logger.Warn("an MCP server's saved authorization is unreadable; it is authorized again", "server", c.cfg.Name)
		return nil
	}
	t.accepted = true
	c.h.reg.AddSecrets(t.AccessToken, t.RefreshToken, t.ClientSecret)
	return &t
}

// save keeps t (nil: forgets the tokens); the caller holds a.mu. Its
// secrets join the registry's scrubber at once: a token obtained or
// refreshed while Toolport runs is as secret as one read at start.
func (a *connAuth) save(t *storedToken) {
	a.tok = t
	if t != nil {
		a.c.h.reg.AddSecrets(t.AccessToken, t.RefreshToken, t.ClientSecret)
	}
	if a.o.store == nil {
		return
	}
	var data json.RawMessage
	if t != nil {
		data, _ = json.Marshal(t) // plain strings and a time: cannot fail
	}
	if err := a.o.store.SaveOAuth(a.c.cfg.Name, a.c.cfg.URL, data); err != nil {
		a.c.h.opts.Logger.Warn("saving an MCP server's authorization failed; it lasts until Toolport stops", "server", a.c.cfg.Name, "error", err)
	}
}

// TokenSource implements auth.OAuthHandler.
func (a *connAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok == nil && a.o.elsewhere != "" {
		// Authorized elsewhere meanwhile, perhaps: the other process saved
		// the tokens in the shared store.
		a.load()
	}
	if a.tok == nil {
		return nil, nil
	}
	return tokenSource{a}, nil
}

type tokenSource struct{ a *connAuth }

// Token returns the access token, refreshed first when the clock says it
// has expired.
func (ts tokenSource) Token() (*oauth2.Token, error) {
	a := ts.a
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tok
	if t == nil {
		// Forgotten meanwhile: an invalid_grant error makes the SDK send
		// the request without a token, and the 401 starts a flow.
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
	}
	if t.AccessToken != "" && (t.Expiry.IsZero() || a.o.now().Before(t.Expiry.Add(-expiryMargin))) {
		return &oauth2.Token{AccessToken: t.AccessToken, TokenType: "Bearer"}, nil
	}
	if err := a.refresh(context.Background()); err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: a.tok.AccessToken, TokenType: "Bearer"}, nil
}

// refresh uses the refresh token; the caller holds a.mu. A refusal
// (invalid_grant) forgets the tokens, so that a flow starts; a failure to
// reach the authorization server keeps them for the next try.
func (a *connAuth) refresh(ctx context.Context) error {
	t := a.tok
	if t.RefreshToken == "" {
		a.save(nil)
		return &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, a.o.client), a.c.h.opts.ConnectTimeout)
	defer cancel()
	nt, err := t.config().TokenSource(ctx, &oauth2.Token{RefreshToken: t.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.Response != nil && re.Response.StatusCode < 500 && re.ErrorCode != "") {
			// `toolport serve` and `toolport mcp` share the file: the other
			// may have refreshed (and so rotated) the tokens first.
			if fresh := a.stored(); fresh != nil && fresh.RefreshToken != t.RefreshToken {
				a.tok = fresh
				return nil
			}
			a.lastErr = "the authorization server refused the refresh token (" + clip(oneLine(re.ErrorCode), 60) + "); authorize again"
			a.c.h.opts.Logger.Warn("an MCP server's refresh token was refused", "server", a.c.cfg.Name, "error_code", clip(oneLine(re.ErrorCode), 60))
			a.save(nil)
			return &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
		}
		return fmt.Errorf("refreshing the access token of MCP server %q failed: %s", a.c.cfg.Name, tokenError(err))
	}
	next := *t
	next.AccessToken, next.Expiry, next.TokenType, next.accepted = nt.AccessToken, a.expiry(nt), nt.TokenType, false
	if nt.RefreshToken != "" {
		next.RefreshToken = nt.RefreshToken
	}
	a.save(&next)
	return nil
}

// expiry is when tok expires by the injected clock: oauth2 counts
// expires_in from the real one.
func (a *connAuth) expiry(tok *oauth2.Token) time.Time {
	if tok.ExpiresIn > 0 {
		return a.o.now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	return tok.Expiry
}

// tokenError describes a token endpoint's failure without its response
// body (oauth2 quotes it whole).
func tokenError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint refused"
		if re.Response != nil {
			msg += " (HTTP " + fmt.Sprint(re.Response.StatusCode) + ")"
		}
		if re.ErrorCode != "" {
			msg += ": " + clip(oneLine(re.ErrorCode+" "+re.ErrorDescription), 200)
		}
		return msg
	}
	return clip(oneLine(err.Error()), 300)
}

// accepted records that the server took the current token.
func (a *connAuth) accepted() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok != nil {
		a.tok.accepted = true
	}
	a.lastErr, a.away = "", false
}

// NeedsAuthorizationError is the error of a connection attempt that met a
// server needing the user's authorization.
type NeedsAuthorizationError struct {
	Server string
	// Elsewhere says where to authorize it when this process cannot
	// (OAuthConfig.AuthorizeElsewhere); "" means Toolport's page.
	Elsewhere string
}

func (e *NeedsAuthorizationError) Error() string {
	if e.Elsewhere != "" {
		return fmt.Sprintf("MCP server %q needs the user's authorization: %s", e.Server, e.Elsewhere)
	}
	return fmt.Sprintf("MCP server %q needs the user's authorization: open Settings on Toolport's page and follow its Authorize link", e.Server)
}

// Authorize implements auth.OAuthHandler: the server answered 401 (or 403).
func (a *connAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(challenges) {
		return nil // not an authorization matter: the retry reports it
	}
	a.mu.Lock()
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	if t := a.tok; t != nil && sent != "" && sent == t.AccessToken && resp.StatusCode == http.StatusUnauthorized {
		if t.accepted && t.RefreshToken != "" {
			// Expired early, or revoked: a refreshed token may do.
			err := a.refresh(ctx)
			var refused *oauth2.RetrieveError
			if err == nil || !errors.As(err, &refused) {
				// Refreshed; or the authorization server could not be
				// reached: the tokens are kept for the next attempt.
				a.mu.Unlock()
				return err
			}
		} else if !t.accepted {
			a.lastErr = "the server refused the access token its authorization server issued (a token for another resource?)"
			a.c.h.opts.Logger.Warn("an MCP server refused a fresh access token", "server", a.c.cfg.Name)
		}
		if a.tok != nil {
			a.save(nil)
		}
	}
	if a.o.elsewhere != "" {
		// No callback here: the user authorizes from another process,
		// whose saved tokens TokenSource reads on a later attempt.
		if !a.away {
			a.c.h.opts.Logger.Warn("an MCP server needs the user's authorization", "server", a.c.cfg.Name, "where", a.o.elsewhere)
		}
		a.away = true
		a.mu.Unlock()
		return &NeedsAuthorizationError{Server: a.c.cfg.Name, Elsewhere: a.o.elsewhere}
	}
	fl := a.pending
	if fl == nil {
		fl = a.start(req, resp)
	}
	a.mu.Unlock()
	select {
	case <-fl.urlReady:
		return &NeedsAuthorizationError{Server: a.c.cfg.Name}
	case <-fl.done:
		return fmt.Errorf("authorization: %s", fl.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func insufficientScope(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// start begins a flow in the background; the caller holds a.mu.
func (a *connAuth) start(req *http.Request, resp *http.Response) *flow {
	fl := &flow{server: a.c.cfg.Name, callback: make(chan callbackResult), urlReady: make(chan struct{}), done: make(chan struct{})}
	a.pending = fl
	// The SDK reads the failed request's URL and the response's challenge;
	// the originals belong to the transport.
	r := &http.Request{Method: req.Method, URL: req.URL, Header: http.Header{}}
	rs := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: http.NoBody}
	if !a.c.h.background(func() { a.run(fl, r, rs) }) {
		fl.err = "the host is closed"
		close(fl.done)
		a.pending = nil
	}
	return fl
}

// run is one flow: the SDK's Authorize, whose fetcher publishes the URL
// and waits for the callback; then the connection is made again.
func (a *connAuth) run(fl *flow, req *http.Request, resp *http.Response) {
	ctx, cancel := context.WithTimeout(a.c.h.ctx, a.o.flowTTL)
	defer cancel()
	var state string
	err := a.authorize(ctx, fl, &state, req, resp)
	a.o.mu.Lock()
	delete(a.o.flows, state)
	a.o.mu.Unlock()
	a.mu.Lock()
	a.pending = nil
	if err != nil {
		fl.err = authError(err)
		a.lastErr = "authorization failed: " + fl.err
		a.c.h.opts.Logger.Warn("an MCP server's authorization failed", "server", a.c.cfg.Name, "error", fl.err)
	}
	a.mu.Unlock()
	if err == nil {
		// Connect now, so that the callback answers once the tools are in.
		a.c.mu.Lock()
		a.c.failures, a.c.nextTry = 0, time.Time{}
		a.c.mu.Unlock()
		if _, err := a.c.session(ctx); err != nil {
			fl.err = "authorized, but connecting failed: " + clip(oneLine(err.Error()), 400)
		}
	}
	close(fl.done)
}

func (a *connAuth) authorize(ctx context.Context, fl *flow, state *string, req *http.Request, resp *http.Response) error {
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{a.o.redirectURL}, ClientName: "Toolport",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:         a.o.redirectURL,
		RequestRefreshToken: true,
		Client:              a.o.client,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, fmt.Errorf("the authorization URL: %w", err)
			}
			if u.Scheme != "https" && u.Scheme != "http" {
				return nil, errors.New("the authorization endpoint is not an http(s) URL")
			}
			*state = u.Query().Get("state")
			a.o.mu.Lock()
			a.o.flows[*state] = fl
			a.o.mu.Unlock()
			fl.url = args.URL
			close(fl.urlReady)
			a.c.h.opts.Logger.Info("an MCP server needs the user's authorization", "server", a.c.cfg.Name)
			select {
			case res := <-fl.callback:
				return res.result, res.err
			case <-ctx.Done():
				return nil, errors.New("nobody authorized it in time")
			}
		},
		NewTokenSource: func(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			a.mu.Lock()
			a.save(&storedToken{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType,
				Expiry: a.expiry(tok), ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL,
				AuthStyle: int(cfg.Endpoint.AuthStyle), Scopes: cfg.Scopes})
			a.lastErr = ""
			a.mu.Unlock()
			return oauth2.StaticTokenSource(tok), nil
		},
	})
	if err != nil {
		return err
	}
	return h.Authorize(ctx, req, resp)
}

// authError describes a failed flow without a token or code.
func authError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return tokenError(err)
	}
	return clip(oneLine(err.Error()), 400)
}

// status fills st's authorization fields.
func (a *connAuth) status(st *Status) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if fl := a.pending; fl != nil {
		select {
		case <-fl.urlReady: // url is set
			st.Authorization, st.AuthorizationURL = AuthNeeded, fl.url
		default:
		}
	} else if a.away {
		st.Authorization = AuthNeeded
	} else if a.tok != nil {
		st.Authorization = AuthAuthorized
	}
	// Why the authorization failed says more than the connection's error.
	if a.away {
		st.Error = (&NeedsAuthorizationError{Server: a.c.cfg.Name, Elsewhere: a.o.elsewhere}).Error()
		if a.lastErr != "" {
			st.Error = a.lastErr + ". " + st.Error
		}
	} else if a.lastErr != "" {
		st.Error = a.lastErr
		if st.Authorization == AuthNeeded {
			st.Error += "; authorize it again"
		}
	}
}

// needsUser reports whether a flow waits for the user.
func (a *connAuth) needsUser() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending != nil
}

// needsUserElsewhere reports whether the user must authorize the server
// from another process.
func (a *connAuth) needsUserElsewhere() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.away
}

// States of [Status.Authorization].
const (
	AuthNeeded     = "needs authorization"
	AuthAuthorized = "authorized"
)

// LogValue keeps tokens out of a log line even if one is handed whole.
func (t *storedToken) LogValue() slog.Value { return slog.StringValue("[REDACTED]") }
