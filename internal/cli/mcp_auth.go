package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/toolport/toolport/internal/config"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/version"
	"github.com/toolport/toolport/tool"
)

// runMCPAuth is `toolport mcp auth NAME`: the authorization of an attached
// OAuth server for a machine that runs `toolport mcp` without `toolport
// serve`. It prints the authorization URL, receives the authorization
// server's redirect on a loopback port of its own for the one flow, and
// saves the tokens in the credentials file, where `toolport mcp` reads them.
func runMCPAuth(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "mcp auth", "toolport mcp auth [--timeout 10m] NAME",
		"Authorizes the attached MCP server NAME (a url server that asks for OAuth) for `toolport mcp`:\n"+
			"prints the URL to open in a browser on this machine, waits on a loopback port for the\n"+
			"authorization server to send the browser back, and saves the tokens in the credentials file.")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the browser")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *timeout <= 0 {
		return usageExit(fs)
	}
	name := pos[0]
	servers, _, err := loadMCPHostSettings(env)
	if err != nil {
		return err
	}
	var srv *mcphost.Server
	for i := range servers {
		if servers[i].Name == name {
			srv = &servers[i]
		}
	}
	switch {
	case srv == nil:
		return usageError(fmt.Errorf("mcp auth: no MCP server %q in the credentials file's mcp.servers", name))
	case srv.URL == "" || srv.Token != "":
		return usageError(fmt.Errorf("mcp auth: MCP server %q is not a url server without a token: it needs no OAuth", name))
	}
	tokens := &config.MCPTokens{Path: env.Config.WritePath()}
	if tokens.Path == "" {
		return errors.New("mcp auth: no credentials file to save the tokens in (set TOOLPORT_CREDENTIALS)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the redirect URI: loopback, this flow only
	if err != nil {
		return fmt.Errorf("mcp auth: %w", err)
	}
	defer ln.Close()
	oauth, err := serveOAuthWith(ln.Addr(), tokens, *timeout)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	host, err := mcphost.Attach(ctx, tool.NewRegistry(), []mcphost.Server{*srv},
		mcphost.Options{Logger: logger, Version: version.Get().Short(), OAuth: oauth})
	if err != nil {
		return err
	}
	defer host.Close()
	st := host.Status()[0]
	switch {
	case st.Connected:
		fmt.Fprintf(env.Stdout, "MCP server %s is authorized already (%d tools); `toolport mcp` uses its saved tokens\n", name, len(st.Tools))
		return nil
	case st.AuthorizationURL == "":
		return fmt.Errorf("mcp auth: MCP server %q: %s", name, st.Error)
	}
	fmt.Fprintf(env.Stderr, "Open this URL in a browser on this machine to authorize MCP server %s:\n\n  %s\n\nWaiting for the browser (at most %s)…\n",
		name, st.AuthorizationURL, *timeout)
	done := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/callback", func(w http.ResponseWriter, r *http.Request) {
		_, err := oauth.Callback(r.Context(), r.URL.Query())
		page := struct{ Title, Message string }{"Authorized", "MCP server " + name + " is authorized; `toolport mcp` uses its tokens. You can close this tab."}
		status := http.StatusOK
		if err != nil {
			status, page.Title, page.Message = http.StatusBadRequest, "Not authorized", err.Error()
		}
		mcphost.WriteCallbackPage(w, status, page.Title, page.Message, "")
		if !errors.Is(err, mcphost.ErrUnknownState) { // a stray request does not end the wait
			select {
			case done <- err:
			default:
			}
		}
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		// Shutdown, not Close: the callback's page is still being written
		// when its handler hands over the result, and Close would cut the
		// browser off before it (an empty reply).
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			_ = hs.Close()
		}
	}()
	wait := time.NewTimer(*timeout)
	defer wait.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("mcp auth: %w", err)
		}
	case <-wait.C:
		return fmt.Errorf("mcp auth: nobody authorized MCP server %q within %s", name, *timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	st = host.Status()[0]
	fmt.Fprintf(env.Stdout, "MCP server %s is authorized (%d tools); its tokens are saved in %s for `toolport mcp`\n", name, len(st.Tools), tokens.Path)
	return nil
}
