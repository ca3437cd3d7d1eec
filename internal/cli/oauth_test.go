package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/mcphost/oauthtest"
)

// An MCP server that needs OAuth, attached from the page of the real
// `toolport serve`: the answer says it needs authorization and where; the
// browser goes there, the authorization server sends it back to serve's
// own /oauth/callback (a cross-site top-level navigation),
// and the server's tools are offered. The tokens are kept in the
// credentials file (0600), used again by the next serve, and are nowhere
// in the page's answers or the log.
func TestServeAuthorizesAnOAuthServer(t *testing.T) {
	u := newOAuthUser(t)
	as, creds, vars := u.as, u.creds, u.vars
	type status struct {
		Name, Authorization, AuthorizationURL, Error string
		Connected                                    bool
		Tools                                        []string
	}
	var seen []string // every answer, to look for tokens in
	view := func(t *testing.T, base string) status {
		t.Helper()
		code, body := send(t, "GET", base+"/api/settings", "")
		if code != 200 {
			t.Fatalf("GET /api/settings: %d %s", code, body)
		}
		seen = append(seen, body)
		var v struct{ MCPServers []status }
		if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.MCPServers) != 1 {
			t.Fatalf("settings: %v %s", err, body)
		}
		_, info := send(t, "GET", base+"/api/info", "")
		seen = append(seen, info)
		return v.MCPServers[0]
	}

	t.Run("authorize", func(t *testing.T) {
		base, stderr, _ := startServe(t, vars, "--packs", "web")
		code, body := send(t, "POST", base+"/api/settings/mcp", `{"name":"notes","url":"`+u.mcpURL+`"}`)
		if code != 200 || !strings.Contains(body, `"authorization":"needs authorization"`) {
			t.Fatalf("attach: %d %s", code, body)
		}
		st := view(t, base)
		if !strings.Contains(st.AuthorizationURL, "redirect_uri="+strings.ReplaceAll(strings.ReplaceAll(base, ":", "%3A"), "/", "%2F")+"%2Foauth%2Fcallback") {
			t.Fatalf("the authorization URL does not send the browser back to serve (%s): %s", base, st.AuthorizationURL)
		}
		if page := authorizeAt(t, st.AuthorizationURL); !strings.Contains(page, "notes is authorized") {
			t.Fatalf("callback page: %s", page)
		}
		st = view(t, base)
		if !st.Connected || st.Authorization != "authorized" || !slices.Contains(st.Tools, "notes__whoami") {
			t.Fatalf("after authorizing: %+v", st)
		}
		var i struct{ OfferedTools []string }
		getJSON(t, base+"/api/info", &i)
		if !slices.Contains(i.OfferedTools, "notes__whoami") {
			t.Errorf("notes__whoami not offered: %v", i.OfferedTools)
		}
		if code, body := send(t, "POST", base+"/api/tools/notes__whoami", `{}`); code != 200 || !strings.Contains(body, "test user") {
			t.Errorf("calling notes__whoami: %d %s", code, body)
		}
		fi, err := os.Stat(creds)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("credentials file: %v %v", fi, err)
		}
		raw, _ := os.ReadFile(creds)
		if !strings.Contains(string(raw), `"refresh_token"`) {
			t.Errorf("the tokens are not in the credentials file: %s", raw)
		}
		seen = append(seen, stderr.String())
	})
	t.Run("restart", func(t *testing.T) {
		base, stderr, _ := startServe(t, vars, "--packs", "web")
		st := view(t, base)
		if !st.Connected || st.Authorization != "authorized" {
			t.Fatalf("after a restart: %+v; want connected with the saved tokens", st)
		}
		if n := as.Authorizes.Load(); n != 1 {
			t.Errorf("the user was sent to the authorization server %d times; want once", n)
		}
		// Detaching forgets the tokens with the server.
		if code, body := send(t, "DELETE", base+"/api/settings/mcp/notes", ""); code != 200 {
			t.Fatalf("detach: %d %s", code, body)
		}
		raw, _ := os.ReadFile(creds)
		if strings.Contains(string(raw), "token") {
			t.Errorf("tokens left after detaching: %s", raw)
		}
		seen = append(seen, stderr.String())
	})
	for _, tok := range as.Tokens() {
		if strings.HasPrefix(tok, "client") {
			continue // the client id is not a secret
		}
		for _, s := range seen {
			if strings.Contains(s, tok) {
				t.Errorf("a token (%s…) is in an answer or the log", tok[:3])
			}
		}
	}
}

// oauthUser is a user of the MCP server "notes", which needs OAuth
// (oauthtest's, CONSTRUCTED from the RFCs): its authorization server, its
// MCP endpoint, and the user's environment (HOME and TOOLPORT_CREDENTIALS,
// naming a credentials file of mode 0600).
type oauthUser struct {
	as     *oauthtest.AS
	mcpURL string
	creds  string
	vars   map[string]string
}

// newOAuthUser starts the servers and writes an empty credentials file.
func newOAuthUser(t *testing.T) *oauthUser {
	t.Helper()
	as := oauthtest.NewAS(t)
	srv, _ := oauthtest.ProtectedServer(t, as)
	home := t.TempDir()
	u := &oauthUser{as: as, mcpURL: srv.URL + "/mcp", creds: filepath.Join(home, "c.json")}
	u.vars = map[string]string{"HOME": home, "TOOLPORT_CREDENTIALS": u.creds}
	u.writeCredentials(t, "{}")
	return u
}

// writeCredentials replaces the credentials file's content.
func (u *oauthUser) writeCredentials(t *testing.T, credentials string) {
	t.Helper()
	if err := os.WriteFile(u.creds, []byte(credentials), 0o600); err != nil {
		t.Fatal(err)
	}
}

// authorizeAt plays the user's browser at an authorization URL: a
// cross-site top-level navigation, no API token, that the authorization
// server approves and sends to the callback. It fails t unless the callback
// answers 200, and returns its page.
func authorizeAt(t *testing.T, authURL string) string {
	t.Helper()
	resp, err := (&http.Client{Transport: navigation{}}).Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("callback page: %d %s", resp.StatusCode, page)
	}
	return string(page)
}

// navigation sends requests as a browser's top-level cross-site navigation.
type navigation struct{}

func (navigation) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.Header.Set("Sec-Fetch-Mode", "navigate")
	r.Header.Set("Sec-Fetch-Dest", "document")
	return http.DefaultTransport.RoundTrip(r)
}
