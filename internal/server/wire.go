package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/metric"
	"github.com/toolport/toolport/tool"
)

// Parts are what a [Server] serves besides HTTP: the chat agent and the MCP
// server. [Wire] builds them; [New] only routes requests to them.
type Parts struct {
	// Agent answers chat turns over Offered.
	Agent *agent.Agent
	// Offered are the tools the agent offers its model (Config.Registry's
	// available ones unless Wiring.OfferUnconfigured); nil means all of
	// Config.Registry.
	Offered *tool.Registry
	// MCP serves /mcp.
	MCP *mcp.Server
	// Changes is the notifier MCP was built with: the server tells it when a
	// conversation or playlist changes. nil makes one nobody listens to.
	Changes *mcpserver.Changes
	// Metrics is the registry the agent's tool calls are counted in; New
	// serves it at /metrics.
	Metrics *metric.Registry

	// Host holds the attached MCP servers (Wiring.MCPServers), whose tools
	// are in Config.Registry; nil without any. The server refreshes the
	// servers that are down and closes the host when it closes.
	Host *mcphost.Host

	// ToolsChanged is called after Config.Registry's tools change outside
	// the attached servers of Host (the page's Settings: a pack declared
	// again with new keys, a server attached live): the model's offer and
	// /mcp's tools follow.
	ToolsChanged func()

	metrics *metrics // the collectors in Metrics, shared by the agent's hook and New
}

// Wiring is what [Wire] builds the parts from, besides the server's Config.
type Wiring struct {
	// Agent configures the chat agent; its Store and Registry are set from
	// Config, and its OnToolCall also feeds the server's metrics and tells
	// /mcp's clients when a tool that writes ran.
	Agent agent.Config
	// OfferUnconfigured offers the model every tool of Config.Registry. By
	// default it gets only the available ones (see tool.Spec.Available): a
	// tool whose upstream lacks credentials can only fail, and its
	// definition costs tokens on every model call. /api/tools and /mcp
	// still list them all.
	OfferUnconfigured bool
	// MCP configures what /mcp offers besides the tools: its CKAN catalog
	// and Moods (completions, dataset resources) are used; Wire sets the
	// rest (the conversations and Config.Playlists become resources).
	MCP mcpserver.Options
	// MCPServers are other MCP servers whose tools join Config.Registry
	// (see internal/mcphost), attached by Wire with MCPHost's options (its
	// OnChange is Wire's: the model's offer and /mcp's tools follow).
	MCPServers []mcphost.Server
	MCPHost    mcphost.Options
}

// Wire builds the agent and the MCP server a server for cfg serves.
func Wire(cfg Config, w Wiring) (Parts, error) {
	if cfg.Store == nil || cfg.Registry == nil {
		return Parts{}, errors.New("server: Config.Store and Registry are required")
	}
	cfg = withDefaults(cfg)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Metrics, cfg.GOGC)
	if err != nil {
		return Parts{}, err
	}
	p := Parts{Offered: cfg.Registry, Changes: &mcpserver.Changes{}, Metrics: cfg.Metrics, metrics: m}
	if !w.OfferUnconfigured {
		var left []string
		if p.Offered, left = cfg.Registry.Available(); len(left) > 0 {
			logger.Info("tools not offered to the model, being unavailable", "tools", left)
		}
	}
	// Always: the page's Settings may change the tools of a server that
	// started with no attached MCP server.
	toolChanges := &mcpserver.Changes{}
	w.MCP.ToolChanges = toolChanges
	acfg := w.Agent
	acfg.Store, acfg.Registry = cfg.Store, p.Offered
	hook, changes := acfg.OnToolCall, p.Changes
	acfg.OnToolCall = func(name string, res *tool.Result) {
		m.observeTool(name, res)
		if writes(cfg.Registry, name) {
			changes.Changed() // a chat turn may have stored a playlist: tell /mcp's clients
		}
		if hook != nil {
			hook(name, res)
		}
	}
	if p.Agent, err = agent.New(acfg); err != nil {
		return Parts{}, fmt.Errorf("server: %w", err)
	}
	if p.MCP, err = mcpserver.New(cfg.Registry, mcpOptions(cfg, w.MCP, changes)); err != nil {
		return Parts{}, fmt.Errorf("server: %w", err)
	}
	offer := offerFollower(cfg.Registry, p.Offered, !w.OfferUnconfigured)
	p.ToolsChanged = func() {
		offer()
		toolChanges.Changed()
	}
	if len(w.MCPServers) > 0 {
		hopts := w.MCPHost
		hopts.OnChange = func(server string) {
			offer()               // the agent reads its registry at each model call
			toolChanges.Changed() // /mcp adds and removes them: tools/list_changed
			if w.MCPHost.OnChange != nil {
				w.MCPHost.OnChange(server)
			}
		}
		if hopts.Logger == nil {
			hopts.Logger = logger
		}
		// Attach only connects, each server bounded by ConnectTimeout; a
		// server it cannot reach is not an error (Refresh tries again).
		if p.Host, err = mcphost.Attach(context.Background(), cfg.Registry, w.MCPServers, hopts); err != nil {
			return Parts{}, fmt.Errorf("server: %w", err)
		}
	}
	return p, nil
}

// offerFollower returns what keeps offered, the agent's registry, in step
// with all when attached servers add or remove tools: offered is all
// itself, or a subset (the available tools) that must follow it.
func offerFollower(all, offered *tool.Registry, onlyAvailable bool) func() {
	if offered == all {
		return func() {}
	}
	var mu sync.Mutex
	return func() {
		mu.Lock()
		defer mu.Unlock()
		want := map[string]*tool.Tool{}
		for _, t := range all.Tools() {
			if !onlyAvailable || t.Unavailable() == "" {
				want[t.Name()] = t
			}
		}
		var stale []string
		for _, t := range offered.Tools() {
			if want[t.Name()] != t {
				stale = append(stale, t.Name())
			}
		}
		offered.Unregister(stale...)
		for _, t := range all.Tools() { // in the registry's order
			if _, ok := offered.Lookup(t.Name()); !ok && want[t.Name()] == t {
				_ = offered.Register(t) // not there: cannot be a duplicate
			}
		}
	}
}

// withDefaults fills cfg's zero fields with the defaults (the turn settings
// are left to turn.New, which owns their defaults).
func withDefaults(cfg Config) Config {
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Metrics == nil {
		cfg.Metrics = new(metric.Registry)
	}
	return cfg
}
