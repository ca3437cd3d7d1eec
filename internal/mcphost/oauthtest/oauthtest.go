// Package oauthtest holds the tests' OAuth parts: an authorization server
// written from the published specifications and an MCP server (the official
// SDK's) that needs its tokens. Nothing here is recorded from a real
// service: the servers are built from the RFCs (CONSTRUCTED).
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AS is an OAuth 2.1 authorization server written from the published
// specifications, for the tests: metadata (RFC 8414), dynamic client
// registration (RFC 7591), the authorization code grant with PKCE S256
// verified (RFC 7636) and the resource indicator (RFC 8707), and refresh
// tokens (rotated). Its authorization endpoint approves at once, as a user
// who clicks "Allow" would: it redirects to the client's redirect URI.
type AS struct {
	Srv *httptest.Server

	mu         sync.Mutex
	clients    map[string][]string // client_id → redirect URIs
	codes      map[string]asCode
	access     map[string]asToken // access token → its grant
	refresh    map[string]string  // refresh token → resource
	issued     []string           // every token issued, to look for in logs and pages
	Audience   string             // when set, tokens are issued for it instead of the resource asked for
	FailMeta   bool               // the metadata endpoint answers 500
	failToken  bool               // the token endpoint answers 500 (SetFailToken)
	Authorizes atomic.Int32
	Refreshes  atomic.Int32
	n          int
}

type asCode struct{ client, redirect, challenge, resource string }
type asToken struct {
	aud     string
	expired bool // the resource server refuses it (revoked, or expired on its clock)
}

// NewAS starts an authorization server on loopback for the test.
func NewAS(t testing.TB) *AS {
	as := &AS{clients: map[string][]string{}, codes: map[string]asCode{}, access: map[string]asToken{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		as.mu.Lock()
		fail := as.FailMeta
		as.mu.Unlock()
		if fail {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                as.Srv.URL,
			"authorization_endpoint":                as.Srv.URL + "/authorize",
			"token_endpoint":                        as.Srv.URL + "/token",
			"registration_endpoint":                 as.Srv.URL + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported":                      []string{"tools", "offline_access"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
		id := as.newToken("client")
		as.mu.Lock()
		as.clients[id] = md.RedirectURIs
		as.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs,
			"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		as.mu.Lock()
		uris, known := as.clients[q.Get("client_id")]
		as.mu.Unlock()
		redirect := q.Get("redirect_uri")
		if !known || !slices.Contains(uris, redirect) || q.Get("response_type") != "code" ||
			q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		as.Authorizes.Add(1)
		code := as.newToken("code")
		as.mu.Lock()
		as.codes[code] = asCode{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource")}
		as.mu.Unlock()
		http.Redirect(w, r, redirect+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
			return
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		if as.failToken {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
			return
		}
		var resource string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			c, ok := as.codes[r.PostForm.Get("code")]
			delete(as.codes, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || c.client != r.PostForm.Get("client_id") || c.redirect != r.PostForm.Get("redirect_uri") ||
				base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
				return
			}
			resource = c.resource
		case "refresh_token":
			var ok bool
			if resource, ok = as.refresh[r.PostForm.Get("refresh_token")]; !ok {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
				return
			}
			delete(as.refresh, r.PostForm.Get("refresh_token")) // rotated
			as.Refreshes.Add(1)
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		aud := resource
		if as.Audience != "" {
			aud = as.Audience
		}
		at, rt := as.newTokenLocked("at"), as.newTokenLocked("rt")
		as.access[at] = asToken{aud: aud}
		as.refresh[rt] = resource
		writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
	})
	as.Srv = httptest.NewServer(mux)
	t.Cleanup(as.Srv.Close)
	return as
}

// SetFailToken makes the token endpoint answer 500 (v) or work again.
func (as *AS) SetFailToken(v bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.failToken = v
}

func (as *AS) newToken(kind string) string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.newTokenLocked(kind)
}

func (as *AS) newTokenLocked(kind string) string {
	as.n++
	tok := fmt.Sprintf("%s-%d-%s", kind, as.n, rand.Text())
	as.issued = append(as.issued, tok)
	return tok
}

// ExpireAll makes the resource server refuse every access token issued so
// far; revoke also forgets the refresh tokens.
func (as *AS) ExpireAll(revoke bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	for k, v := range as.access {
		v.expired = true
		as.access[k] = v
	}
	if revoke {
		as.refresh = map[string]string{}
	}
}

func (as *AS) Tokens() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return append([]string(nil), as.issued...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ProtectedServer is an MCP server (the official SDK's) behind
// auth.RequireBearerToken, taking only tokens the AS issued for its own URL,
// with its protected resource metadata (RFC 9728) at the path-inserted
// well-known URL. used counts the tokens it accepted.
func ProtectedServer(t testing.TB, as *AS) (*httptest.Server, *sync.Map) {
	var used sync.Map
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says who is calling", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you are the test user"}}}, struct{}{}, nil
		})
	// A careless server that quotes the caller's credentials back: what
	// the host's scrubber must catch.
	mcp.AddTool(s, &mcp.Tool{Name: "echo_token", Description: "Quotes the Authorization header it was sent", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you sent: " + req.Extra.Header.Get("Authorization")}}}, struct{}{}, nil
		})
	mux := http.NewServeMux()
	var srv *httptest.Server
	verify := func(_ context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		as.mu.Lock()
		info, ok := as.access[tok]
		as.mu.Unlock()
		if !ok || info.expired || info.aud != srv.URL+"/mcp" {
			return nil, auth.ErrInvalidToken
		}
		used.Store(tok, true)
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{as.Srv.URL},
			"scopes_supported": []string{"tools"}, "bearer_methods_supported": []string{"header"}})
	})
	srv = httptest.NewUnstartedServer(mux)
	srv.Start()
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp"})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)))
	t.Cleanup(srv.Close)
	return srv, &used
}
