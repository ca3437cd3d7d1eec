package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/toolport/toolport/ckan"
	"github.com/toolport/toolport/music"
	"github.com/toolport/toolport/telemetry"
	"github.com/toolport/toolport/tool"
	"github.com/toolport/toolport/webfetch"
	"github.com/toolport/toolport/websearch"
)

// BuildRegistry wires every pack into one registry from env.Config. The
// returned function releases what the packs opened (databases, exporters).
func BuildRegistry(ctx context.Context, env *Env) (*tool.Registry, func(), error) {
	tp, shutdown, err := telemetry.Setup(ctx, telemetry.FromConfig(env.Config))
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	fetchCfg, err := webfetch.ConfigFromEnv(env.Config)
	if err != nil {
		return nil, nil, err
	}
	var tools []*tool.Tool
	tools = append(tools, websearch.Tools(websearch.ConfigFromEnv(env.Config))...)
	tools = append(tools, webfetch.Tool(fetchCfg))
	tools = append(tools, ckan.Tools(ckan.ConfigFromEnv(env.Config))...)
	// The music service opens its store and loads its index on first use,
	// so that list and schema work on a machine with no database.
	musicSvc := music.Open(music.ConfigFromEnv(env.Config))
	tools = append(tools, music.Tools(musicSvc)...)
	// Secrets are read while the packs are configured, so the registry that
	// scrubs them is made after.
	reg := tool.NewRegistry(tool.WithTracerProvider(tp), tool.WithLogger(logger), tool.WithSecrets(env.Config.Secrets()...))
	if err := reg.Register(tools...); err != nil {
		musicSvc.Close()
		return nil, nil, fmt.Errorf("registering tools: %w", err)
	}
	return reg, func() {
		musicSvc.Close()
		shutdown(context.Background())
	}, nil
}

func serverCommands() []Command { return nil }
