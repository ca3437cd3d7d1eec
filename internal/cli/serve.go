package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"syscall"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/store"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/internal/webui"
	"github.com/toolport/toolport/tool"
)

func runServe(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "serve", "toolport serve [--addr 127.0.0.1:8080] [--max-steps 5]",
		"Runs the chat server: the Discover Chat page at /, its REST and streaming API under /api,\n"+
			"the tools over MCP (streamable HTTP) at /mcp, /healthz and /metrics.\n\n"+
			"Configuration (environment or credentials file):\n"+
			"  TOOLPORT_MODEL         provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1,\n"+
			"                         openai:qwen2.5@http://127.0.0.1:11434/v1 (without one the server still\n"+
			"                         runs, and chats answer with how to configure a model)\n"+
			"  ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL, OPENAI_BASE_URL\n"+
			"  TOOLPORT_TURN_TIMEOUT  bound on a chat turn (default 10m); TOOLPORT_MODEL_FIRST_BYTE_TIMEOUT\n"+
			"                         (30s) and TOOLPORT_MODEL_IDLE_TIMEOUT (2m) bound the model's silences\n"+
			"  TOOLPORT_DATABASE_URL  postgres://… or a SQLite file (default: the user's data dir)\n"+
			"  TOOLPORT_API_TOKEN     bearer token required on /api and /mcp (required off loopback)\n"+
			"  OTEL_EXPORTER_OTLP_ENDPOINT or LANGFUSE_PUBLIC_KEY/LANGFUSE_SECRET_KEY/LANGFUSE_HOST for traces")
	addr := fs.String("addr", server.DefaultAddr, "address to listen on (host:port)")
	maxSteps := fs.Int("max-steps", agent.DefaultMaxSteps, "tool rounds per chat turn before the model must answer")
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
	token := env.Config.Secret("TOOLPORT_API_TOKEN", "server.api_token")
	if err := server.CheckAddr(*addr, token); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// The model first: its keys must be known to the registry that scrubs secrets.
	provider, err := llm.FromConfig(env.Config)
	var noModel error
	var modelName string
	var le *llm.Error
	switch {
	case err == nil:
		if spec, perr := llm.ParseModel(env.Config.Env("TOOLPORT_MODEL")); perr == nil {
			modelName = spec.Provider + ":" + spec.Model // never the base URL, which may hold credentials
		}
	case errors.As(err, &le) && le.Code == llm.CodeNotConfigured:
		provider, noModel = nil, err
		fmt.Fprintf(env.Stderr, "toolport serve: warning: %s; chats will say how to configure a model\n", le.Message)
	default:
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitUsage
	}

	db, err := store.Open(ctx, env.Config.Env("TOOLPORT_DATABASE_URL"))
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	defer db.Close()

	tp, shutdownTracing, err := telemetry.Setup(ctx, telemetry.FromConfig(env.Config))
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	defer shutdownTracing(context.Background())
	traced := agent.TracerProvider(tp)

	tools, closeTools, err := packTools(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	defer closeTools()
	// Traced with the session-aware provider, so that the tool spans of a chat
	// turn carry its session id and Langfuse's observation type.
	reg, err := newRegistry(env, tools, tool.WithTracerProvider(traced), tool.WithLogger(logger))
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}

	srv, err := server.New(server.Config{
		Store: db, Registry: reg, Token: token, Version: version, Web: webui.Handler(), Logger: logger,
		Agent: agent.Config{
			Provider: provider, NoModel: noModel, ModelName: modelName, MaxSteps: *maxSteps,
			TurnTimeout: turnTimeout, TracerProvider: traced, Logger: logger,
		},
	})
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	model := modelName
	if model == "" {
		model = "none (set TOOLPORT_MODEL)"
	}
	fmt.Fprintf(env.Stderr, "toolport serve: %d tools, model %s, %s database\n", len(reg.Tools()), model, db.Engine())
	fmt.Fprintf(env.Stdout, "toolport: serving on http://%s/\n", ln.Addr())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintf(env.Stderr, "toolport serve: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}
