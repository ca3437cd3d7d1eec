package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/cli"
	"github.com/toolport/toolport/internal/testexec"
)

// `toolport mcp` attaches an OAuth server the user authorized from
// `toolport serve`'s page: it uses the tokens serve saved in the
// credentials file (no flow of its own: it has no callback route), and
// when they are revoked its tools fail with AUTH_MISSING saying to
// authorize the server from serve's Settings page.
func TestMCPUsesTokensSavedByServe(t *testing.T) {
	u := newOAuthUser(t)
	as := u.as

	// The user authorizes it in serve.
	base, _, _ := startServe(t, u.vars, "--packs", "web")
	if code, body := send(t, "POST", base+"/api/settings/mcp", `{"name":"notes","url":"`+u.mcpURL+`"}`); code != 200 {
		t.Fatalf("attach: %d %s", code, body)
	}
	var s struct {
		MCPServers []struct{ AuthorizationURL string }
	}
	getJSON(t, base+"/api/settings", &s)
	if len(s.MCPServers) != 1 || s.MCPServers[0].AuthorizationURL == "" {
		t.Fatalf("settings: %+v", s)
	}
	authorizeAt(t, s.MCPServers[0].AuthorizationURL)

	// serve's registry scrubs the tokens it has just obtained: the server
	// quotes the header back, the result does not.
	if code, body := send(t, "POST", base+"/api/tools/notes__echo_token", `{}`); code != 200 || !strings.Contains(body, "Bearer [REDACTED]") {
		t.Errorf("serve's notes__echo_token right after authorizing: %d %s; want the token redacted", code, body)
	}

	// An MCP client runs `toolport mcp`.
	cfg := processConfig(t, u.vars)
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	var out, errb testexec.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, &cli.Env{Stdin: inR, Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry},
			[]string{"mcp", "--packs", "web"})
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
	})
	id := 0
	rpc := func(method, params string) string {
		t.Helper()
		id++
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`"id":%d,`, id)
		wctx, stop := context.WithTimeout(ctx, time.Minute) // a hang guard, not a timing
		defer stop()
		got, err := out.Await(wctx, func(s string) bool { return strings.Contains(s, want) })
		if err != nil {
			t.Fatalf("no answer to %s: %v\nstdout: %s\nstderr: %s", method, err, got, errb.String())
		}
		for line := range strings.SplitSeq(got, "\n") {
			if strings.Contains(line, want) {
				return line
			}
		}
		return ""
	}
	rpc("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if list := rpc("tools/list", `{}`); !strings.Contains(list, `"notes__whoami"`) {
		t.Fatalf("tools/list lacks the attached server's tools (its saved tokens unused?): %s\nstderr: %s", list, errb.String())
	}
	if got := rpc("tools/call", `{"name":"notes__whoami","arguments":{}}`); !strings.Contains(got, "test user") {
		t.Fatalf("calling notes__whoami: %s", got)
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("authorizations = %d; want the one made in serve", n)
	}

	as.ExpireAll(true) // revoked: the user must authorize again
	got := rpc("tools/call", `{"name":"notes__whoami","arguments":{}}`)
	if !strings.Contains(got, "AUTH_MISSING") || !strings.Contains(got, "toolport serve") || !strings.Contains(got, `"isError":true`) {
		t.Fatalf("calling with revoked tokens: %s; want AUTH_MISSING saying to authorize from toolport serve", got)
	}
	for _, tok := range as.Tokens() {
		if !strings.HasPrefix(tok, "client") && (strings.Contains(out.String(), tok) || strings.Contains(errb.String(), tok)) {
			t.Errorf("a token (%s…) is in mcp's output", tok[:3])
		}
	}
}

// `toolport mcp auth NAME`: the authorization for `toolport mcp` without
// serve. It prints the URL; the browser comes back to its own loopback
// port; the tokens are saved, and `toolport mcp auth` again says so.
func TestMCPAuthCommand(t *testing.T) {
	u := newOAuthUser(t)
	as := u.as
	u.writeCredentials(t, `{"mcp":{"servers":{"notes":{"url":"`+u.mcpURL+`"}}}}`)
	cfg := processConfig(t, u.vars)
	run := func(args ...string) (*testexec.Buffer, *testexec.Buffer, chan int) {
		var out, errb testexec.Buffer
		done := make(chan int, 1)
		go func() {
			done <- cli.Run(t.Context(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Config: cfg, Registry: cli.BuildRegistry}, args)
		}()
		return &out, &errb, done
	}
	out, errb, done := run("mcp", "auth", "notes")
	wctx, stop := context.WithTimeout(t.Context(), time.Minute) // a hang guard, not a timing
	defer stop()
	printed, err := errb.Await(wctx, func(s string) bool { return strings.Contains(s, "Waiting for the browser") })
	if err != nil {
		t.Fatalf("no authorization URL printed: %v\n%s", err, printed)
	}
	var authURL string
	for line := range strings.SplitSeq(printed, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, as.Srv.URL+"/authorize?") {
			authURL = l
		}
	}
	if authURL == "" {
		t.Fatalf("stderr holds no authorization URL:\n%s", printed)
	}
	if page := authorizeAt(t, authURL); !strings.Contains(page, "notes is authorized") {
		t.Fatalf("callback page: %s", page)
	}
	if code := <-done; code != 0 || !strings.Contains(out.String(), "MCP server notes is authorized (2 tools)") {
		t.Fatalf("mcp auth exited %d: %s\n%s", code, out.String(), errb.String())
	}
	if raw, _ := os.ReadFile(u.creds); !strings.Contains(string(raw), `"refresh_token"`) {
		t.Fatalf("no tokens saved: %s", raw)
	}
	out, errb, done = run("mcp", "auth", "notes")
	if code := <-done; code != 0 || !strings.Contains(out.String(), "authorized already") {
		t.Fatalf("mcp auth again exited %d: %s\n%s", code, out.String(), errb.String())
	}
	if n := as.Authorizes.Load(); n != 1 {
		t.Errorf("authorizations = %d; want 1", n)
	}
	_, errb, done = run("mcp", "auth", "nosuch")
	if code := <-done; code == 0 || !strings.Contains(errb.String(), `no MCP server "nosuch"`) {
		t.Errorf("mcp auth of an unknown server exited %d: %s", code, errb.String())
	}
}
