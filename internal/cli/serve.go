package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/internal/version"
	"github.com/toolport/toolport/internal/webui"
	"github.com/toolport/toolport/tool"
)

const serveUsage = "toolport serve [--addr 127.0.0.1:8080] [--max-steps 5] [--packs web,ckan,music] [--tools a,b]"

const serveAbout = "Runs the chat server: the Discover Chat page at /, its REST and streaming API under /api,\n" +
	"the tools over MCP (streamable HTTP) at /mcp, /healthz and /metrics.\n\n" +
	"Configuration (environment or credentials file):\n" +
	"  TOOLPORT_MODEL         provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,\n" +
	"                         openai:qwen2.5@http://127.0.0.1:11434/v1 (without one the server still\n" +
	"                         runs, and chats answer with how to configure a model)\n" +
	"  ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL\n" +
	"  TOOLPORT_TURN_TIMEOUT  bound on a chat turn (default 10m); TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT\n" +
	"                         (30s) and TOOLPORT_MODEL_IDLE_TIMEOUT (2m) bound the model's silences\n" +
	"  TOOLPORT_DATABASE_URL  postgres://… or a SQLite file (or database.url; default: the user's data dir)\n" +
	"  TOOLPORT_TURN_LEASE, TOOLPORT_TURN_EVENTS_RETENTION, TOOLPORT_REPLICA_ID: turns across replicas (15s, 10m, random)\n" +
	"  TOOLPORT_API_TOKEN     bearer token required on /api, /mcp and /metrics (required off loopback)\n" +
	"  TOOLPORT_ALLOWED_HOSTS, TOOLPORT_ALLOWED_ORIGINS, TOOLPORT_METRICS_ADDR: defaults of the flags\n" +
	"  OTEL_EXPORTER_OTLP_ENDPOINT or LANGFUSE_PUBLIC_KEY/LANGFUSE_SECRET_KEY/LANGFUSE_HOST for traces"

// runServe runs the chat server: settings first, then the model (its keys
// must be known to the registry that scrubs secrets), the port (a taken one
// is the commonest failure and should not wait for the index), the one
// store, the shared engines, the tools, and the server over them.
func runServe(ctx context.Context, env *Env, args []string) error {
	st, err := loadServeSettings(env, args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	model, err := serveModel(env)
	if err != nil {
		return usageError(err)
	}
	ln, err := listen(st.addr, "")
	if err != nil {
		return err
	}
	defer ln.Close() // srv.Serve closes it too; this covers the early returns
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		return err
	}
	tp, shutdownTracing, err := telemetry.Setup(ctx, telemetry.FromConfig(env.Config))
	if err != nil {
		return err
	}
	defer shutdownTracing(context.Background())
	traced := agent.TracerProvider(tp)
	engines, err := openSharedEngines(env.Config, logger)
	if err != nil {
		return usageError(err)
	}
	defer engines.Close()
	b, err := serveTools(ctx, env, st, db, shared, engines, traced, logger)
	if err != nil {
		return err
	}
	metricsLn, err := metricsListener(st)
	if err != nil {
		return err
	}
	defer closeIfOpen(metricsLn)
	cfg := serveConfig(env, st, db, b, engines, metricsLn, logger)
	// The OAuth tokens of attached servers and the page's Settings write
	// one file, one change at a time.
	tokens := &config.MCPTokens{Path: env.Config.WritePath()}
	if cfg.OAuth, err = serveOAuth(ln.Addr(), tokens); err != nil {
		return err
	}
	srv, settings, err := newServer(env, st, cfg, model, engines, tokens, traced, logger)
	if err != nil {
		return err
	}
	defer settings.Close()
	reportServing(env, st, b.reg, model, db.Engine(), ln.Addr(), metricsLn)
	return srv.Serve(ctx, ln)
}

// metricsListener listens on --metrics-addr, or returns nil when it is not
// set.
func metricsListener(st serveSettings) (net.Listener, error) {
	if st.metricsAddr == "" {
		return nil, nil
	}
	return listen(st.metricsAddr, "--metrics-addr: ")
}

// closeIfOpen closes ln unless it is nil.
func closeIfOpen(ln net.Listener) {
	if ln != nil {
		ln.Close()
	}
}

// serveConfig is the chat server's configuration from serve's settings and
// what runServe opened.
func serveConfig(env *Env, st serveSettings, db *sqlstore.DB, b serveBackends, engines *sharedEngines, metricsLn net.Listener, logger *slog.Logger) server.Config {
	return server.Config{
		Store: db, Playlists: db, Registry: b.reg, IndexBuild: b.indexBuild, Token: st.token,
		DemoIndex: music.DemoIndex{Service: b.music},
		Version:   version.Get().Short(), Web: webui.Handler(), Logger: logger, GOGC: st.gogc, AllowedHosts: st.hosts, AllowedOrigins: st.origins,
		MetricsListener: metricsLn, ReadHeaderTimeout: st.headerTimeout, BodyReadTimeout: st.bodyTimeout,
		TurnLease: st.turns.lease, TurnEventsRetention: st.turns.retention, ReplicaID: st.turns.replica,
		StartPrecedence: st.turns.startPrecedence, Checks: serveChecks(env.Config.Env, engines, b.music),
	}
}

// serveSettings is what `toolport serve` runs with: its flags, the
// environment and credentials file behind them, and the packs' settings,
// resolved and checked in one place, [loadServeSettings].
type serveSettings struct {
	addr, metricsAddr          string
	selection                  toolSelection
	offerAll                   bool
	maxSteps                   int
	hosts, origins             []string
	headerTimeout, bodyTimeout time.Duration
	turnTimeout                time.Duration
	turns                      serveTurns
	token                      string
	gogc                       string // GOGC as the process started, for /metrics
	packs                      packSettings
	mcpServers                 []mcphost.Server // other MCP servers whose tools join the registry
	approval                   map[string]bool  // per tool: ask before a call (true) or never (false)
}

// loadServeSettings parses serve's flags over the configuration; every
// error is a usage error. It warns when the server listens on every
// interface but answers only loopback names.
func loadServeSettings(env *Env, args []string) (serveSettings, error) {
	var st serveSettings
	fs := newFlags(env, "serve", serveUsage, serveAbout)
	addr := fs.String("addr", server.DefaultAddr, "address to listen on (host:port)")
	st.selection = selectionFlags(fs, "serve")
	offerAll := fs.Bool("offer-unconfigured", false,
		"offer the model every selected tool, even those whose upstream lacks credentials (they can only fail)")
	maxSteps := fs.Int("max-steps", agent.DefaultMaxSteps, "tool rounds per chat turn before the model must answer")
	allowedHosts := fs.String("allowed-hosts", env.Config.Env("TOOLPORT_ALLOWED_HOSTS"),
		"comma-separated Host names answered besides loopback and --addr's host (others get 403)")
	allowedOrigins := fs.String("allowed-origins", env.Config.Env("TOOLPORT_ALLOWED_ORIGINS"),
		"comma-separated origins (https://host[:port]) trusted to send cross-origin POST/DELETE requests")
	metricsAddr := fs.String("metrics-addr", env.Config.Env("TOOLPORT_METRICS_ADDR"),
		"serve /metrics on this address instead, without the token (default: on --addr, with the token)")
	headerTimeout := fs.Duration("header-timeout", server.DefaultReadHeaderTimeout, "time allowed to receive a request's headers")
	bodyTimeout := fs.Duration("body-timeout", server.DefaultBodyReadTimeout, "time allowed to receive a request's body (chat streams are not bounded by it)")
	if pos, err := parseArgs(fs, args); err != nil {
		return st, err
	} else if len(pos) > 0 {
		return st, usageExit(fs)
	}
	st.addr, st.metricsAddr, st.offerAll, st.maxSteps = *addr, *metricsAddr, *offerAll, *maxSteps
	st.headerTimeout, st.bodyTimeout, st.origins = *headerTimeout, *bodyTimeout, splitList(*allowedOrigins)
	if st.maxSteps < 1 {
		return st, usageError(errors.New("--max-steps must be at least 1"))
	}
	var err error
	if st.turnTimeout, err = llm.ParseTimeout("TOOLPORT_TURN_TIMEOUT", env.Config.Env("TOOLPORT_TURN_TIMEOUT")); err != nil {
		return st, usageError(err)
	}
	if st.turns, err = turnSettings(env.Config.Env); err != nil {
		return st, usageError(err)
	}
	st.token = env.Config.Secret("TOOLPORT_API_TOKEN", "server.api_token")
	st.gogc = env.Config.Env("GOGC")
	if err := server.CheckAddr(st.addr, st.token); err != nil {
		return st, usageError(err)
	}
	if st.metricsAddr != "" {
		// Metrics go out without the token there: the same rule as --addr.
		if err := server.CheckAddr(st.metricsAddr, st.token); err != nil {
			return st, usageError(fmt.Errorf("--metrics-addr: %w", err))
		}
	}
	if st.headerTimeout <= 0 || st.bodyTimeout <= 0 {
		return st, usageError(errors.New("--header-timeout and --body-timeout must be positive"))
	}
	if st.hosts, err = serveHosts(st.addr, st.metricsAddr, *allowedHosts); err != nil {
		return st, usageError(err)
	}
	if st.packs, err = loadPackSettings(env); err != nil {
		return st, err // a failure, not a usage error, as it always was
	}
	// Read before the registry is built: their tokens and env values are
	// secrets it must scrub.
	if st.mcpServers, st.approval, err = loadMCPHostSettings(env); err != nil {
		return st, err
	}
	if h, _, _ := net.SplitHostPort(st.addr); *allowedHosts == "" && (h == "" || net.ParseIP(h).IsUnspecified()) {
		fmt.Fprintln(env.Stderr, "toolport serve: warning: listening on every interface, but only loopback Host names are answered; "+
			"list the names clients use in --allowed-hosts")
	}
	return st, nil
}

// loadMCPHostSettings reads the MCP servers to attach and the approval
// policy from the credentials file.
func loadMCPHostSettings(env *Env) ([]mcphost.Server, map[string]bool, error) {
	declared, err := env.Config.MCPServers()
	if err != nil {
		return nil, nil, err
	}
	servers := make([]mcphost.Server, len(declared))
	for i, d := range declared {
		servers[i] = mcphost.Server{Name: d.Name, Command: d.Command, Args: d.Args, Env: d.Env, URL: d.URL, Token: d.Token, Timeout: d.Timeout}
	}
	approval, err := env.Config.ApprovalPolicy()
	if err != nil {
		return nil, nil, err
	}
	return servers, approval, nil
}

// serveModelChoice is the chat model `toolport serve` starts with, or why
// there is none (noModel: chats then say how to configure one).
type serveModelChoice struct {
	provider      llm.Provider
	noModel       error
	name          string
	contextWindow int
	models        []agent.Model
}

// serveModel resolves TOOLPORT_MODEL and TOOLPORT_MODELS. A model that is
// not configured is a warning, not an error: the server still runs.
func serveModel(env *Env) (serveModelChoice, error) {
	var c serveModelChoice
	var err error
	if c.models, err = serveModels(env); err != nil {
		return c, err
	}
	provider, err := llm.FromConfigWithClient(env.Config, recordingClient(env, "model", nil))
	var le *llm.Error
	switch {
	case err == nil:
		c.provider = provider
		if spec, perr := llm.ParseModel(env.Config.Env("TOOLPORT_MODEL")); perr == nil {
			c.name = spec.Provider + ":" + spec.Model // never the base URL, which may hold credentials
			c.contextWindow = llm.ContextWindow(spec)
		}
	case env.Config.Env("TOOLPORT_MODEL") == "" && len(c.models) > 0:
		// Without TOOLPORT_MODEL, the first of TOOLPORT_MODELS is the default.
		c.provider, c.name, c.contextWindow = c.models[0].Provider, c.models[0].Name, c.models[0].ContextWindow
	case errors.As(err, &le) && le.Code == llm.CodeNotConfigured:
		c.noModel = err
		fmt.Fprintf(env.Stderr, "toolport serve: warning: %s; chats will say how to configure a model\n", le.Message)
	default:
		return c, err
	}
	return c, nil
}

// listen listens on addr, saying plainly when the port is taken; prefix
// names the flag in errors.
func listen(addr, prefix string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) && prefix == "" {
		return nil, fmt.Errorf("%s is already in use (another toolport serve?); stop it or choose another address with --addr", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	return ln, nil
}

// serveBackends are what the server serves besides the store.
type serveBackends struct {
	reg        *tool.Registry // the selected tools
	music      *music.Service
	indexBuild server.IndexBuilder
}

// serveTools declares the packs' tools over the shared store and engines,
// loads the track index, and returns the registry of the selected tools
// with the index builder.
func serveTools(ctx context.Context, env *Env, st serveSettings, db *sqlstore.DB, shared *sharedStore, engines *sharedEngines,
	traced trace.TracerProvider, logger *slog.Logger) (serveBackends, error) {
	var b serveBackends
	if err := engines.Ping(ctx); err != nil {
		logger.Warn("shared cache and rate limits unavailable: calls go to the upstreams uncached until it answers", "error", err)
	}
	tools, musicSvc := declareTools(st.packs, shared, engines)
	b.music = musicSvc
	// Load the index now, writing back the embeddings it has to make, so
	// that searches find it ready and never write. A failure (an embeddings
	// endpoint down) leaves chat working; semanticSearch reports it.
	if stats, err := musicSvc.Load(ctx); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: warning: the track index is not loaded: %v\n", err)
	} else if stats.Reembedded > 0 {
		fmt.Fprintf(env.Stderr, "toolport serve: %d index records embedded again with the current embedder\n", stats.Reembedded)
	}
	// The index builder and the doctor read secrets (a Musixmatch key; the
	// keys of Redis, Weaviate, traces) that the registry must know to
	// scrub: read them before it is built.
	b.indexBuild = serveIndexBuilder(ctx, env, musicSvc, db, shared)
	doctorChecks(env) // the page's doctor builds them again at each run
	// Traced with the session-aware provider, so that the tool spans of a chat
	// turn carry its session id and Langfuse's observation type.
	all, err := newRegistry(env, tools, append(engines.registryOptions(), tool.WithTracerProvider(traced), tool.WithLogger(logger))...)
	if err != nil {
		return b, err
	}
	if b.reg, err = st.selection.apply(all); err != nil {
		return b, usageError(err)
	}
	return b, nil
}

// newServer wires the agent and the MCP server and hands them to the
// server, with the page's Settings over them.
func newServer(env *Env, st serveSettings, cfg server.Config, model serveModelChoice, engines *sharedEngines, tokens *config.MCPTokens,
	traced trace.TracerProvider, logger *slog.Logger) (*server.Server, *serveSettingsManager, error) {
	mcp := mcpBackends(st.packs.opendata, cfg.Registry, nil) // Wire adds the playlists (cfg.Playlists) and conversations
	mcp.Approval = st.approval
	hopts := mcphost.Options{Logger: logger, Version: version.Get().Short(), Getenv: env.Config.Env, OAuth: cfg.OAuth}
	parts, err := server.Wire(cfg, server.Wiring{
		OfferUnconfigured: st.offerAll,
		MCP:               mcp,
		Agent: agent.Config{
			Provider: model.provider, NoModel: model.noModel, ModelName: model.name, ContextWindow: model.contextWindow,
			Models: model.models, MaxSteps: st.maxSteps, TurnTimeout: st.turnTimeout, TracerProvider: traced, Logger: logger,
			Approval: st.approval, Titles: true,
		},
		MCPServers: st.mcpServers,
		MCPHost:    hopts,
	})
	if err != nil {
		return nil, nil, err
	}
	settings, err := newServeSettings(env, model, parts, cfg.Registry, st.selection, engines, hopts, tokens, logger)
	if err != nil {
		return nil, nil, err
	}
	cfg.Settings = settings
	// The doctor checks what the page last saved, as `toolport doctor` would.
	cfg.Doctor = serveDoctor(settings.current)
	srv, err := server.New(cfg, parts)
	if err != nil {
		settings.Close()
		return nil, nil, err
	}
	return srv, settings, nil
}

// serveOAuth is the broker of attached MCP servers' OAuth flows: its
// redirect URI is the server's own callback on loopback (where the user's
// browser is), and the tokens go to the credentials file.
func serveOAuth(addr net.Addr, tokens *config.MCPTokens) (*mcphost.OAuth, error) {
	o, err := serveOAuthWith(addr, tokens, 0)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return o, nil
}

// serveOAuthWith is serveOAuth with flows that wait ttl for the user (0:
// mcphost's default).
func serveOAuthWith(addr net.Addr, tokens *config.MCPTokens, ttl time.Duration) (*mcphost.OAuth, error) {
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil, fmt.Errorf("listening address %s: %w", addr, err)
	}
	return mcphost.NewOAuth(mcphost.OAuthConfig{
		RedirectURL: "http://127.0.0.1:" + port + "/oauth/callback",
		Store:       tokenStore(tokens),
		FlowTTL:     ttl,
	})
}

// tokenStore is tokens, or none (memory only) without a credentials file.
func tokenStore(tokens *config.MCPTokens) mcphost.TokenStore {
	if tokens.Path == "" {
		return nil
	}
	return tokens
}

// reportServing says what the server runs with, and which tools the model
// is not offered and why: a missing key should not be found out from a
// model that never searches.
func reportServing(env *Env, st serveSettings, reg *tool.Registry, model serveModelChoice, engine string, addr net.Addr, metricsLn net.Listener) {
	fmt.Fprintf(env.Stderr, "toolport serve: %d tools, model %s, %s database\n", len(reg.Tools()), modelStatus(env, model.name, model.noModel), engine)
	if !st.offerAll {
		var reasons []string
		left := map[string][]string{}
		for _, t := range reg.Tools() {
			if why := t.Unavailable(); why != "" {
				if left[why] == nil {
					reasons = append(reasons, why)
				}
				left[why] = append(left[why], t.Name())
			}
		}
		for _, why := range reasons {
			fmt.Fprintf(env.Stderr, "toolport serve: not offered to the model (%s): %s\n", why, strings.Join(left[why], ", "))
		}
	}
	fmt.Fprintf(env.Stdout, "toolport: serving on http://%s/\n", addr)
	if metricsLn != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: metrics on http://%s/metrics\n", metricsLn.Addr())
	}
}

// serveHosts is the server's Host allow-list beyond loopback: the hosts of
// addr and metricsAddr (unless unspecified, like 0.0.0.0, which no client
// names) and the comma-separated extra list.
func serveHosts(addr, metricsAddr, extra string) ([]string, error) {
	hosts := splitList(extra)
	for _, a := range []string{addr, metricsAddr} {
		if a == "" {
			continue
		}
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", a, err)
		}
		if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
			hosts = append(hosts, host)
		}
	}
	return hosts, nil
}

// serveModels builds the models of TOOLPORT_MODELS (a list in TOOLPORT_MODEL's
// syntax) that conversations may choose besides the default; each needs its
// provider's key like TOOLPORT_MODEL does.
func serveModels(env *Env) ([]agent.Model, error) {
	specs, err := llm.ParseModels(env.Config.Env("TOOLPORT_MODELS"))
	if err != nil {
		return nil, err
	}
	models := make([]agent.Model, 0, len(specs))
	for _, spec := range specs {
		p, err := llm.FromSpecWithClient(env.Config, spec, recordingClient(env, "model", nil))
		if err != nil {
			return nil, fmt.Errorf("TOOLPORT_MODELS: %s: %w", spec.Name(), err)
		}
		models = append(models, agent.Model{Name: spec.Name(), Provider: p, ContextWindow: llm.ContextWindow(spec)})
	}
	return models, nil
}
