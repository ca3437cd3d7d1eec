package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/toolport/toolport/internal/pack/music"
	"github.com/toolport/toolport/internal/pack/opendata"
	"github.com/toolport/toolport/internal/pack/webfetch"
	"github.com/toolport/toolport/internal/pack/websearch"
	"github.com/toolport/toolport/internal/telemetry"
	"github.com/toolport/toolport/tool"
)

// BuildRegistry wires every pack into one registry from env.Config, traced
// with the exporter telemetry configures. The returned function releases what
// the packs opened (databases, exporters).
func BuildRegistry(ctx context.Context, env *Env) (*tool.Registry, func(), error) {
	tp, shutdown, err := telemetry.Setup(ctx, telemetry.FromConfig(env.Config))
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	engines, err := openSharedEngines(env.Config, logger)
	if err != nil {
		shutdown(context.Background())
		return nil, nil, err
	}
	db := newSharedStore(env.Config)
	tools, _, err := packTools(env, db, engines)
	if err != nil {
		engines.Close()
		shutdown(context.Background())
		return nil, nil, err
	}
	closeTools := func() { db.Close(); engines.Close() }
	reg, err := newRegistry(env, tools, append(engines.registryOptions(), tool.WithTracerProvider(tp), tool.WithLogger(logger))...)
	if err != nil {
		closeTools()
		shutdown(context.Background())
		return nil, nil, err
	}
	return reg, func() {
		closeTools()
		shutdown(context.Background())
	}, nil
}

// packSettings are the packs' settings, resolved from the configuration in
// one place, [loadPackSettings]: the packs read none themselves.
type packSettings struct {
	search   websearch.Config
	fetch    webfetch.Config
	opendata opendata.Config
	music    music.Config
}

// loadPackSettings resolves every pack's settings from env.Config, reading
// their keys (so that env.Config.Secrets() lists them afterwards), with the
// recording clients when a recording runs.
func loadPackSettings(env *Env) (packSettings, error) {
	fetch, err := webfetch.ConfigFromEnv(env.Config)
	if err != nil {
		return packSettings{}, err
	}
	ps := packSettings{search: websearch.ConfigFromEnv(env.Config), fetch: fetch,
		opendata: opendata.ConfigFromEnv(env.Config), music: music.ConfigFromEnv(env.Config)}
	recordPacks(env, &ps.search, &ps.opendata, &ps.music)
	return ps, nil
}

// packTools declares every pack's tools from env.Config, the music pack's
// over db, with the upstream rate limiters of engines, and returns the music
// service too, for loading its index.
func packTools(env *Env, db *sharedStore, engines *sharedEngines) ([]*tool.Tool, *music.Service, error) {
	ps, err := loadPackSettings(env)
	if err != nil {
		return nil, nil, err
	}
	tools, svc := declareTools(ps, db, engines)
	return tools, svc, nil
}

// declareTools declares every pack's tools from ps, the music pack's over
// db, with the upstream rate limiters of engines.
func declareTools(ps packSettings, db *sharedStore, engines *sharedEngines) ([]*tool.Tool, *music.Service) {
	searchCfg, fetchCfg, odCfg, musicCfg := ps.search, ps.fetch, ps.opendata, ps.music
	var tools []*tool.Tool
	searchCfg.BraveLimiter = engines.limiter("brave", searchCfg.BraveAPIKey, engines.braveRate)
	tools = append(tools, websearch.Tools(searchCfg)...)
	tools = append(tools, webfetch.Tool(fetchCfg))
	tools = append(tools, opendata.Tools(odCfg)...)
	// The music service opens the store and loads its index on first use,
	// so that list and schema work on a machine with no database.
	musicCfg.Tidal.Limiter = engines.limiter("tidal", musicCfg.Tidal.ClientID, engines.tidalRate)
	if engines.cache != nil {
		musicCfg.Tidal.Cache = engines.cache
	}
	musicSvc := music.Open(musicCfg, db.music)
	tools = append(tools, music.Tools(musicSvc)...)
	return tools, musicSvc
}

// newRegistry registers tools in a registry that scrubs every secret the
// configuration has handed out. Secrets are read while the packs are
// configured, so this comes after packTools.
func newRegistry(env *Env, tools []*tool.Tool, opts ...tool.Option) (*tool.Registry, error) {
	reg := tool.NewRegistry(append(opts, tool.WithSecrets(env.Config.Secrets()...))...)
	if err := reg.Register(tools...); err != nil {
		return nil, fmt.Errorf("registering tools: %w", err)
	}
	return reg, nil
}
