package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/internal/version"
	"github.com/toolport/toolport/tool"
)

func runMCP(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "auth" {
		return runMCPAuth(ctx, env, args[1:])
	}
	fs := newFlags(env, "mcp", "toolport mcp [--packs web,ckan,music] [--tools a,b]\n       toolport mcp auth NAME",
		"Serves Toolport's tools over the Model Context Protocol on stdin and stdout, for MCP clients\n"+
			"that start it (Claude Desktop, Claude Code, Cursor, VS Code…). Only protocol messages are\n"+
			"written to stdout; diagnostics go to stderr. See the README for client configuration.\n"+
			"`toolport mcp auth NAME` authorizes an attached server that asks for OAuth.")
	selection := selectionFlags(fs, "expose")
	drain := fs.Duration("drain-timeout", mcpserver.DefaultDrainTimeout,
		"when stdin closes, how long the calls already received may run before they are canceled")
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usageExit(fs)
	}
	// Nothing but the protocol may reach stdout: whatever the packs log goes to stderr.
	stdout := env.Stdout
	env.Stdout = env.Stderr
	// Read before the registry is built: the servers' tokens are secrets it scrubs.
	servers, approval, err := loadMCPHostSettings(env)
	if err != nil {
		return err
	}
	reg, closeFn, err := openRegistry(ctx, env)
	if err != nil {
		return err
	}
	defer closeFn()
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sel, err := selection.apply(reg)
	if err != nil {
		return usageError(err)
	}
	// The stored playlists are read through a store of this command's own,
	// opened when a client first lists or reads them.
	db := newSharedStore(env.Config)
	defer db.Close()
	ps, err := loadPackSettings(env)
	if err != nil {
		return err
	}
	opts := mcpBackends(ps.opendata, sel, db)
	opts.Packs, opts.Tools, opts.Version, opts.Logger = selection.packs(), selection.names(), version.Get().Short(), logger
	opts.Approval = approval
	served := reg
	if len(servers) > 0 {
		// The attached servers' tools join the selected ones (a proxy):
		// the selection is made, so the server serves sel as it changes.
		served, opts.Packs, opts.Tools, opts.ToolChanges = sel, nil, nil, &mcpserver.Changes{}
	}
	server, err := mcpserver.New(served, opts)
	if err != nil {
		return usageError(err)
	}
	if len(servers) > 0 {
		oauth, err := mcpOAuth(env)
		if err != nil {
			return err
		}
		host, err := mcphost.Attach(ctx, sel, servers, mcphost.Options{Logger: logger, Version: version.Get().Short(), Getenv: env.Config.Env,
			OnChange: func(string) { opts.ToolChanges.Changed() }, OAuth: oauth})
		if err != nil {
			return err
		}
		defer host.Close()
		// A server down at start-up joins when it answers: its clients
		// get tools/list_changed.
		rctx, stopRetry := context.WithCancel(ctx)
		retried := make(chan struct{})
		tick := time.NewTicker(mcpRetryInterval)
		go func() { defer close(retried); host.KeepConnecting(rctx, tick.C) }()
		defer func() { stopRetry(); tick.Stop(); <-retried }()
	}
	t := &mcpserver.StdioTransport{Reader: env.Stdin, Writer: stdout, DrainTimeout: *drain}
	return mcpserver.ServeStdio(ctx, server, t)
}

// mcpAuthorizeElsewhere is what a call of an attached server that needs a
// new OAuth authorization says under `toolport mcp`.
const mcpAuthorizeElsewhere = "`toolport mcp` cannot receive the authorization server's redirect while it serves: " +
	"authorize it from the Settings page of `toolport serve` (its Authorize link), or run `toolport mcp auth NAME`; the tokens they save in the credentials file are used here"

// mcpOAuth is the OAuth of `toolport mcp`'s attached servers. It has no
// callback route, so it starts no flow: it uses and refreshes the tokens
// `toolport serve` saved in the credentials file, and reads them again
// while a server has none.
func mcpOAuth(env *Env) (*mcphost.OAuth, error) {
	return mcphost.NewOAuth(mcphost.OAuthConfig{
		AuthorizeElsewhere: mcpAuthorizeElsewhere,
		Store:              tokenStore(&config.MCPTokens{Path: env.Config.WritePath()}),
	})
}

// mcpRetryInterval is how often `toolport mcp` tries the attached servers
// that are down again; each server's backoff (mcphost) spaces the attempts.
const mcpRetryInterval = 5 * time.Second

// toolSelection is the --packs and --tools flags of the commands that serve
// some of the tools (mcp, serve).
type toolSelection struct{ packList, toolList *string }

// selectionFlags defines --packs and --tools on fs; verb says what the
// command does with the tools ("expose").
func selectionFlags(fs *flag.FlagSet, verb string) toolSelection {
	return toolSelection{
		packList: fs.String("packs", "", "comma-separated packs to "+verb+" (web, ckan, music); default all"),
		toolList: fs.String("tools", "", "comma-separated tool names to "+verb+"; default all"),
	}
}

func (s toolSelection) packs() []string { return splitList(*s.packList) }
func (s toolSelection) names() []string { return splitList(*s.toolList) }

// apply returns the tools of reg the flags select; an unknown pack or tool
// is an error.
// takes reports whether the selection holds t.
func (s toolSelection) takes(t *tool.Tool) bool { return tool.Selected(t, s.packs(), s.names()) }

func (s toolSelection) apply(reg *tool.Registry) (*tool.Registry, error) {
	sel, err := reg.Select(s.packs(), s.names())
	if err != nil {
		return nil, fmt.Errorf("--packs/--tools: %w", err)
	}
	return sel, nil
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
