package music

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// tidalUpstream is a TIDAL stand-in on 127.0.0.1 whose token endpoint and
// API answer what a test says.
type tidalUpstream struct {
	srv        *httptest.Server
	token      func(w http.ResponseWriter) // nil: a valid token
	api        func(w http.ResponseWriter, n int32)
	apiCalls   atomic.Int32
	tokenCalls atomic.Int32
}

func newTidalUpstream(t *testing.T) *tidalUpstream {
	u := &tidalUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/oauth2/token" {
			u.tokenCalls.Add(1)
			if u.token != nil {
				u.token(w)
				return
			}
			write(w, 200, []byte(`{"access_token":"access-token-1","token_type":"Bearer","expires_in":3600}`))
			return
		}
		u.api(w, u.apiCalls.Add(1))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// registry serves the music tools over a client for the stand-in.
func (u *tidalUpstream) registry(t *testing.T, cfg tidal.Config) *tool.Registry {
	t.Helper()
	cfg.BaseURL, cfg.AuthURL, cfg.HTTPClient = u.srv.URL, u.srv.URL, u.srv.Client()
	if cfg.ClientID == "" {
		cfg.ClientID, cfg.ClientSecret = "id", "tidal-client-secret"
	}
	tc, err := tidal.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0), tool.WithMaxRetryAfter(time.Millisecond))
	if err := reg.Register(Tools(New(nil, nil, tc))...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func status(code int, body string, header ...string) func(http.ResponseWriter, int32) {
	return func(w http.ResponseWriter, _ int32) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		write(w, code, []byte(body))
	}
}

// The codes the TIDAL tools return for each way TIDAL can fail, as they were
// when the client returned tool errors itself.
func TestTidalFailuresKeepTheirToolCodes(t *testing.T) {
	notFound := string(readFixture(t, "error_404_artist_not_found.json"))
	tests := []struct {
		name      string
		cfg       tidal.Config
		token     func(http.ResponseWriter)
		api       func(http.ResponseWriter, int32)
		code      tool.Code
		retryable bool
		status    int
		inMessage string
		calls     int32 // API calls, the registry's retry included
	}{
		{name: "429", api: status(429, `{"errors":[{"status":"429","detail":"Rate limit exceeded"}]}`,
			"X-Ratelimit-Remaining", "0", "X-Ratelimit-Burst-Capacity", "10", "X-Ratelimit-Replenish-Rate", "4"),
			// Retryable, but not retried here: the hint is longer than the registry waits.
			code: tool.CodeRateLimit, retryable: true, status: 429, inMessage: "Rate limit exceeded", calls: 1},
		{name: "503", api: status(503, `{"errors":[{"status":"503","detail":"Service unavailable"}]}`),
			code: tool.CodeHTTP, retryable: true, status: 503, inMessage: "HTTP 503", calls: 2},
		{name: "502 with an HTML body", api: status(502, `<html>bad gateway</html>`),
			code: tool.CodeHTTP, retryable: true, status: 502, inMessage: "HTTP 502", calls: 2},
		{name: "500", api: status(500, `{"errors":[{"status":"500"}]}`),
			code: tool.CodeHTTP, status: 500, inMessage: "HTTP 500", calls: 1},
		{name: "recorded 404", api: status(404, notFound),
			code: tool.CodeNotFound, status: 404, inMessage: "Artist of a given 'id' 38420776 not found", calls: 1},
		{name: "403", api: status(403, `{"errors":[{"status":"403","code":"FORBIDDEN"}]}`),
			code: tool.CodeAuthInvalid, status: 403, inMessage: "FORBIDDEN", calls: 1},
		{name: "401 after a refresh", api: status(401, `{"errors":[{"status":"401","code":"UNAUTHORIZED"}]}`),
			code: tool.CodeAuthInvalid, status: 401, inMessage: "check the TIDAL client credentials", calls: 2},
		{name: "400 names the parameter", api: status(400, `{"errors":[{"status":"400","code":"VALUE_REGEX_MISMATCH","detail":"bad country","source":{"parameter":"countryCode"}}]}`),
			code: tool.CodeHTTP, status: 400, inMessage: "parameter countryCode", calls: 1},
		{name: "HTML with 200", api: status(200, `<!doctype html><p>hello`),
			code: tool.CodeParse, status: 200, inMessage: "not a valid JSON:API document", calls: 1},
		{name: "the token endpoint refuses the credentials",
			token: func(w http.ResponseWriter) { write(w, 401, []byte(`{"error":"invalid_client"}`)) },
			code:  tool.CodeAuthInvalid, status: 401, inMessage: "TIDAL_CLIENT_ID", calls: 0},
		{name: "no credentials", cfg: tidal.Config{ClientID: "id"},
			code: tool.CodeAuthMissing, inMessage: "TIDAL_CLIENT_SECRET", calls: 0},
		{name: "an empty album", api: status(200, `{"data":[],"links":{"self":"/albums"}}`),
			code: tool.CodeNotFound, inMessage: "TIDAL has no album 396698918", calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newTidalUpstream(t)
			u.token, u.api = tt.token, tt.api
			res := call(t, u.registry(t, tt.cfg), "albumTracks", `{"albumId":"396698918"}`, nil)
			if res.OK() {
				t.Fatalf("call succeeded: %s", res.JSON)
			}
			e := res.Err
			if e.Code != tt.code || e.Retryable != tt.retryable || e.Status != tt.status || !strings.Contains(e.Message, tt.inMessage) {
				t.Errorf("error = %s retryable=%v status=%d %q; want %s %v %d %q",
					e.Code, e.Retryable, e.Status, e.Message, tt.code, tt.retryable, tt.status, tt.inMessage)
			}
			if strings.Contains(string(res.JSON), "tidal-client-secret") || strings.Contains(string(res.JSON), "access-token-1") {
				t.Errorf("result leaks a secret: %s", res.JSON)
			}
			if n := u.apiCalls.Load(); n != tt.calls {
				t.Errorf("%d API calls, want %d", n, tt.calls)
			}
			switch tt.code {
			case tool.CodeRateLimit:
				if e.RetryAfter != 250*time.Millisecond {
					t.Errorf("RetryAfter = %v, want 250ms from x-ratelimit-replenish-rate 4", e.RetryAfter)
				}
			case tool.CodeAuthMissing:
				if e.Event == nil || e.Event.Kind != "config_required" || !json.Valid([]byte(e.Event.DataJSON)) ||
					!strings.Contains(e.Event.Content, "~/.config/toolport/credentials.json") {
					t.Errorf("want a config_required event naming Toolport's credentials file, got %+v", e.Event)
				}
			}
		})
	}
}

func TestTidalInputAndTransportFailures(t *testing.T) {
	u := newTidalUpstream(t)
	u.api = status(200, `{}`)
	reg := u.registry(t, tidal.Config{})

	// An id that cannot be TIDAL's is refused before any request.
	res := call(t, reg, "albumTracks", `{"albumId":"12/../albums"}`, nil)
	if res.OK() || res.Err.Code != tool.CodeValidation || u.tokenCalls.Load()+u.apiCalls.Load() != 0 {
		t.Errorf("bad id: %s after %d requests", res.JSON, u.tokenCalls.Load()+u.apiCalls.Load())
	}

	// A canceled call is CANCELED.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	okClient, err := tidal.NewClient(tidal.Config{ClientID: "id", ClientSecret: "s", BaseURL: u.srv.URL, AuthURL: u.srv.URL, HTTPClient: u.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := okClient.AlbumWithTracks(ctx, "396698918"); tidalError(err).(*tool.Error).Code != tool.CodeCanceled {
		t.Errorf("canceled: %v", tidalError(err))
	}

	// Nothing listening: NETWORK_ERROR, retried once, the request URL not in the message.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	tc, err := tidal.NewClient(tidal.Config{ClientID: "id", ClientSecret: "s", BaseURL: "http://" + addr, AuthURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	reg = tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(Tools(New(nil, nil, tc))...)
	res = call(t, reg, "albumTracks", `{"albumId":"396698918"}`, nil)
	if res.OK() || res.Err.Code != tool.CodeNetwork || !res.Err.Retryable || !res.Retried || strings.Contains(res.Err.Message, "http://") || strings.Contains(res.Err.Message, "/v2") {
		t.Errorf("network failure: %s", res.JSON)
	}

	// A base URL TIDAL cannot be reached at is CONFIG_ERROR for the tools.
	svc := Open(Config{Tidal: tidal.Config{BaseURL: "ftp://tidal.example"}}, nil)
	if _, err := svc.Tidal(); err == nil || err.(*tool.Error).Code != tool.CodeConfig ||
		!strings.Contains(err.Error(), "TIDAL_API_BASE_URL") {
		t.Errorf("bad base URL: %v", err)
	}
}

// The client fails once per call; the registry retries a temporary failure
// once.
func TestTidalRegistryRetriesOnce(t *testing.T) {
	album := readFixture(t, "album_396698918.json")
	u := newTidalUpstream(t)
	u.api = func(w http.ResponseWriter, n int32) {
		if n == 1 {
			write(w, 503, []byte(`{"errors":[{"status":"503"}]}`))
			return
		}
		write(w, 200, album)
	}
	tc, err := tidal.NewClient(tidal.Config{ClientID: "id", ClientSecret: "s", BaseURL: u.srv.URL, AuthURL: u.srv.URL, HTTPClient: u.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	reg.Register(tool.Must(tool.New(tool.Spec{Name: "album", Description: "album"}, func(ctx context.Context, in struct {
		ID string `json:"id"`
	}) (albumTitle, error) {
		a, err := tc.Album(ctx, in.ID)
		if err != nil {
			return albumTitle{}, tidalError(err)
		}
		return albumTitle{Title: a.Title}, nil
	})))
	res := reg.Call(context.Background(), "album", []byte(`{"id":"396698918"}`))
	if !res.OK() || !res.Retried || u.apiCalls.Load() != 2 {
		t.Errorf("result ok=%v retried=%v: %s", res.OK(), res.Retried, res.JSON)
	}
}

type albumTitle struct {
	Title string `json:"title"`
}

func (o albumTitle) Summary() string { return o.Title }

// The client's progress reaches the tool call's progress callback.
func TestTidalProgressReachesTheCall(t *testing.T) {
	var got []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
	reportTidalProgress(ctx, tidal.Progress{Done: 20, Total: 46, Message: "album 1: page 1, 20 tracks"})
	want := []tool.Progress{{Done: 20, Total: 46, Message: "album 1: page 1, 20 tracks"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress = %+v, want %+v", got, want)
	}
}

func TestTidalConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	creds := dir + "/creds.json"
	if err := os.WriteFile(creds, []byte(`{"tidal":{"client_id":"file-id","client_secret":"file-secret"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		want tidal.Config
	}{
		{"defaults and credentials file", map[string]string{"TOOLPORT_CREDENTIALS": creds},
			tidal.Config{ClientID: "file-id", ClientSecret: "file-secret", BaseURL: tidal.DefaultBaseURL, AuthURL: tidal.DefaultAuthURL, CountryCode: "US"}},
		{"environment wins", map[string]string{"TOOLPORT_CREDENTIALS": creds, "TIDAL_CLIENT_ID": "env-id", "TIDAL_CLIENT_SECRET": "env-secret",
			"TIDAL_API_BASE_URL": "http://127.0.0.1:9", "TIDAL_AUTH_URL": "http://127.0.0.1:8", "TIDAL_COUNTRY_CODE": "gb"},
			tidal.Config{ClientID: "env-id", ClientSecret: "env-secret", BaseURL: "http://127.0.0.1:9", AuthURL: "http://127.0.0.1:8", CountryCode: "GB"}},
		{"nothing configured", map[string]string{},
			tidal.Config{BaseURL: tidal.DefaultBaseURL, AuthURL: tidal.DefaultAuthURL, CountryCode: "US"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.New(func(k string) string { return tt.env[k] }, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := TidalConfigFromEnv(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TidalConfigFromEnv = %+v, want %+v", got, tt.want)
			}
			if tt.want.ClientSecret != "" && !slices.Contains(c.Secrets(), tt.want.ClientSecret) {
				t.Errorf("client secret not registered for redaction: %v", c.Secrets())
			}
		})
	}
}
