package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/embedding"
	"github.com/toolport/toolport/internal/httpclient"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/lrclib"
	"github.com/toolport/toolport/reccobeats"
	"github.com/toolport/toolport/tidal"
	"github.com/toolport/toolport/tool"
)

// Sources is what the checks need beyond the configuration.
type Sources struct {
	// DatabaseURL is the store's DSN as the commands resolve it.
	DatabaseURL string
	// Now is the clock for dated facts (Google's API's end); nil means
	// time.Now.
	Now func() time.Time
	// ScratchLibrary opens a private, empty music store for the TIDAL
	// check (tidalSearch marks the results already in the library, and the
	// user's must not be read) and returns how to close it. The doctor
	// opens no store itself; nil fails that check saying so.
	ScratchLibrary func(ctx context.Context) (music.Store, func() error, error)
	// StoreName names the store as shown (a path, or a URL without its
	// password).
	StoreName string
	// Index reads the store's track index for the store and index checks;
	// nil fails them saying so.
	Index func(ctx context.Context) (IndexFacts, error)
}

// IndexFacts is what the store and index checks report.
type IndexFacts struct {
	Engine   string // "sqlite" or "postgres"
	Tracks   int    // records in the track index
	Demo     int    // of which the built-in MusicCaps demo tracks
	Embedder string // the most common embedding's embedder, "" when none
	// NotCreated: the SQLite file does not exist yet (every command makes
	// it on first use); the doctor does not create it.
	NotCreated bool
}

// Environment variables of the upstreams whose clients other parts of
// Toolport own; the doctor reads them the same way.
const (
	VectorURLEnv = "TOOLPORT_VECTOR_URL" // Weaviate
	RedisURLEnv  = "TOOLPORT_REDIS_URL"
)

// The probes' inputs: cheap calls with known answers.
const (
	probeQuery     = "toolport"
	lrclibProbeID  = 3396226                  // "I Want to Live", a record LRCLIB serves (lrclib/testdata)
	reccoProbeID   = "00aqkszH1FdUiJJWvX6iEl" // "Wicked Games" by its Spotify id (reccobeats/testdata)
	modelProbeText = "Reply with the single word OK."
)

// FromConfig returns one check per upstream the configuration can name, in
// a fixed order. It reads keys with c.Secret, so they are in c.Secrets()
// afterwards: build the checks before listing the secrets to scrub. The
// checks may be run many times.
func FromConfig(c *config.Config, src Sources) []Check {
	return []Check{
		braveCheck(c), googleCheck(c, src.Now), searxngCheck(c), ckanCheck(c), tidalCheck(c, src.ScratchLibrary), lrclibCheck(c), reccoCheck(c),
		modelCheck(c), embeddingsCheck(c), storeCheck(src), indexCheck(src), postgresCheck(src.DatabaseURL), weaviateCheck(c), redisCheck(c), tracesCheck(c),
	}
}

// storeCheck reports the store every command uses: which engine, where.
func storeCheck(src Sources) Check {
	return Check{Name: "store", Title: "Store (conversations, library, index)", Endpoint: src.StoreName, Configured: src.Index != nil,
		Missing: "no store location", Fix: "set TOOLPORT_DATABASE_URL (or database.url), or HOME",
		Run: func(ctx context.Context, _ *http.Client) (string, error) {
			f, err := readIndex(ctx, src)
			if err != nil {
				return "", err
			}
			if f.NotCreated {
				return f.Engine + ": not created yet (the first command that needs it makes it)", nil
			}
			return f.Engine + " answers", nil
		}}
}

// indexCheck reports the music track index semanticSearch reads: how many
// tracks, and where they came from. An empty index is no fault, but the
// detail says how to fill it.
func indexCheck(src Sources) Check {
	return Check{Name: "index", Title: "Music track index", Endpoint: src.StoreName, Configured: src.Index != nil,
		Missing: "no store location", Fix: "set TOOLPORT_DATABASE_URL (or database.url), or HOME",
		Run: func(ctx context.Context, _ *http.Client) (string, error) {
			f, err := readIndex(ctx, src)
			if err != nil {
				return "", err
			}
			return indexDetail(f), nil
		}}
}

func indexDetail(f IndexFacts) string {
	if f.Tracks == 0 {
		return "empty: semanticSearch finds nothing until tracks are loaded; load the 5,521 demo tracks with " +
			"`toolport index add --demo` (or from the page), or your own with `toolport index add FILE.jsonl`"
	}
	var source string
	switch {
	case f.Demo == f.Tracks:
		source = "the MusicCaps demo tracks"
	case f.Demo == 0:
		source = "your own tracks"
	default:
		source = fmt.Sprintf("%d MusicCaps demo tracks and %d of your own", f.Demo, f.Tracks-f.Demo)
	}
	d := fmt.Sprintf("%d tracks: %s", f.Tracks, source)
	if f.Embedder != "" {
		d += "; embedded by " + f.Embedder
	}
	return d
}

func readIndex(ctx context.Context, src Sources) (IndexFacts, error) {
	if src.Index == nil {
		return IndexFacts{}, errors.New("no store to read")
	}
	return src.Index(ctx)
}

// callTool runs one tool once through a registry of its own, which
// validates the arguments and the output against the tool's schemas as
// every surface does. Retries are cut short: the probe refuses a second
// request anyway, and the first answer is the one classified.
func callTool(ctx context.Context, t *tool.Tool, args string) (string, error) {
	reg := tool.NewRegistry(tool.WithRetryDelay(time.Millisecond), tool.WithMaxRetryAfter(time.Nanosecond))
	if err := reg.Register(t); err != nil {
		return "", err
	}
	res := reg.Call(ctx, t.Name(), json.RawMessage(args))
	if res.Err != nil {
		return "", res.Err
	}
	return t.Name() + ": " + res.Summary, nil
}

func findTool(tools []*tool.Tool, name string) (*tool.Tool, error) {
	for _, t := range tools {
		if t.Name() == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no tool named %s is declared", name)
}

func braveCheck(c *config.Config) Check {
	cfg := websearch.ConfigFromEnv(c)
	return Check{
		Name: "brave", Title: "Brave Search", Endpoint: showURL(cfg.BraveBaseURL),
		Configured: cfg.BraveAPIKey != "", Missing: "no API key",
		Fix:        "set BRAVE_API_KEY (or web_search.brave.api_key in the credentials file) to a key from https://api-dashboard.search.brave.com",
		CostsQuota: true, Cost: "one web search",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient, cfg.MaxExtraPages, cfg.BraveTools = hc, -1, []string{"web"}
			t, err := findTool(websearch.Tools(cfg), "web_search_brave")
			if err != nil {
				return "", err
			}
			return callTool(ctx, t, `{"query":"`+probeQuery+`","count":1}`)
		},
	}
}

func googleCheck(c *config.Config, now func() time.Time) Check {
	cfg := websearch.ConfigFromEnv(c)
	cfg.Now = now
	missing := "no API key and engine id"
	switch {
	case cfg.GoogleAPIKey != "" && cfg.GoogleEngineID == "":
		missing = "an API key but no engine id"
	case cfg.GoogleAPIKey == "" && cfg.GoogleEngineID != "":
		missing = "an engine id but no API key"
	}
	ck := Check{
		Name: "google", Title: "Google Programmable Search", Endpoint: showURL(cfg.GoogleBaseURL),
		Configured: cfg.GoogleAPIKey != "" && cfg.GoogleEngineID != "", Missing: missing,
		Fix:        "set GOOGLE_SEARCH_API_KEY and GOOGLE_SEARCH_ENGINE_ID (or web_search.google.* in the credentials file)",
		CostsQuota: true, Cost: "one search query of the daily 100",
		Warning: websearch.GoogleEndNotice(cfg),
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient = hc
			// The tool itself, declared or not: after the end its call
			// says so without a request.
			return callTool(ctx, websearch.Google(cfg), `{"query":"`+probeQuery+`","num":1}`)
		},
	}
	if cfg.GoogleEnded() && cfg.Google != websearch.GoogleOn {
		ck.CostsQuota, ck.Cost = false, ""
		ck.Missing, ck.Fix = "nothing to set up: the API has ended", "use web_search_brave (set BRAVE_API_KEY) or web_search_searxng (set TOOLPORT_SEARXNG_URL)"
	}
	return ck
}

// searxngCheck searches the user's own SearXNG instance once: no vendor
// quota, but it does ask the instance's engines.
func searxngCheck(c *config.Config) Check {
	cfg := websearch.ConfigFromEnv(c)
	return Check{
		Name: "searxng", Title: "SearXNG", Endpoint: showURL(cfg.SearxngURL),
		Configured: cfg.SearxngURL != "", Missing: "no instance URL",
		Fix: "set TOOLPORT_SEARXNG_URL to the base URL of a SearXNG instance whose settings.yml lists json in search.formats",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient, cfg.MaxExtraPages = hc, -1
			return callTool(ctx, websearch.Searxng(cfg), `{"query":"`+probeQuery+`","count":1}`)
		},
	}
}

func ckanCheck(c *config.Config) Check {
	cfg := opendata.ConfigFromEnv(c)
	return Check{
		Name: "ckan", Title: "CKAN portal", Endpoint: showURL(cfg.BaseURL), Configured: true,
		Fix: "set CKAN_BASE_URL to a reachable CKAN portal (default " + ckan.DefaultBaseURL + ")",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient, cfg.PortalHTTPClient = hc, hc
			t, err := findTool(opendata.Tools(cfg), "searchDatasets")
			if err != nil {
				return "", err
			}
			return callTool(ctx, t, `{"rows":1}`)
		},
	}
}

// tidalMissing says what TIDAL lacks: a public app (sign-in) needs only the
// client id; this check's catalogue search also needs the secret.
func tidalMissing(id string) string {
	if id == "" {
		return "no client id"
	}
	return "no client secret (catalogue search uses client credentials; sign-in needs only the id)"
}

func tidalCheck(c *config.Config, scratch func(context.Context) (music.Store, func() error, error)) Check {
	cfg := music.TidalConfigFromEnv(c)
	return Check{
		Name: "tidal", Title: "TIDAL catalogue", Endpoint: showURL(cfg.BaseURL),
		Configured: cfg.ClientID != "" && cfg.ClientSecret != "", Missing: tidalMissing(cfg.ClientID),
		Fix:        "set TIDAL_CLIENT_ID and TIDAL_CLIENT_SECRET (or tidal.* in the credentials file) from https://developer.tidal.com",
		CostsQuota: true, Cost: "a token request and one catalogue search",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient = hc
			tc, err := tidal.NewClient(cfg)
			if err != nil {
				return "", err
			}
			// tidalSearch marks results already in the library: a private
			// empty store stands in for the user's.
			if scratch == nil {
				return "", errors.New("no scratch library to search with")
			}
			db, closeDB, err := scratch(ctx)
			if err != nil {
				return "", fmt.Errorf("opening a scratch store: %w", err)
			}
			defer closeDB()
			t, err := findTool(music.Tools(music.New(db, nil, tc)), "tidalSearch")
			if err != nil {
				return "", err
			}
			return callTool(ctx, t, `{"query":"Radiohead","searchType":"tracks","limit":1}`)
		},
	}
}

func lrclibCheck(c *config.Config) Check {
	base := c.Default("LRCLIB_BASE_URL", lrclib.DefaultBaseURL)
	return Check{
		Name: "lrclib", Title: "LRCLIB lyrics", Endpoint: showURL(base), Configured: true,
		Fix: "set LRCLIB_BASE_URL to a reachable LRCLIB (default " + lrclib.DefaultBaseURL + ")",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			lc, err := lrclib.NewClient(hc, lrclib.WithBaseURL(base))
			if err != nil {
				return "", err
			}
			r, err := lc.GetByID(ctx, lrclibProbeID)
			if errors.Is(err, lrclib.ErrNotFound) {
				return fmt.Sprintf("answered (record %d is gone; the API works)", lrclibProbeID), nil
			}
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("record %d: %q by %s", r.ID, r.TrackName, r.ArtistName), nil
		},
	}
}

func reccoCheck(c *config.Config) Check {
	base := c.Default("RECCOBEATS_BASE_URL", reccobeats.DefaultBaseURL)
	return Check{
		Name: "reccobeats", Title: "ReccoBeats audio features", Endpoint: showURL(base), Configured: true,
		Fix: "set RECCOBEATS_BASE_URL to a reachable ReccoBeats API (default " + reccobeats.DefaultBaseURL + ")",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			rc, err := reccobeats.NewClient(hc, reccobeats.WithBaseURL(base))
			if err != nil {
				return "", err
			}
			tracks, err := rc.Tracks(ctx, []string{reccoProbeID})
			if err != nil {
				return "", err
			}
			if len(tracks) == 0 {
				return "answered (the probe track is gone; the API works)", nil
			}
			return fmt.Sprintf("track %q", tracks[0].TrackTitle), nil
		},
	}
}

func modelCheck(c *config.Config) Check {
	spec, specErr := llm.ParseModel(c.Env("TOOLPORT_MODEL"))
	ck := Check{
		Name: "model", Title: "Chat model", Configured: c.Env("TOOLPORT_MODEL") != "",
		Missing: "TOOLPORT_MODEL is not set",
		Fix:     "set TOOLPORT_MODEL (anthropic:… or openai:…) and the provider's key (ANTHROPIC_API_KEY or OPENAI_API_KEY)",
	}
	if specErr != nil {
		if ck.Configured {
			ck.Run = func(context.Context, *http.Client) (string, error) { return "", specErr }
		}
		return ck
	}
	base := spec.BaseURL
	if base == "" && spec.Provider == llm.ProviderAnthropic {
		base = c.Default("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
	} else if base == "" {
		base = c.Default("OPENAI_BASE_URL", "https://api.openai.com/v1")
	}
	ck.Endpoint = spec.Provider + ":" + spec.Model + " at " + showURL(base)
	ck.CostsQuota, ck.Cost = !isLocal(base), "one model request of at most 1 output token"
	if spec.Provider == llm.ProviderAnthropic {
		ck.Fix = "set ANTHROPIC_API_KEY (or llm.anthropic.api_key) to a valid key, and check the model name"
	} else {
		ck.Fix = "set OPENAI_API_KEY (or llm.openai.api_key) to a valid key, and check the model name"
	}
	ck.Run = func(ctx context.Context, hc *http.Client) (string, error) {
		p, err := llm.FromConfigWithClient(c, hc)
		if err != nil {
			return "", err
		}
		st, err := p.Stream(ctx, llm.Request{Messages: []llm.Message{llm.UserText(modelProbeText)}, MaxTokens: 1})
		if err != nil {
			return "", err
		}
		defer st.Close()
		events := 0
		for st.Next() {
			events++
		}
		if err := st.Err(); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s answered (%d stream events)", p.Model(), events), nil
	}
	return ck
}

func embeddingsCheck(c *config.Config) Check {
	cfg := embedding.ConfigFromEnv(c)
	return Check{
		Name: "embeddings", Title: "Embeddings server", Endpoint: showURL(cfg.BaseURL),
		Optional: true, Configured: cfg.BaseURL != "", Missing: "no embeddings server: the offline default embedder is used",
		Fix:        "set TOOLPORT_EMBEDDINGS_URL and TOOLPORT_EMBEDDINGS_MODEL (and TOOLPORT_EMBEDDINGS_API_KEY if the server needs one)",
		CostsQuota: !isLocal(cfg.BaseURL), Cost: "one embedding of two words",
		Run: func(ctx context.Context, hc *http.Client) (string, error) {
			cfg := cfg
			cfg.HTTPClient = hc
			e, err := embedding.NewOpenAI(cfg)
			if err != nil {
				return "", err
			}
			vecs, err := e.Embed(ctx, []string{"toolport doctor"})
			if err != nil {
				return "", err
			}
			if len(vecs) != 1 || len(vecs[0]) == 0 {
				return "", errors.New("the server returned no vector")
			}
			return fmt.Sprintf("%s: a %d-dimension vector", e.Name(), len(vecs[0])), nil
		},
	}
}

func postgresCheck(dsn string) Check {
	isPG := strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
	ck := Check{
		Optional: true, Name: "postgres", Title: "PostgreSQL", Configured: isPG,
		Missing: "the store is SQLite (a file on this machine)",
		Fix:     "set TOOLPORT_DATABASE_URL=postgres://user@host:5432/db to use PostgreSQL",
	}
	if !isPG {
		return ck
	}
	ck.Endpoint = showURL(dsn)
	ck.Fix = "check TOOLPORT_DATABASE_URL: the server, database, user and password"
	ck.Run = func(ctx context.Context, _ *http.Client) (string, error) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return "", fmt.Errorf("connecting: %w", err)
		}
		defer conn.Close(context.Background())
		var version string
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
			return "", fmt.Errorf("querying: %w", err)
		}
		return "PostgreSQL " + version, nil
	}
	return ck
}

func weaviateCheck(c *config.Config) Check {
	base := strings.TrimSpace(c.Env(VectorURLEnv))
	ck := Check{
		Optional: true, Name: "weaviate", Title: "Weaviate vector store", Configured: base != "", Endpoint: showURL(base),
		Missing: "no vector store: the in-process index is used",
		Fix:     "set " + VectorURLEnv + " to a Weaviate server (http://127.0.0.1:8080)",
	}
	ck.Run = func(ctx context.Context, hc *http.Client) (string, error) {
		u, err := httpclient.ParseBaseURL(base)
		if err != nil {
			return "", fmt.Errorf("%s: %w", VectorURLEnv, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, httpclient.WithPath(u, "/v1/.well-known/ready").String(), nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("not ready (HTTP %d)", resp.StatusCode)
		}
		return "ready", nil
	}
	return ck
}

func redisCheck(c *config.Config) Check {
	// RedisURL registers the URL and its password (either form) as secrets.
	raw := c.RedisURL()
	return Check{
		Optional: true, Name: "redis", Title: "Redis", Configured: raw != "", Endpoint: showURL(raw),
		Missing: "no Redis: caches and rate limits stay in this process",
		Fix:     "check " + RedisURLEnv + " (redis://[:password@]host:6379/0)",
		Run: func(ctx context.Context, _ *http.Client) (string, error) {
			return pingRedis(ctx, raw)
		},
	}
}

func tracesCheck(c *config.Config) Check {
	cfg := telemetry.FromConfig(c)
	ck := Check{
		Optional: true, Name: "traces", Title: "Trace export (OTLP/Langfuse)", Configured: cfg.Endpoint != "", Endpoint: showURL(cfg.Endpoint),
		Missing: "traces are not exported",
		Fix:     "set OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_EXPORTER_OTLP_HEADERS), or LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY",
	}
	if cfg.Target == "langfuse" {
		ck.Title, ck.Fix = "Langfuse traces", "check LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST"
	}
	ck.Run = func(ctx context.Context, hc *http.Client) (string, error) {
		// An empty export request: a valid OTLP message with no spans, so
		// nothing is stored, but the endpoint and its credentials are tried.
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Endpoint+"/v1/traces", strings.NewReader(""))
		if err != nil {
			return "", fmt.Errorf("the endpoint is not a valid URL")
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		for k, v := range cfg.Headers {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := httpclient.ReadBody(resp.Body, 4<<10)
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("export refused (HTTP %d): %s", resp.StatusCode, httpclient.OneLine(string(body), 200))
		}
		return fmt.Sprintf("accepted an empty export (HTTP %d)", resp.StatusCode), nil
	}
	return ck
}

// showURL is raw without credentials, query or fragment, for display.
func showURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/")
}

// isLocal reports whether a base URL names this machine (a local model or
// embeddings server), whose calls cost no one's quota.
func isLocal(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}
