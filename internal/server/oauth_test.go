package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/server"
)

// The OAuth callback takes the authorization server's redirect, a
// cross-site navigation without the API token, from this machine only;
// a state no flow waits for changes nothing; the guard's Host rule holds.
func TestOAuthCallbackRoute(t *testing.T) {
	broker, err := mcphost.NewOAuth(mcphost.OAuthConfig{RedirectURL: "http://127.0.0.1:1/oauth/callback"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{token: "api-token-0123456789", config: func(c *server.Config) { c.OAuth = broker }})
	cases := []struct {
		name       string
		remote     string
		host       string
		method     string
		wantStatus int
		want       string
	}{
		{"forged state from loopback", "127.0.0.1:5000", "", "GET", http.StatusBadRequest, "no authorization is waiting"},
		{"from another machine", "192.0.2.7:5000", "", "GET", http.StatusForbidden, "only this machine"},
		{"a Host not allowed", "127.0.0.1:5000", "evil.example", "GET", http.StatusForbidden, "FORBIDDEN_HOST"},
		{"a cross-site POST", "127.0.0.1:5000", "", "POST", http.StatusForbidden, "CROSS_ORIGIN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://127.0.0.1/oauth/callback?code=abc&state=not-a-flow", nil)
			req.RemoteAddr = c.remote
			if c.host != "" {
				req.Host = c.host
			}
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Sec-Fetch-Mode", "navigate")
			rec := httptest.NewRecorder()
			e.srv.Handler().ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != c.wantStatus || !strings.Contains(string(body), c.want) {
				t.Errorf("%d %s; want %d with %q", rec.Code, body, c.wantStatus, c.want)
			}
			if rec.Code == http.StatusBadRequest && rec.Header().Get("Referrer-Policy") != "no-referrer" {
				t.Error("the callback page may send its URL (with the code) as a referrer")
			}
		})
	}
}
