package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"
)

// TestServeProcessRefusesCrossSiteWrites runs `toolport serve` as a person
// would (loopback, no token) and sends what a malicious web page can send:
// text/plain and cross-site POSTs, and reads through a rebound DNS name.
// Nothing is created; the page's own kind of request still works.
func TestServeProcessRefusesCrossSiteWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	bin := buildToolport(t)
	dir := t.TempDir()
	environ := testexec.Env(t, map[string]string{"TOOLPORT_DATABASE_URL": filepath.Join(dir, "chat.db")})
	_, base := startServe(t, bin, environ, "--allowed-hosts", "chat.internal")
	e := &env{url: base}
	port := base[strings.LastIndex(base, ":")+1:]
	evil := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		want                     int
		code                     string
	}{
		{"text/plain create", "POST", "/api/conversations", `{"title":"csrf"}`, with(evil, "Content-Type", "text/plain"), 403, "CROSS_ORIGIN"},
		{"text/plain create, no Origin", "POST", "/api/conversations", `{"title":"csrf"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"cross-site JSON create", "POST", "/api/conversations", `{"title":"csrf"}`, with(evil, "Content-Type", "application/json"), 403, "CROSS_ORIGIN"},
		{"text/plain tool call", "POST", "/api/tools/web_fetch", `{"url":"http://127.0.0.1:1/"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"text/plain MCP call", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"rebound list", "GET", "/api/conversations", ``, map[string]string{"Host": "rebind.attacker.example:" + port}, 403, "FORBIDDEN_HOST"},
		{"rebound page", "GET", "/", ``, map[string]string{"Host": "rebind.attacker.example:" + port}, 403, "FORBIDDEN_HOST"},
		{"rebound metrics", "GET", "/metrics", ``, map[string]string{"Host": "rebind.attacker.example"}, 403, "FORBIDDEN_HOST"},
		{"allowed host", "GET", "/api/conversations", ``, map[string]string{"Host": "chat.internal:" + port}, 200, ""},
		{"localhost", "GET", "/api/conversations", ``, map[string]string{"Host": "localhost:" + port}, 200, ""},
	}
	for _, c := range cases {
		status, code, body := e.send(t, c.method, c.path, c.body, c.headers)
		if status != c.want || code != c.code {
			t.Errorf("%s: %s %s = %d %s, want %d %s", c.name, c.method, c.path, status, body, c.want, c.code)
		}
	}
	if n := e.conversationCount(t); n != 0 {
		t.Errorf("%d conversations created by refused requests", n)
	}
	// The page's own request: same origin, JSON.
	status, _, body := e.send(t, "POST", "/api/conversations", `{}`,
		map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"})
	if status != 201 {
		t.Errorf("same-origin JSON create = %d %s", status, body)
	}
}

// TestServeProcessBoundsSlowBodies runs `toolport serve` with a token and a
// 1 s body timeout, and opens connections that send their body one byte at a
// time: authenticated ones are cut at the bound with 408; unauthenticated ones
// get 401 at once, with their connection closed, however many there are.
func TestServeProcessBoundsSlowBodies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolport binary")
	}
	const (
		bound  = time.Second
		slack  = 2 * time.Second
		unauth = 150
		authed = 30
	)
	bin := buildToolport(t)
	dir := t.TempDir()
	environ := testexec.Env(t, map[string]string{
		"TOOLPORT_DATABASE_URL": filepath.Join(dir, "chat.db"),
		"TOOLPORT_API_TOKEN":    "s3cret-token",
	})
	cmd, base := startServe(t, bin, environ, "--body-timeout", bound.String())
	head := func(auth string) string {
		return "POST /api/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + auth +
			"Content-Length: 100000\r\n\r\n{"
	}
	type outcome struct {
		status string
		closed bool
		took   time.Duration
	}
	run := func(n int, auth string) []outcome {
		out := make([]outcome, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				c := rawConn(t, base, head(auth))
				stop := make(chan struct{})
				go trickle(c, 200*time.Millisecond, stop)
				start := time.Now()
				status, closed := readUntilClosed(t, c, bound+slack)
				close(stop)
				out[i] = outcome{status, closed, time.Since(start)}
			})
		}
		wg.Wait()
		return out
	}

	var slowest time.Duration
	for i, o := range run(unauth, "") {
		if !strings.Contains(o.status, "401") || !o.closed {
			t.Errorf("unauthenticated slow body %d: %q, closed %v after %s; want 401 and closed", i, o.status, o.closed, o.took)
		}
		slowest = max(slowest, o.took)
	}
	t.Logf("%d unauthenticated slow bodies: all answered and closed within %s", unauth, slowest.Round(time.Millisecond))

	slowest = 0
	for i, o := range run(authed, "Authorization: Bearer s3cret-token\r\n") {
		if !strings.Contains(o.status, "408") || !o.closed {
			t.Errorf("authenticated slow body %d: %q, closed %v after %s; want 408 and closed near %s", i, o.status, o.closed, o.took, bound)
		}
		slowest = max(slowest, o.took)
	}
	t.Logf("%d authenticated slow bodies: cut within %s (bound %s)", authed, slowest.Round(time.Millisecond), bound)

	// The server holds no connection from them: its sockets fall back to
	// the listener's and a few (on Linux, where /proc shows them).
	fdDir := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/fd"
	if _, err := os.Stat(fdDir); err != nil {
		return
	}
	sockets := func() int {
		entries, _ := os.ReadDir(fdDir)
		n := 0
		for _, en := range entries {
			if l, err := os.Readlink(filepath.Join(fdDir, en.Name())); err == nil && strings.HasPrefix(l, "socket:") {
				n++
			}
		}
		return n
	}
	poll(slack, func() bool { return sockets() <= 10 })
	if n := sockets(); n > 10 {
		t.Errorf("the server still holds %d sockets after %d slow connections ended", n, unauth+authed)
	}
}
