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

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/internal/version"
	"github.com/toolport/toolport/internal/webui"
	"github.com/toolport/toolport/tool"
)

func runServe(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "serve", "toolport serve [--addr 127.0.0.1:8080] [--max-steps 5] [--packs web,ckan,music] [--tools a,b]",
		"Runs the chat server: the Discover Chat page at /, its REST and streaming API under /api,\n"+
			"the tools over MCP (streamable HTTP) at /mcp, /healthz and /metrics.\n\n"+
			"Configuration (environment or credentials file):\n"+
			"  TOOLPORT_MODEL         provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,\n"+
			"                         openai:qwen2.5@http://127.0.0.1:11434/v1 (without one the server still\n"+
			"                         runs, and chats answer with how to configure a model)\n"+
			"  ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL\n"+
			"  TOOLPORT_TURN_TIMEOUT  bound on a chat turn (default 10m); TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT\n"+
			"                         (30s) and TOOLPORT_MODEL_IDLE_TIMEOUT (2m) bound the model's silences\n"+
			"  TOOLPORT_DATABASE_URL  postgres://… or a SQLite file (or database.url; default: the user's data dir)\n"+
			"  TOOLPORT_TURN_LEASE, TOOLPORT_TURN_EVENTS_RETENTION, TOOLPORT_REPLICA_ID: turns across replicas (15s, 10m, random)\n"+
			"  TOOLPORT_API_TOKEN     bearer token required on /api, /mcp and /metrics (required off loopback)\n"+
			"  TOOLPORT_ALLOWED_HOSTS, TOOLPORT_ALLOWED_ORIGINS, TOOLPORT_METRICS_ADDR: defaults of the flags\n"+
			"  OTEL_EXPORTER_OTLP_ENDPOINT or LANGFUSE_PUBLIC_KEY/LANGFUSE_SECRET_KEY/LANGFUSE_HOST for traces")
	addr := fs.String("addr", server.DefaultAddr, "address to listen on (host:port)")
	selection := selectionFlags(fs, "serve")
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
	if pos, code, ok := parse(fs, args); !ok {
		return code
	} else if len(pos) > 0 {
		fs.Usage()
		return ExitUsage
	}
	if *maxSteps < 1 {
		fmt.Fprintln(env.Stderr, "toolport serve: --max-steps must be at least 1")
		return ExitUsage
	}
	turnTimeout, err := llm.ParseTimeout("TOOLPORT_TURN_TIMEOUT", env.Config.Env("TOOLPORT_TURN_TIMEOUT"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	turnsCfg, err := turnSettings(env.Config.Env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	token := env.Config.Secret("TOOLPORT_API_TOKEN", "server.api_token")
	if err := server.CheckAddr(*addr, token); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	if *metricsAddr != "" {
		// Metrics go out without the token there: the same rule as --addr.
		if err := server.CheckAddr(*metricsAddr, token); err != nil {
			fmt.Fprintf(env.Stderr, "toolport serve: --metrics-addr: %v\n", err)
			return ExitUsage
		}
	}
	if *headerTimeout <= 0 || *bodyTimeout <= 0 {
		fmt.Fprintln(env.Stderr, "toolport serve: --header-timeout and --body-timeout must be positive")
		return ExitUsage
	}
	hosts, err := serveHosts(*addr, *metricsAddr, *allowedHosts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	if h, _, _ := net.SplitHostPort(*addr); *allowedHosts == "" && (h == "" || net.ParseIP(h).IsUnspecified()) {
		fmt.Fprintln(env.Stderr, "toolport serve: warning: listening on every interface, but only loopback Host names are answered; "+
			"list the names clients use in --allowed-hosts")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// The model first: its keys must be known to the registry that scrubs secrets.
	models, err := serveModels(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	provider, err := llm.FromConfigWithClient(env.Config, recordingClient(env, "model", nil))
	var noModel error
	var modelName string
	var contextWindow int
	var le *llm.Error
	switch {
	case err == nil:
		if spec, perr := llm.ParseModel(env.Config.Env("TOOLPORT_MODEL")); perr == nil {
			modelName = spec.Provider + ":" + spec.Model // never the base URL, which may hold credentials
			contextWindow = llm.ContextWindow(spec)
		}
	case env.Config.Env("TOOLPORT_MODEL") == "" && len(models) > 0:
		// Without TOOLPORT_MODEL, the first of TOOLPORT_MODELS is the default.
		provider, modelName, contextWindow = models[0].Provider, models[0].Name, models[0].ContextWindow
	case errors.As(err, &le) && le.Code == llm.CodeNotConfigured:
		provider, noModel = nil, err
		fmt.Fprintf(env.Stderr, "toolport serve: warning: %s; chats will say how to configure a model\n", le.Message)
	default:
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}

	// The port first: a taken one is the commonest failure, and it should
	// not wait for the index to load.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(env.Stderr, "toolport serve: %s is already in use (another toolport serve?); stop it or choose another address with --addr\n", *addr)
		} else {
			fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		}
		return ExitFailure
	}
	defer ln.Close() // srv.Serve closes it too; this covers the early returns

	// The one store of the process, from the one resolved configuration:
	// the chat server and the music pack share it.
	shared := newSharedStore(env.Config)
	defer shared.Close()
	db, err := shared.Open(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}

	tp, shutdownTracing, err := telemetry.Setup(ctx, telemetry.FromConfig(env.Config))
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	defer shutdownTracing(context.Background())
	traced := agent.TracerProvider(tp)

	// The result cache and upstream rate limits, shared by the replicas
	// through Redis when TOOLPORT_REDIS_URL is set.
	engines, err := openSharedEngines(env.Config, logger)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	defer engines.Close()
	if err := engines.Ping(ctx); err != nil {
		logger.Warn("shared cache and rate limits unavailable: calls go to the upstreams uncached until it answers", "error", err)
	}
	tools, musicSvc, err := packTools(env, shared, engines)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	// Load the index now, writing back the embeddings it has to make, so
	// that searches find it ready and never write. A failure (an embeddings
	// endpoint down) leaves chat working; semanticSearch reports it.
	if st, err := musicSvc.Load(ctx); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: warning: the track index is not loaded: %v\n", err)
	} else if st.Reembedded > 0 {
		fmt.Fprintf(env.Stderr, "toolport serve: %d index records embedded again with the current embedder\n", st.Reembedded)
	}
	// Before the registry: the builder reads secrets (a Musixmatch key) that
	// the registry must know to scrub.
	indexBuild := serveIndexBuilder(ctx, env, musicSvc, db, shared)
	doctorFn := serveDoctor(env) // before the registry: it reads the keys of Redis, Weaviate, traces
	// Traced with the session-aware provider, so that the tool spans of a chat
	// turn carry its session id and Langfuse's observation type.
	all, err := newRegistry(env, tools, append(engines.registryOptions(), tool.WithTracerProvider(traced), tool.WithLogger(logger))...)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	reg, err := selection.apply(all)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}

	var metricsLn net.Listener
	if *metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", *metricsAddr); err != nil {
			fmt.Fprintf(env.Stderr, "toolport serve: --metrics-addr: %v\n", err)
			return ExitFailure
		}
		defer metricsLn.Close()
	}
	srv, err := server.New(server.Config{
		Store: db, Playlists: db, Registry: reg, IndexBuild: indexBuild, Token: token, Version: version.Get().Short(), Web: webui.Handler(), Logger: logger,
		AllowedHosts: hosts, AllowedOrigins: splitList(*allowedOrigins), MetricsListener: metricsLn,
		ReadHeaderTimeout: *headerTimeout, BodyReadTimeout: *bodyTimeout, Doctor: doctorFn,
		TurnLease: turnsCfg.lease, TurnEventsRetention: turnsCfg.retention, ReplicaID: turnsCfg.replica,
		StartPrecedence: turnsCfg.startPrecedence, OfferUnconfigured: *offerAll,
		Checks: serveChecks(env.Config.Env, engines, musicSvc),
		MCP:    mcpBackends(env, reg, nil), // the server adds the playlists (db) and conversations
		Agent: agent.Config{
			Provider: provider, NoModel: noModel, ModelName: modelName, ContextWindow: contextWindow, Models: models, MaxSteps: *maxSteps,
			TurnTimeout: turnTimeout, TracerProvider: traced, Logger: logger,
		},
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	model := modelStatus(env, modelName, noModel)
	fmt.Fprintf(env.Stderr, "toolport serve: %d tools, model %s, %s database\n", len(reg.Tools()), model, db.Engine())
	if !*offerAll {
		// Said at start-up, so that a missing key is not found out from a
		// model that never searches; one line per reason.
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
	fmt.Fprintf(env.Stdout, "toolport: serving on http://%s/\n", ln.Addr())
	if metricsLn != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	return ExitOK
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
