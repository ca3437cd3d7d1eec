package doctor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/tooltest"
	"github.com/toolport/toolport/tool"
)

// newConfig is a configuration from env alone: no credentials file.
func newConfig(t *testing.T, env map[string]string) *config.Config {
	t.Helper()
	c, err := config.New(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scratchLibrary is what the CLI hands the doctor: an in-memory store.
func scratchLibrary(ctx context.Context) (music.Store, func() error, error) {
	db, err := sqlstore.Open(ctx, ":memory:")
	if err != nil {
		return nil, nil, err
	}
	return db, db.Close, nil
}

// only runs the named check of the configuration.
func only(t *testing.T, c *config.Config, src Sources, name string, o Options) Result {
	t.Helper()
	if src.Now == nil { // before Google's API ends: TestGoogleEndIsReported moves it
		src.Now = func() time.Time { return time.Date(2026, time.November, 29, 12, 0, 0, 0, time.UTC) }
	}
	if src.ScratchLibrary == nil {
		src.ScratchLibrary = scratchLibrary
	}
	for _, ck := range FromConfig(c, src) {
		if ck.Name == name {
			o.AllowQuota = true
			if o.Timeout == 0 {
				o.Timeout = 5 * time.Second
			}
			o.Secrets = c.Secrets()
			rep := Run(context.Background(), []Check{ck}, o)
			return rep.Results[0]
		}
	}
	t.Fatalf("no check named %s", name)
	return Result{}
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

const braveKey = "brave-key-planted-0123456789"

func TestSearxngFormatDisabled(t *testing.T) {
	// CONSTRUCTED: SearXNG's 403 to format=json when settings.yml leaves json
	// out of search.formats.
	srv := tooltest.NewServer(t, tooltest.Reply{Status: 403, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<h1>Forbidden</h1>")})
	r := only(t, newConfig(t, map[string]string{"TOOLPORT_SEARXNG_URL": srv.URL}), Sources{}, "searxng", Options{})
	if r.Status != Failing || !strings.HasPrefix(r.Detail, "misconfigured (HTTP 403)") || !strings.Contains(r.Detail, "search.formats") ||
		!strings.Contains(r.Fix, "TOOLPORT_SEARXNG_URL") || r.KeyWorks != nil {
		t.Errorf("result = %+v", r)
	}
}

func TestBraveOutcomes(t *testing.T) {
	okBody := tooltest.Fixture(t, "brave", "web_search_what_is_semantic_kernel.json")
	limits := tooltest.HeaderFixture(t, "brave", "rate_limit_headers_measured.txt")
	tests := []struct {
		name    string
		handler http.Handler // nil: the base URL is a closed port
		noKey   bool
		status  Status
		detail  string
		fix     string
		check   func(t *testing.T, r Result)
	}{
		{name: "ok", handler: tooltest.Reply{Header: merge(limits, "Content-Type", "application/json"), Body: okBody},
			status: OK, detail: "web_search_brave: ", check: func(t *testing.T, r Result) {
				if r.Limits["X-Ratelimit-Remaining"] != "0, 1977" || *r.KeyWorks != true || *r.Reachable != true || r.Requests != 1 {
					t.Errorf("result = %+v", r)
				}
			}},
		{name: "key rejected", handler: tooltest.Reply{Status: 401, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid.","status":401}}`)}, // CONSTRUCTED from the docs' 422 example with status 401
			status: Failing, detail: "key rejected (HTTP 401)", fix: "BRAVE_API_KEY", check: func(t *testing.T, r Result) {
				if r.KeyWorks == nil || *r.KeyWorks {
					t.Errorf("KeyWorks = %v", r.KeyWorks)
				}
			}},
		{name: "forbidden", handler: tooltest.Reply{Status: 403, Body: []byte(`forbidden`)},
			status: Failing, detail: "key rejected (HTTP 403)", fix: "BRAVE_API_KEY"},
		{name: "rate limited", handler: tooltest.Reply{Status: 429,
			Header: merge(http.Header{"Retry-After": {"30"}, "X-Ratelimit-Remaining": {"0, 0"}}, "Content-Type", "application/json"),
			Body:   tooltest.Fixture(t, "brave", "error_429_rate_limited.json")},
			status: Failing, detail: "rate limited (HTTP 429, Retry-After 30)", fix: "wait", check: func(t *testing.T, r Result) {
				if r.Limits["Retry-After"] != "30" || r.Limits["X-Ratelimit-Remaining"] != "0, 0" || r.Requests != 1 || !*r.KeyWorks {
					t.Errorf("result = %+v (the 429 must not be retried)", r)
				}
			}},
		{name: "upstream error", handler: tooltest.Reply{Status: 502, Body: []byte(`bad gateway`)},
			status: Failing, detail: "upstream error (HTTP 502)", check: func(t *testing.T, r Result) {
				if r.Requests != 1 {
					t.Errorf("requests = %d: the retry must be refused, not sent", r.Requests)
				}
			}},
		{name: "unreachable", status: Failing, detail: "unreachable: cannot connect", fix: "check the network", check: func(t *testing.T, r Result) {
			if r.Reachable == nil || *r.Reachable {
				t.Errorf("Reachable = %v", r.Reachable)
			}
		}},
		{name: "wrong shape", handler: tooltest.Reply{Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"search","web":{"results":"not a list"}}`)}, // CONSTRUCTED: a shape the API never documented
			status: Failing, detail: "answered, but not in the shape the client expects", fix: "--record"},
		{name: "not configured", noKey: true, status: NotConfigured, detail: "no API key", fix: "BRAVE_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := closedURL(t)
			if tt.handler != nil {
				base = tooltest.NewServer(t, tt.handler).URL
			}
			env := map[string]string{"BRAVE_API_BASE_URL": base}
			if !tt.noKey {
				env["BRAVE_API_KEY"] = braveKey
			}
			r := only(t, newConfig(t, env), Sources{}, "brave", Options{})
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) || !strings.Contains(r.Fix, tt.fix) {
				t.Errorf("got %s: %q (fix %q), want %s: %q (fix %q)", r.Status, r.Detail, r.Fix, tt.status, tt.detail, tt.fix)
			}
			if b, _ := json.Marshal(r); strings.Contains(string(b), braveKey) {
				t.Errorf("the key leaked into the result: %s", b)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func merge(h http.Header, k, v string) http.Header {
	h = h.Clone()
	h.Set(k, v)
	return h
}

// TestEveryUpstreamOK runs each check against a local fake that answers as
// the real upstream does.
func TestEveryUpstreamOK(t *testing.T) {
	jsonType := http.Header{"Content-Type": {"application/json"}}
	google := tooltest.NewServer(t, tooltest.Reply{Header: jsonType, Body: tooltest.Fixture(t, "google", "cse_what_is_semantic_kernel.json")})
	searx := tooltest.NewServer(t, tooltest.Reply{Header: jsonType, Body: tooltest.Fixture(t, "searxng", "constructed_search_general.json")})
	ckanSrv := tooltest.NewCKANServer(t, map[string]http.HandlerFunc{"package_search": tooltest.CKANPackageSearch(t)})
	lrc := tooltest.NewServer(t, tooltest.Reply{Header: jsonType, Body: tooltest.Fixture(t, "lrclib", "get_by_id_3396226.json")})
	// CONSTRUCTED: GET /v1/track answers {"content":[tracks]}; the track is the docs' example.
	recco := tooltest.NewServer(t, tooltest.Reply{Header: jsonType,
		Body: []byte(`{"content":[` + string(tooltest.Fixture(t, "reccobeats", "docs_example_track_wicked_games.json")) + `]}`)})
	weaviate := tooltest.NewServer(t, tooltest.Reply{})
	// CONSTRUCTED: the OpenAI embeddings response shape.
	emb := tooltest.NewServer(t, tooltest.Reply{Header: jsonType, Body: []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],"model":"m"}`)})
	traces := tooltest.NewServer(t, tooltest.Reply{Header: http.Header{"Content-Type": {"application/x-protobuf"}}})
	model := servertest.NewModelServer(t, servertest.Turn{Events: []servertest.Event{servertest.Text("OK")}})
	tidalAuth, tidalSrv := newFakeTidal(t)
	redis := fakeRedis(t, "")

	env := map[string]string{
		"GOOGLE_SEARCH_API_KEY": "google-key-0123456789", "GOOGLE_SEARCH_ENGINE_ID": "engine", "GOOGLE_SEARCH_BASE_URL": google.URL,
		"TOOLPORT_SEARXNG_URL": searx.URL,
		"CKAN_BASE_URL":        ckanSrv.URL, "LRCLIB_BASE_URL": lrc.URL, "RECCOBEATS_BASE_URL": recco.URL,
		"TOOLPORT_VECTOR_URL": weaviate.URL, "TOOLPORT_EMBEDDINGS_URL": emb.URL, "TOOLPORT_EMBEDDINGS_MODEL": "m",
		"OTEL_EXPORTER_OTLP_ENDPOINT": traces.URL, "TOOLPORT_REDIS_URL": "redis://" + redis,
		"TIDAL_CLIENT_ID": "tidal-id-0123456789", "TIDAL_CLIENT_SECRET": "tidal-secret-0123456789",
		"TIDAL_API_BASE_URL": tidalSrv.URL + "/v2", "TIDAL_AUTH_URL": tidalAuth.URL + "/v1/oauth2/token",
	}
	for _, kv := range model.Env("anthropic") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c := newConfig(t, env)
	tests := []struct{ name, detail, path string }{
		{"google", "web_search_google: ", "/customsearch/v1"},
		{"searxng", `web_search_searxng: 1 result for "toolport"`, "/search"},
		{"ckan", "searchDatasets: ", "/api/3/action/package_search"},
		{"tidal", "tidalSearch: Found 1 track", "/v2/searchResults"},
		{"lrclib", `record 3396226: "I Want to Live" by Borislav Slavov`, "/api/get/3396226"},
		{"reccobeats", `track "Wicked Games"`, "/v1/track"},
		{"weaviate", "ready", "/v1/.well-known/ready"},
		{"embeddings", "openai:m: a 3-dimension vector", "/v1/embeddings"},
		{"traces", "accepted an empty export", "/v1/traces"},
		{"model", "answered", ""},
		{"redis", "PING answered PONG", ""},
	}
	servers := map[string]*tooltest.Server{"google": google, "searxng": searx, "ckan": ckanSrv, "lrclib": lrc, "reccobeats": recco,
		"weaviate": weaviate, "embeddings": emb, "traces": traces, "tidal": tidalSrv}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := only(t, c, Sources{}, tt.name, Options{})
			if r.Status != OK || !strings.Contains(r.Detail, tt.detail) {
				t.Fatalf("got %s: %q (fix %q), want ok: %q", r.Status, r.Detail, r.Fix, tt.detail)
			}
			if s := servers[tt.name]; s != nil && s.Last(t).URL.Path != tt.path {
				t.Errorf("the check asked %s, want %s", s.Last(t).URL.Path, tt.path)
			}
		})
	}
}

// newFakeTidal starts TIDAL's two hosts: the token endpoint, and the API
// answering one search with a recorded track (the answer is CONSTRUCTED
// around recorded resources, as tooltest.TIDALCatalog documents).
func newFakeTidal(t *testing.T) (auth, api *tooltest.Server) {
	cat := tooltest.LoadTIDALCatalog(t)
	track := cat.SearchTrack(cat.Tracks[0])
	included := append([]any{track, cat.SearchAlbum()}, cat.Artists...)
	included = append(included, cat.Artworks...)
	search, err := json.Marshal(map[string]any{
		"data": []any{map[string]any{"id": "search-1", "type": "searchResults", "relationships": map[string]any{
			"tracks": map[string]any{"data": []any{map[string]any{"id": track["id"], "type": "tracks"}}}}}},
		"included": included})
	if err != nil {
		t.Fatal(err)
	}
	auth = tooltest.NewServer(t, tooltest.Reply{Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"access_token":"tidal-token-0123456789","token_type":"Bearer","expires_in":3600}`)})
	api = tooltest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.api+json")
		switch {
		case r.Header.Get("Authorization") != "Bearer tidal-token-0123456789":
			w.WriteHeader(401)
		case r.URL.Path == "/v2/searchResults":
			w.Write(search)
		default:
			w.WriteHeader(404)
		}
	}))
	return auth, api
}

// fakeRedis listens on 127.0.0.1 and answers each command line-protocol
// style: AUTH with wantPass (when set) else an error, PING with PONG.
func fakeRedis(t *testing.T, wantPass string) string {
	return tcpServer(t, func(conn net.Conn) {
		r := bufio.NewReader(conn)
		authed := wantPass == ""
		for {
			args, err := readCommand(r)
			if err != nil {
				return
			}
			switch strings.ToUpper(args[0]) {
			case "AUTH":
				if args[len(args)-1] == wantPass {
					authed = true
					conn.Write([]byte("+OK\r\n"))
				} else {
					conn.Write([]byte("-WRONGPASS invalid username-password pair or user is disabled.\r\n"))
				}
			case "PING":
				if !authed {
					conn.Write([]byte("-NOAUTH Authentication required.\r\n"))
				} else {
					conn.Write([]byte("+PONG\r\n"))
				}
			default:
				conn.Write([]byte("-ERR unknown command\r\n"))
			}
		}
	})
}

// tcpServer listens on 127.0.0.1 until the test ends and serves each
// connection with serve, which it closes after; it returns the address.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return nil, errors.New("bad command")
	}
	var n int
	if _, err := fmtSscan(line[1:], &n); err != nil {
		return nil, err
	}
	args := make([]string, 0, n)
	for range n {
		if _, err := r.ReadString('\n'); err != nil { // $len
			return nil, err
		}
		arg, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args = append(args, strings.TrimRight(arg, "\r\n"))
	}
	return args, nil
}

func TestRedisOutcomes(t *testing.T) {
	addr := fakeRedis(t, "redis-pass-0123456789")
	tests := []struct {
		name, url string
		status    Status
		detail    string
	}{
		{"password accepted", "redis://:redis-pass-0123456789@" + addr + "/0", OK, "PONG"},
		{"password refused", "redis://:wrong-pass-0123456789@" + addr, Failing, "WRONGPASS"},
		{"no password", "redis://" + addr, Failing, "NOAUTH"},
		{"closed port", "redis://" + strings.TrimPrefix(closedURL(t), "http://"), Failing, "refused"},
		{"not a redis URL", "http://" + addr, Failing, "scheme must be redis"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConfig(t, map[string]string{"TOOLPORT_REDIS_URL": tt.url})
			r := only(t, c, Sources{}, "redis", Options{})
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %s: %q, want %s: %q", r.Status, r.Detail, tt.status, tt.detail)
			}
			if strings.Contains(r.Detail+r.Endpoint+r.Fix, "0123456789") {
				t.Errorf("the password leaked: %+v", r)
			}
		})
	}
}

func TestPostgres(t *testing.T) {
	c := newConfig(t, nil)
	closed := "postgres://postgres:pg-pass-0123456789@" + strings.TrimPrefix(closedURL(t), "http://") + "/db?sslmode=disable"
	r := only(t, c, Sources{DatabaseURL: closed}, "postgres", Options{Secrets: []string{closed}})
	if r.Status != Failing || !strings.Contains(r.Detail, "connecting") || strings.Contains(r.Detail+r.Endpoint, "pg-pass") {
		t.Errorf("closed port: %+v", r)
	}
	if r := only(t, c, Sources{DatabaseURL: "/tmp/x.db"}, "postgres", Options{}); r.Status != NotConfigured {
		t.Errorf("SQLite: %+v", r)
	}
	dsn := os.Getenv("TOOLPORT_TEST_DATABASE_URL")
	if dsn == "" {
		t.Log("TOOLPORT_TEST_DATABASE_URL is not set: the live PostgreSQL case does not run")
		return
	}
	if r := only(t, c, Sources{DatabaseURL: dsn}, "postgres", Options{}); r.Status != OK || !strings.HasPrefix(r.Detail, "PostgreSQL ") {
		t.Errorf("live: %+v", r)
	}
}

func TestModelKeyRejected(t *testing.T) {
	// CONSTRUCTED: Anthropic's documented authentication_error body.
	srv := tooltest.NewServer(t, tooltest.Reply{Status: 401, Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)})
	c := newConfig(t, map[string]string{"TOOLPORT_MODEL": "anthropic:claude-x", "ANTHROPIC_API_KEY": "sk-ant-planted-0123456789", "ANTHROPIC_BASE_URL": srv.URL})
	r := only(t, c, Sources{}, "model", Options{})
	if r.Status != Failing || !strings.Contains(r.Detail, "key rejected (HTTP 401)") || !strings.Contains(r.Fix, "ANTHROPIC_API_KEY") {
		t.Errorf("got %+v", r)
	}
}

// TestQuotaChecksAreSkippedUnlessAllowed: a keyed search spends quota, so
// without AllowQuota the check reports skipped and sends nothing.
func TestQuotaChecksAreSkippedUnlessAllowed(t *testing.T) {
	srv := tooltest.NewServer(t, tooltest.Reply{})
	c := newConfig(t, map[string]string{"BRAVE_API_KEY": braveKey, "BRAVE_API_BASE_URL": srv.URL})
	rep := Run(context.Background(), FromConfig(c, Sources{}), Options{Timeout: time.Second, Transport: offline{}})
	var brave Result
	for _, r := range rep.Results {
		if r.Name == "brave" {
			brave = r
		}
	}
	if brave.Status != Skipped || !brave.CostsQuota || !strings.Contains(brave.Fix, "--yes") || len(srv.Requests()) != 0 {
		t.Errorf("brave = %+v, %d requests", brave, len(srv.Requests()))
	}
}

// offline is a transport for a machine with no network: every dial fails
// at once, as with no route or no DNS.
type offline struct{}

func (offline) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("network is unreachable")}
}

// blackhole is a transport whose connections never answer.
type blackhole struct{}

func (blackhole) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestOfflineWithNoKeys(t *testing.T) {
	for _, tt := range []struct {
		name      string
		transport http.RoundTripper
		detail    string
	}{
		{"no network", offline{}, "unreachable: cannot connect"},
		{"silent network", blackhole{}, "no answer in time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newConfig(t, map[string]string{})
			var rep Report
			// In a bubble the clock is fake: the run takes at most one
			// check's timeout exactly (they run in parallel), never their sum.
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				rep = Run(context.Background(), FromConfig(c, Sources{}), Options{Timeout: 300 * time.Millisecond, Transport: tt.transport, AllowQuota: true})
				if el := time.Since(start); el > 300*time.Millisecond {
					t.Errorf("the run took %v, more than one check's 300ms timeout", el)
				}
			})
			got := map[string]Result{}
			for _, r := range rep.Results {
				got[r.Name] = r
			}
			for _, name := range []string{"brave", "google", "searxng", "tidal", "model", "embeddings", "postgres", "weaviate", "redis", "traces"} {
				if got[name].Status != NotConfigured {
					t.Errorf("%s: %+v, want not configured", name, got[name])
				}
			}
			// Optional engines not configured are no fault: nothing to fix.
			for _, name := range []string{"embeddings", "postgres", "weaviate", "redis", "traces"} {
				if r := got[name]; !r.Optional || r.Fix != "" {
					t.Errorf("%s: %+v, want optional with no fix", name, r)
				}
			}
			for _, name := range []string{"brave", "tidal", "model"} {
				if r := got[name]; r.Optional || r.Fix == "" {
					t.Errorf("%s: %+v, want a fix and not optional", name, r)
				}
			}
			if d := got["tidal"].Detail; d != "no client id" {
				t.Errorf("tidal without an id: %q, want \"no client id\"", d)
			}
			for _, name := range []string{"ckan", "lrclib", "reccobeats"} {
				if r := got[name]; r.Status != Failing || !strings.Contains(r.Detail, tt.detail) {
					t.Errorf("%s: %+v, want failing: %s", name, r, tt.detail)
				}
			}
			if got["ckan"].Endpoint != "https://data.gov.il/api/3" || got["lrclib"].Endpoint != "https://lrclib.net" {
				t.Errorf("endpoints: %q %q", got["ckan"].Endpoint, got["lrclib"].Endpoint)
			}
			if rep.OK {
				t.Error("a failing keyless default must fail the report")
			}
		})
	}
}

// TestOneRequestPerHost: a check that tries a second request to a host
// gets an error, and the host sees one request.
func TestOneRequestPerHost(t *testing.T) {
	srv := tooltest.NewServer(t, tooltest.Reply{})
	var mu sync.Mutex
	var errs []error
	ck := Check{Name: "greedy", Configured: true, Run: func(ctx context.Context, hc *http.Client) (string, error) {
		for range 3 {
			resp, err := hc.Get(srv.URL)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			if err == nil {
				resp.Body.Close()
			}
		}
		return "done", nil
	}}
	rep := Run(context.Background(), []Check{ck}, Options{})
	if len(srv.Requests()) != 1 || rep.Results[0].Requests != 1 || errs[0] != nil || !errors.Is(errs[1], errOneRequest) {
		t.Errorf("requests = %d, errs = %v", len(srv.Requests()), errs)
	}
}

func TestPanickingCheckFails(t *testing.T) {
	rep := Run(context.Background(), []Check{{Name: "p", Configured: true, Run: func(context.Context, *http.Client) (string, error) { panic("boom") }}}, Options{})
	if r := rep.Results[0]; r.Status != Failing || !strings.Contains(r.Detail, "boom") || rep.OK {
		t.Errorf("got %+v", r)
	}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(strings.TrimSpace(s), n) }

type countOut struct {
	Count int `json:"count" schema:"minimum=0"`
}

func (o countOut) Summary() string { return fmt.Sprintf("%d things", o.Count) }

// TestAnswerThatBreaksTheOutputSchema: an upstream answers 200 with JSON
// the client decodes, but the tool's output built from it breaks the
// tool's output schema; the check fails as a wrong shape.
func TestAnswerThatBreaksTheOutputSchema(t *testing.T) {
	for _, tt := range []struct {
		body   string
		status Status
		detail string
	}{
		{`{"count":3}`, OK, "counter: 3 things"},
		{`{"count":-1}`, Failing, "answered, but not in the shape the client expects: PARSE_ERROR: the result does not fit the output schema"},
	} {
		srv := tooltest.NewServer(t, tooltest.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tt.body)})
		ck := Check{Name: "counter", Configured: true, Run: func(ctx context.Context, hc *http.Client) (string, error) {
			counter := tool.Must(tool.New(tool.Spec{Name: "counter", Description: "Counts.", Pack: "test"},
				func(ctx context.Context, _ struct{}) (countOut, error) {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
					resp, err := hc.Do(req)
					if err != nil {
						return countOut{}, err
					}
					defer resp.Body.Close()
					var out countOut
					return out, json.NewDecoder(resp.Body).Decode(&out)
				}))
			return callTool(ctx, counter, `{}`)
		}}
		r := Run(context.Background(), []Check{ck}, Options{}).Results[0]
		if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) {
			t.Errorf("%s: got %s %q, want %s %q", tt.body, r.Status, r.Detail, tt.status, tt.detail)
		}
	}
}

// TestSecretsNeverReachTheReport: what an upstream echoes (a Redis error
// line, a rate-limit header, an export endpoint's answer) is scrubbed of
// every credential Toolport was configured with, in each form it takes.
func TestSecretsNeverReachTheReport(t *testing.T) {
	const secret = "leaky-secret-0123456789"
	// A server that quotes the last argument of whatever it is sent.
	quoting := tcpServer(t, func(conn net.Conn) {
		if args, err := readCommand(bufio.NewReader(conn)); err == nil {
			fmt.Fprintf(conn, "-ERR refused %q\r\n", args[len(args)-1])
		}
	})
	echo := tooltest.NewServer(t, tooltest.Reply{Status: 401,
		Header: http.Header{"X-Ratelimit-Policy": {"key=" + secret}, "Content-Type": {"text/plain"}},
		Body:   []byte("bad credentials " + secret)})

	tests := []struct {
		name, check string
		env         map[string]string
	}{
		{"redis password", "redis", map[string]string{"TOOLPORT_REDIS_URL": "redis://:" + secret + "@" + quoting}},
		{"redis password as user", "redis", map[string]string{"TOOLPORT_REDIS_URL": "redis://" + secret + "@" + quoting}},
		{"OTLP header", "traces", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": echo.URL, "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20" + secret}},
		{"rate-limit header", "brave", map[string]string{"BRAVE_API_KEY": secret, "BRAVE_API_BASE_URL": echo.URL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConfig(t, tt.env)
			r := only(t, c, Sources{}, tt.check, Options{})
			if r.Status != Failing {
				t.Fatalf("status %s (%q), want failing", r.Status, r.Detail)
			}
			out, _ := json.Marshal(r)
			if strings.Contains(string(out), secret) {
				t.Errorf("the secret reached the report: %s", out)
			}
		})
	}
}

// TestGoogleEndIsReported: before the end the check warns with the date;
// after it, a configured key fails with the alternative and sends nothing,
// and an unconfigured one asks for nothing.
func TestGoogleEndIsReported(t *testing.T) {
	up := tooltest.NewServer(t, tooltest.Reply{Header: http.Header{"Content-Type": {"application/json"}},
		Body: tooltest.Fixture(t, "google", "cse_what_is_semantic_kernel.json")})
	keys := map[string]string{"GOOGLE_SEARCH_API_KEY": "google-key-0123456789", "GOOGLE_SEARCH_ENGINE_ID": "engine", "GOOGLE_SEARCH_BASE_URL": up.URL}
	after := Sources{Now: func() time.Time { return time.Date(2027, time.January, 2, 0, 0, 0, 0, time.UTC) }}

	r := only(t, newConfig(t, keys), Sources{}, "google", Options{})
	if r.Status != OK || !strings.Contains(r.Warning, "2027-01-01 (in 33 days)") || !strings.Contains(r.Warning, "web_search_brave") {
		t.Errorf("before the end: %s %q, warning %q", r.Status, r.Detail, r.Warning)
	}
	r = only(t, newConfig(t, keys), after, "google", Options{})
	if r.Status != Failing || !strings.Contains(r.Detail+r.Fix, "web_search_brave") || !strings.Contains(r.Fix, "TOOLPORT_SEARXNG_URL") || !strings.Contains(r.Warning, "ended on 2027-01-01") {
		t.Errorf("after the end: %s %q fix %q warning %q", r.Status, r.Detail, r.Fix, r.Warning)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("Google got %d requests, want only the one before its end", n)
	}
	r = only(t, newConfig(t, nil), after, "google", Options{})
	if r.Status != NotConfigured || r.CostsQuota || !strings.Contains(r.Detail, "ended") {
		t.Errorf("unconfigured after the end: %+v", r)
	}
}

// TestStoreAndIndex: the doctor reports the store and the track index (how
// many tracks, and whether they are the demo set or the user's), an empty
// index saying how to fill it; a store that cannot be read fails both
// with a fix.
func TestStoreAndIndex(t *testing.T) {
	c := newConfig(t, map[string]string{})
	for _, tt := range []struct {
		name        string
		facts       IndexFacts
		err         error
		store, idx  string
		wantFailing bool
	}{
		{"empty", IndexFacts{Engine: "sqlite"}, nil, "sqlite answers", "empty: semanticSearch finds nothing until tracks are loaded; load the 5,521 demo tracks with `toolport index add --demo`", false},
		{"demo", IndexFacts{Engine: "sqlite", Tracks: 5521, Demo: 5521, Embedder: "hash-v1"}, nil, "sqlite answers", "5521 tracks: the MusicCaps demo tracks; embedded by hash-v1", false},
		{"own", IndexFacts{Engine: "postgres", Tracks: 12, Embedder: "openai:m"}, nil, "postgres answers", "12 tracks: your own tracks; embedded by openai:m", false},
		{"mixed", IndexFacts{Engine: "sqlite", Tracks: 5531, Demo: 5521}, nil, "sqlite answers", "5531 tracks: 5521 MusicCaps demo tracks and 10 of your own", false},
		{"unreadable", IndexFacts{}, errors.New("unable to open database file"), "", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := Sources{StoreName: "/home/u/.local/share/toolport/toolport.db",
				Index: func(context.Context) (IndexFacts, error) { return tt.facts, tt.err }}
			st, idx := only(t, c, src, "store", Options{}), only(t, c, src, "index", Options{})
			if tt.wantFailing {
				if st.Status != Failing || st.Fix == "" || idx.Status != Failing {
					t.Errorf("store %+v, index %+v; want both failing, the store with a fix", st, idx)
				}
				return
			}
			if st.Status != OK || st.Detail != tt.store || st.Endpoint != src.StoreName || st.Optional {
				t.Errorf("store = %+v, want ok %q at %s", st, tt.store, src.StoreName)
			}
			if idx.Status != OK || !strings.HasPrefix(idx.Detail, tt.idx) {
				t.Errorf("index = %+v, want ok %q", idx, tt.idx)
			}
		})
	}
	// Without a store location (no HOME), the checks say so rather than pass.
	if r := only(t, c, Sources{}, "index", Options{}); r.Status != NotConfigured || r.Detail != "no store location" || r.Fix == "" {
		t.Errorf("index without a store = %+v", r)
	}
	// A store not made yet is no fault: the first command makes it.
	src := Sources{Index: func(context.Context) (IndexFacts, error) { return IndexFacts{Engine: "sqlite", NotCreated: true}, nil }}
	if r := only(t, c, src, "store", Options{}); r.Status != OK || !strings.Contains(r.Detail, "not created yet") {
		t.Errorf("store not created = %+v", r)
	}
}
