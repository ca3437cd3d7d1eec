package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolport/toolport/internal/server"
)

// fakeSettings counts the changes that reach it; the rules under test are
// the server's, in front of it.
type fakeSettings struct{ calls atomic.Int32 }

func (f *fakeSettings) View(context.Context) (any, error) {
	return map[string]any{"keys": []any{}}, nil
}
func (f *fakeSettings) SetKeys(context.Context, map[string]string) error {
	f.calls.Add(1)
	return nil
}
func (f *fakeSettings) SaveModel(context.Context, server.ModelConnection) error {
	f.calls.Add(1)
	return nil
}
func (f *fakeSettings) DeleteModel(_ context.Context, name string) error {
	f.calls.Add(1)
	return server.ErrSettingsNotFound
}
func (f *fakeSettings) ListModels(context.Context, server.ModelConnection) ([]string, error) {
	f.calls.Add(1)
	return nil, server.ErrSettingsUpstream
}
func (f *fakeSettings) AttachMCP(context.Context, server.MCPServerSetting) error {
	f.calls.Add(1)
	return nil
}
func (f *fakeSettings) DetachMCP(context.Context, string) error {
	f.calls.Add(1)
	return nil
}

// TestSettingsAreGuarded: the settings answer only to the token or, on a
// server without one, to a client on loopback, and under the rules of
// every route (Host, cross-origin, JSON bodies).
func TestSettingsAreGuarded(t *testing.T) {
	for _, c := range []struct {
		name       string
		token      string
		remote     string
		method     string
		path, body string
		header     map[string]string
		status     int
		code       string
		reached    bool
	}{
		{name: "loopback without a token", remote: "127.0.0.1:5000", method: "PUT", path: "/api/settings/keys", body: `{"brave_api_key":"k"}`,
			status: 200, reached: true},
		{name: "IPv6 loopback", remote: "[::1]:5000", method: "GET", path: "/api/settings", status: 200},
		{name: "another machine without a token", remote: "192.0.2.7:5000", method: "PUT", path: "/api/settings/keys", body: `{"brave_api_key":"k"}`,
			status: 403, code: "FORBIDDEN"},
		{name: "another machine reading", remote: "192.0.2.7:5000", method: "GET", path: "/api/settings", status: 403, code: "FORBIDDEN"},
		{name: "another machine attaching", remote: "192.0.2.7:5000", method: "POST", path: "/api/settings/mcp", body: `{"name":"x","command":"sh"}`,
			status: 403, code: "FORBIDDEN"},
		{name: "the token from another machine", token: "tok-123456", remote: "192.0.2.7:5000", method: "POST", path: "/api/settings/models",
			body: `{"name":"x","provider":"openai","model":"m"}`, header: map[string]string{"Authorization": "Bearer tok-123456"}, status: 200, reached: true},
		{name: "no token on loopback when one is set", token: "tok-123456", remote: "127.0.0.1:5000", method: "PUT", path: "/api/settings/keys",
			body: `{"brave_api_key":"k"}`, status: 401, code: "UNAUTHORIZED"},
		{name: "cross-origin", remote: "127.0.0.1:5000", method: "PUT", path: "/api/settings/keys", body: `{"brave_api_key":"k"}`,
			header: map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, status: 403, code: "CROSS_ORIGIN"},
		{name: "another Host", remote: "127.0.0.1:5000", method: "GET", path: "/api/settings",
			header: map[string]string{"Host": "rebound.example"}, status: 403, code: "FORBIDDEN_HOST"},
		{name: "a form body", remote: "127.0.0.1:5000", method: "POST", path: "/api/settings/mcp", body: `name=x`,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "a bad name in the path", remote: "127.0.0.1:5000", method: "DELETE", path: "/api/settings/mcp/a%20b", status: 400, code: "BAD_REQUEST"},
		{name: "not found", remote: "127.0.0.1:5000", method: "DELETE", path: "/api/settings/models/x", status: 404, code: "NOT_FOUND", reached: true},
		{name: "an upstream failure", remote: "127.0.0.1:5000", method: "POST", path: "/api/settings/models/list",
			body: `{"name":"x","provider":"openai"}`, status: 502, code: "UPSTREAM", reached: true},
		{name: "too many args", remote: "127.0.0.1:5000", method: "POST", path: "/api/settings/mcp",
			body: `{"name":"x","command":"sh","args":[` + strings.Repeat(`"a",`, 64) + `"a"]}`, status: 400, code: "BAD_REQUEST"},
		{name: "a key too long", remote: "127.0.0.1:5000", method: "PUT", path: "/api/settings/keys",
			body: `{"brave_api_key":"` + strings.Repeat("k", 4097) + `"}`, status: 400, code: "BAD_REQUEST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := &fakeSettings{}
			e := newEnv(t, envOptions{token: c.token, config: func(cfg *server.Config) { cfg.Settings = fake }})
			req := httptest.NewRequest(c.method, "http://127.0.0.1"+c.path, strings.NewReader(c.body))
			req.RemoteAddr = c.remote
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			for k, v := range c.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			w := httptest.NewRecorder()
			e.srv.Handler().ServeHTTP(w, req)
			if w.Code != c.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, c.status)
			}
			if c.code != "" {
				var body struct{ Error struct{ Code string } }
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != c.code {
					t.Errorf("error %s, want code %s", w.Body, c.code)
				}
			}
			if got := fake.calls.Load() > 0; got != c.reached {
				t.Errorf("the change reached the settings: %v, want %v", got, c.reached)
			}
		})
	}
}

// Without Settings (a server built for tests, or one that does not offer
// them) the routes are not there.
func TestSettingsAbsent(t *testing.T) {
	e := newEnv(t, envOptions{})
	code, body := e.do(t, http.MethodGet, "/api/settings", "")
	if code != http.StatusNotFound {
		t.Errorf("%d %s", code, body)
	}
}
