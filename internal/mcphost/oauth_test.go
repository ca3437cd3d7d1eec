package mcphost_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcphost/oauthtest"
	"github.com/toolport/toolport/tool"
)

// oauthEnv is the MCP server "notes", which needs OAuth (oauthtest's, behind
// an authorization server), and Toolport's side: the credentials file, the
// callback server (what `toolport serve` routes at /oauth/callback), the
// clock and the log.
type oauthEnv struct {
	server   string    // the notes server's MCP endpoint
	used     *sync.Map // the access tokens the notes server was sent
	path     string
	store    *config.MCPTokens
	oauth    *mcphost.OAuth
	callback *httptest.Server
	now      atomic.Pointer[time.Time]
	log      *bytes.Buffer
	logMu    *sync.Mutex
	logger   *slog.Logger
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newOAuthEnv(t *testing.T, as *oauthtest.AS) *oauthEnv {
	srv, used := oauthtest.ProtectedServer(t, as)
	e := &oauthEnv{server: srv.URL + "/mcp", used: used, path: filepath.Join(t.TempDir(), "credentials.json"), log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	creds := map[string]any{"mcp": map[string]any{"servers": map[string]any{"notes": map[string]any{"url": e.server}}}}
	if err := config.UpdateCredentials(e.path, func(root map[string]any) error { root["mcp"] = creds["mcp"]; return nil }); err != nil {
		t.Fatal(err)
	}
	e.store = &config.MCPTokens{Path: e.path}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	e.now.Store(&start)
	e.logger = slog.New(slog.NewTextHandler(lockedWriter{e.logMu, e.log}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.callback = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/callback" {
			http.NotFound(w, r)
			return
		}
		name, err := e.oauth.Callback(r.Context(), r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "authorized %s", name)
	}))
	t.Cleanup(e.callback.Close)
	e.oauth = e.newOAuth(t)
	return e
}

// newOAuth is a new process's broker over the same file and clock.
func (e *oauthEnv) newOAuth(t *testing.T) *mcphost.OAuth {
	o, err := mcphost.NewOAuth(mcphost.OAuthConfig{RedirectURL: e.callback.URL + "/oauth/callback", Store: e.store,
		Now: func() time.Time { return *e.now.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (e *oauthEnv) advance(d time.Duration) {
	next := e.now.Load().Add(d)
	e.now.Store(&next)
}

// attach attaches the notes server, its tools going to reg.
func (e *oauthEnv) attach(t *testing.T, reg *tool.Registry) *mcphost.Host {
	return attach(t, reg, []mcphost.Server{{Name: "notes", URL: e.server}}, mcphost.Options{Logger: e.logger, OAuth: e.oauth})
}

// authorized attaches the notes server and plays the user authorizing it.
func (e *oauthEnv) authorized(t *testing.T, reg *tool.Registry) *mcphost.Host {
	t.Helper()
	h := e.attach(t, reg)
	authorize(t, h)
	return h
}

// elsewhere is the broker of a process with no callback route (`toolport
// mcp`) over e's file and clock: where says where to authorize instead.
func (e *oauthEnv) elsewhere(t *testing.T, where string) *mcphost.OAuth {
	t.Helper()
	o, err := mcphost.NewOAuth(mcphost.OAuthConfig{AuthorizeElsewhere: where, Store: e.store,
		Now: func() time.Time { return *e.now.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// authorize plays the user authorizing h's one server, which waits for it.
func authorize(t *testing.T, h *mcphost.Host) {
	t.Helper()
	if code, body := browse(t, h.Status()[0].AuthorizationURL); code != http.StatusOK {
		t.Fatalf("callback: %d %s", code, body)
	}
}

// browse plays the user's browser: it opens the authorization URL, the AS
// approves and redirects to Toolport's callback, which answers.
func browse(t *testing.T, authURL string) (int, string) {
	code, body, _ := browseTo(t, authURL)
	return code, body
}

// browseTo also returns the URL it ended at (the callback's).
func browseTo(t *testing.T, authURL string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), resp.Request.URL.String()
}

func callWhoami(t *testing.T, reg *tool.Registry) *tool.Result {
	t.Helper()
	return reg.Call(t.Context(), "notes__whoami", json.RawMessage(`{}`))
}

func TestOAuthAuthorizeThenCallRefreshAndRestart(t *testing.T) {
	as := oauthtest.NewAS(t)
	e := newOAuthEnv(t, as)
	reg := tool.NewRegistry()
	h := e.attach(t, reg)

	// Attaching meets the 401: the server waits for the user.
	st := h.Status()[0]
	if st.Connected || st.Authorization != mcphost.AuthNeeded || !strings.HasPrefix(st.AuthorizationURL, as.Srv.URL+"/authorize?") {
		t.Fatalf("status after attach = %+v; want needs authorization with the AS's URL", st)
	}
	au, _ := url.Parse(st.AuthorizationURL)
	if q := au.Query(); q.Get("code_challenge_method") != "S256" || q.Get("resource") != e.server ||
		q.Get("redirect_uri") != e.callback.URL+"/oauth/callback" {
		t.Errorf("authorization URL query = %v; want PKCE S256, the resource, Toolport's callback", q)
	}
	if !strings.Contains(st.Error, "needs the user's authorization") {
		t.Errorf("status error = %q; want it to say the user must authorize", st.Error)
	}
	// A forged callback is refused and leaves the flow waiting.
	code, body := browse(t, e.callback.URL+"/oauth/callback?code=forged&state=not-the-state")
	if code != http.StatusBadRequest || !strings.Contains(body, "no authorization is waiting") {
		t.Fatalf("forged callback: %d %q", code, body)
	}
	if st := h.Status()[0]; st.Authorization != mcphost.AuthNeeded {
		t.Fatalf("after a forged callback: %+v", st)
	}

	code, body, callbackURL := browseTo(t, st.AuthorizationURL)
	if code != http.StatusOK || body != "authorized notes" {
		t.Fatalf("callback: %d %q", code, body)
	}
	st = h.Status()[0]
	if !st.Connected || st.Authorization != mcphost.AuthAuthorized || st.AuthorizationURL != "" || st.Error != "" {
		t.Fatalf("status after the callback = %+v", st)
	}
	if res := callWhoami(t, reg); res.Err != nil {
		t.Fatalf("call after authorization: %+v", res)
	}
	// The callback's URL again (the browser's back button): used up.
	if c, _ := browse(t, callbackURL); c == http.StatusOK {
		t.Error("a replayed authorization was accepted")
	}

	// Saved in the credentials file, 0600.
	fi, err := os.Stat(e.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode = %v; want 0600", fi.Mode().Perm())
	}
	first := savedToken(t, e.path)
	if first["access_token"] == "" || first["refresh_token"] == "" || first["expiry"] == "" {
		t.Fatalf("saved authorization = %v; want access and refresh token and expiry", first)
	}

	// The clock passes the token's expiry: the refresh token is used first.
	e.advance(2 * time.Hour)
	if res := callWhoami(t, reg); res.Err != nil {
		t.Fatalf("call after expiry: %+v", res)
	}
	if n := as.Refreshes.Load(); n != 1 {
		t.Errorf("refreshes = %d; want 1", n)
	}
	second := savedToken(t, e.path)
	if second["access_token"] == first["access_token"] || second["refresh_token"] == first["refresh_token"] {
		t.Error("the refreshed (rotated) tokens were not saved")
	}
	if _, ok := e.used.Load(second["access_token"]); !ok {
		t.Error("the server never saw the refreshed access token")
	}

	// The server refuses the token early (revoked, its clock ahead): the
	// 401 makes the host refresh and retry, without the user.
	as.ExpireAll(false)
	h.Close()
	reg2 := tool.NewRegistry()
	e.oauth = e.newOAuth(t) // a new process over the same file
	h2 := e.attach(t, reg2)
	if st := h2.Status()[0]; !st.Connected || st.Authorization != mcphost.AuthAuthorized {
		t.Fatalf("after a restart: %+v; want connected with the saved (refreshed) tokens", st)
	}
	if res := callWhoami(t, reg2); res.Err != nil {
		t.Fatalf("call after a restart: %+v", res)
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("the user was sent to the AS %d times; want once", n)
	}
	if n := as.Refreshes.Load(); n != 2 {
		t.Errorf("refreshes = %d; want 2 (expiry, then the early refusal)", n)
	}

	// Everything revoked: the call says the user must authorize again,
	// and the status has a new authorization URL.
	as.ExpireAll(true)
	res := callWhoami(t, reg2)
	if res.Err == nil || res.Err.Code != tool.CodeAuthMissing || !strings.Contains(res.Err.Message, "Authorize") {
		t.Fatalf("call with revoked tokens: %+v; want AUTH_MISSING saying to authorize", res)
	}
	if st := h2.Status()[0]; st.Authorization != mcphost.AuthNeeded || st.AuthorizationURL == "" {
		t.Fatalf("after revocation: %+v", st)
	}
	if saved := savedToken(t, e.path); saved != nil {
		t.Errorf("refused tokens stay in the file: %v", saved)
	}

	// No token in the log, the statuses, or the call results.
	statusJSON, _ := json.Marshal(append(h.Status(), h2.Status()...))
	e.logMu.Lock()
	logged := e.log.String()
	e.logMu.Unlock()
	for _, tok := range as.Tokens() {
		if strings.HasPrefix(tok, "client") {
			continue // the client id is public
		}
		for where, text := range map[string]string{"log": logged, "status": string(statusJSON), "result": string(res.JSON)} {
			if strings.Contains(text, tok) {
				t.Errorf("a token (%s…) is in the %s", tok[:4], where)
			}
		}
	}
	if !strings.Contains(logged, "needs the user's authorization") {
		t.Errorf("the log does not say the server needs authorization:\n%s", logged)
	}
}

// savedToken reads mcp.servers.notes.oauth from the file.
func savedToken(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		MCP struct {
			Servers map[string]struct {
				OAuth map[string]any `json:"oauth"`
			} `json:"servers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	o := root.MCP.Servers["notes"].OAuth
	if o == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range o {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func TestOAuthFailuresAreClear(t *testing.T) {
	t.Run("wrong audience", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		as.Audience = "https://elsewhere.example/mcp"
		e := newOAuthEnv(t, as)
		reg := tool.NewRegistry()
		h := e.attach(t, reg)
		code, body := browse(t, h.Status()[0].AuthorizationURL)
		if code != http.StatusBadRequest || !strings.Contains(body, "connecting failed") {
			t.Fatalf("callback: %d %q; want a failure saying connecting failed", code, body)
		}
		st := h.Status()[0]
		if st.Connected || !strings.Contains(st.Error, "refused the access token its authorization server issued") ||
			st.Authorization != mcphost.AuthNeeded {
			t.Fatalf("status = %+v; want the refusal said and a new authorization offered", st)
		}
		if len(reg.Tools()) != 0 {
			t.Errorf("tools registered: %v", reg.Tools())
		}
	})
	t.Run("authorization server down", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		as.FailMeta = true
		e := newOAuthEnv(t, as)
		h := e.attach(t, tool.NewRegistry())
		st := h.Status()[0]
		if st.Connected || st.Authorization != "" || !strings.Contains(st.Error, "authorization server metadata") {
			t.Fatalf("status = %+v; want an error naming the authorization server metadata", st)
		}
	})
	t.Run("token endpoint down at refresh", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		e := newOAuthEnv(t, as)
		reg := tool.NewRegistry()
		e.authorized(t, reg)
		as.ExpireAll(false)
		as.SetFailToken(true)
		res := callWhoami(t, reg)
		if res.Err == nil || !strings.Contains(res.Err.Message, "refreshing the access token") {
			t.Fatalf("call while the AS is down: %+v; want an error saying the refresh failed", res.Err)
		}
		if savedToken(t, e.path) == nil {
			t.Fatal("the tokens were forgotten because the authorization server was down")
		}
		as.SetFailToken(false)
		if res := callWhoami(t, reg); res.Err != nil {
			t.Fatalf("call once the AS is back: %+v", res.Err)
		}
		if n := as.Authorizes.Load(); n != 1 {
			t.Errorf("the user was sent to the AS %d times; want once", n)
		}
	})
	t.Run("user denies", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		e := newOAuthEnv(t, as)
		h := e.attach(t, tool.NewRegistry())
		au, _ := url.Parse(h.Status()[0].AuthorizationURL)
		code, body := browse(t, e.callback.URL+"/oauth/callback?"+url.Values{"error": {"access_denied"}, "state": {au.Query().Get("state")}}.Encode())
		if code != http.StatusBadRequest || !strings.Contains(body, "refused: access_denied") {
			t.Fatalf("callback: %d %q", code, body)
		}
		if st := h.Status()[0]; !strings.Contains(st.Error, "access_denied") {
			t.Fatalf("status = %+v", st)
		}
	})
}

// TestOAuthTokensAreScrubbedAtOnce: a server that quotes the bearer token
// it was sent. The registry knew no token at start (none was saved); the
// one obtained by the user's authorization, and the one a refresh brings,
// are scrubbed from the very next result, without a restart.
func TestOAuthTokensAreScrubbedAtOnce(t *testing.T) {
	as := oauthtest.NewAS(t)
	e := newOAuthEnv(t, as)
	reg := tool.NewRegistry()
	e.authorized(t, reg)
	echo := func(step string) string {
		t.Helper()
		res := reg.Call(t.Context(), "notes__echo_token", json.RawMessage(`{}`))
		if res.Err != nil {
			t.Fatalf("%s: echo_token: %+v", step, res.Err)
		}
		if !strings.Contains(string(res.JSON), "you sent: Bearer [REDACTED]") {
			t.Errorf("%s: the result does not redact the token: %s", step, res.JSON)
		}
		return string(res.JSON)
	}
	results := []string{echo("after authorizing")}
	e.advance(2 * time.Hour) // past the expiry: refreshed first
	results = append(results, echo("after a refresh"))
	if n := as.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d; want 1", n)
	}
	for _, tok := range as.Tokens() {
		if strings.HasPrefix(tok, "client") || strings.HasPrefix(tok, "code") {
			continue
		}
		for _, r := range results {
			if strings.Contains(r, tok) {
				t.Errorf("a token (%s…) is in a result", tok[:3])
			}
		}
	}
}

// TestOAuthAuthorizedElsewhere is `toolport mcp`: a process with no
// callback route. It uses and refreshes the tokens another process (serve)
// saved; when a new authorization is needed it starts no flow and fails the
// calls with AUTH_MISSING saying where to authorize; once the other process
// has saved new tokens, it connects with them without a restart.
func TestOAuthAuthorizedElsewhere(t *testing.T) {
	as := oauthtest.NewAS(t)
	e := newOAuthEnv(t, as)
	// serve: the user authorizes there.
	e.authorized(t, tool.NewRegistry()).Close()

	const where = "authorize it from the Settings page of `toolport serve`"
	away := e.elsewhere(t, where)
	reg := tool.NewRegistry()
	h2 := attach(t, reg, []mcphost.Server{{Name: "notes", URL: e.server}},
		mcphost.Options{Logger: e.logger, OAuth: away, Now: func() time.Time { return *e.now.Load() }})
	if st := h2.Status()[0]; !st.Connected || st.Authorization != mcphost.AuthAuthorized {
		t.Fatalf("with saved tokens: %+v; want connected", st)
	}
	e.advance(2 * time.Hour) // expired: refreshed, and the refresh saved
	before := savedToken(t, e.path)["access_token"]
	if res := callWhoami(t, reg); res.Err != nil {
		t.Fatalf("call after expiry: %+v", res.Err)
	}
	if n := as.Refreshes.Load(); n != 1 || savedToken(t, e.path)["access_token"] == before {
		t.Errorf("refreshes = %d, saved token changed = %v; want a saved refresh", n, savedToken(t, e.path)["access_token"] != before)
	}

	as.ExpireAll(true) // revoked: only the user can help
	for i := range 2 { // the call that meets it, and the next, during the backoff
		res := callWhoami(t, reg)
		if res.Err == nil || res.Err.Code != tool.CodeAuthMissing || !strings.Contains(res.Err.Message, where) {
			t.Fatalf("call %d with revoked tokens: %+v; want AUTH_MISSING saying %q", i, res.Err, where)
		}
	}
	if st := h2.Status()[0]; st.Authorization != mcphost.AuthNeeded || st.AuthorizationURL != "" || !strings.Contains(st.Error, where) {
		t.Errorf("status = %+v; want needs authorization, no URL, saying where", st)
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("a flow was started here: %d authorizations", n)
	}

	// The user authorizes in serve again; this process picks the tokens up.
	e.oauth = e.newOAuth(t)
	e.authorized(t, tool.NewRegistry())
	e.advance(time.Hour) // past the backoff
	if res := callWhoami(t, reg); res.Err != nil {
		t.Fatalf("call once authorized elsewhere: %+v", res.Err)
	}
	if st := h2.Status()[0]; !st.Connected || st.Authorization != mcphost.AuthAuthorized || st.Error != "" {
		t.Errorf("status = %+v; want connected and authorized", st)
	}
}

// TestOAuthSharedFileRotation: serve and mcp hold the same saved tokens;
// one refreshes (the AS rotates the refresh token), then the other's
// refresh is refused: it takes the tokens the first saved instead of
// forgetting them and asking the user again.
func TestOAuthSharedFileRotation(t *testing.T) {
	as := oauthtest.NewAS(t)
	e := newOAuthEnv(t, as)
	serveReg := tool.NewRegistry()
	h := e.authorized(t, serveReg)
	away := e.elsewhere(t, "use serve")
	mcpReg := tool.NewRegistry()
	attach(t, mcpReg, []mcphost.Server{{Name: "notes", URL: e.server}}, mcphost.Options{OAuth: away})
	e.advance(2 * time.Hour)
	if res := callWhoami(t, mcpReg); res.Err != nil {
		t.Fatalf("mcp's call after expiry: %+v", res.Err)
	}
	if res := callWhoami(t, serveReg); res.Err != nil {
		t.Fatalf("serve's call after mcp rotated the tokens: %+v", res.Err)
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("the user was sent to the AS %d times; want once", n)
	}
	if st := h.Status()[0]; st.Authorization != mcphost.AuthAuthorized {
		t.Errorf("serve's status = %+v", st)
	}
}
