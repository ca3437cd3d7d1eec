package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
)

// send makes a request with the given headers ("Host" sets the Host) and
// returns the status, the error code of a JSON error and the body.
func (e *env) send(t testing.TB, method, path, body string, headers map[string]string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e2 struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e2)
	return res.StatusCode, e2.Error.Code, b
}

func (e *env) conversationCount(t testing.TB) int {
	t.Helper()
	status, body := e.do(t, "GET", "/api/conversations?limit=100", "")
	if status != 200 {
		t.Fatalf("list conversations: %d %s", status, body)
	}
	var page struct{ Conversations []any }
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	return len(page.Conversations)
}

// A page on another name that resolves to 127.0.0.1 (DNS rebinding) reaches
// the listener, but its Host is refused on every route.
func TestHostAllowList(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *server.Config) { c.AllowedHosts = []string{"chat.example.org:443"} }})
	port := e.url[strings.LastIndex(e.url, ":")+1:]
	cases := []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LocalHost.:" + port, 200},
		{"localhost", 200},
		{"[::1]:" + port, 200},
		{"127.0.0.2:9", 200},
		{"chat.example.org", 200},        // configured; the port is ignored
		{"Chat.Example.Org:8080", 200},   // names are case-insensitive
		{"rebind.attacker.example", 403}, // DNS rebinding
		{"rebind.attacker.example:" + port, 403},
		{"localhost.attacker.example", 403},
		{"example.org", 403},
		{"10.0.0.5:" + port, 403},
	}
	for _, path := range []string{"/api/conversations", "/api/info", "/healthz", "/", "/api/nope"} {
		for _, c := range cases {
			status, code, body := e.send(t, "GET", path, "", map[string]string{"Host": c.host})
			want := c.want
			if path == "/api/nope" && want == 200 {
				want = 404
			}
			if status != want {
				t.Errorf("GET %s with Host %q = %d %s, want %d", path, c.host, status, body, want)
			}
			if want == 403 && code != "FORBIDDEN_HOST" {
				t.Errorf("GET %s with Host %q: error %s, want FORBIDDEN_HOST", path, c.host, body)
			}
		}
	}
	// State-changing routes and MCP too, before anything runs.
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/conversations"}, {"POST", "/api/tools/lookup"}, {"POST", "/mcp"}, {"GET", "/metrics"},
	} {
		status, code, _ := e.send(t, r.method, r.path, `{}`, map[string]string{"Host": "rebind.attacker.example", "Content-Type": "application/json"})
		if status != 403 || code != "FORBIDDEN_HOST" {
			t.Errorf("%s %s with a foreign Host = %d %s, want 403 FORBIDDEN_HOST", r.method, r.path, status, code)
		}
	}
	if n := e.conversationCount(t); n != 0 {
		t.Errorf("%d conversations created through a foreign Host", n)
	}
}

// A web page can send text/plain, a form or an empty POST to any origin
// without a CORS preflight; none of them may change anything here.
func TestCrossOriginRequestsChangeNothing(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *server.Config) { c.AllowedOrigins = []string{"https://trusted.example"} }})
	conv := e.newConversation(t)
	self := e.url
	json := "application/json"
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		want                     int
		code                     string
	}{
		{"text/plain body", "POST", "/api/conversations", `{"title":"csrf"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"form body", "POST", "/api/conversations", `title=csrf`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"multipart body", "POST", "/api/tools/lookup", "--b\r\n\r\nx\r\n--b--", map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"body without a type", "POST", "/api/conversations", `{"title":"csrf"}`, nil, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"empty text/plain", "POST", "/api/conversations", ``, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"text/plain chat turn", "POST", "/api/conversations/" + conv + "/messages", `{"content":"hi"}`, map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"text/plain tool call", "POST", "/api/tools/lookup", `{"query":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"text/plain MCP", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"cross-site fetch", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"same-site fetch", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"}, 403, "CROSS_ORIGIN"},
		{"empty cross-site POST", "POST", "/api/conversations", ``, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"old browser, foreign Origin", "POST", "/api/conversations", ``, map[string]string{"Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"opaque origin", "POST", "/api/conversations", ``, map[string]string{"Origin": "null"}, 403, "CROSS_ORIGIN"},
		{"cross-site delete", "DELETE", "/api/conversations/" + conv, ``, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		{"cross-site MCP", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "CROSS_ORIGIN"},
		// What is allowed: the page itself, tools without a browser, trusted origins.
		{"the page", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "same-origin", "Origin": self}, 201, ""},
		{"old browser, same origin", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": self}, 201, ""},
		{"typed in the address bar", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "none"}, 201, ""},
		{"curl", "POST", "/api/conversations", `{"title":"curl"}`, map[string]string{"Content-Type": json}, 201, ""},
		{"curl, empty body", "POST", "/api/conversations", ``, nil, 201, ""},
		{"trusted origin", "POST", "/api/conversations", `{}`, map[string]string{"Content-Type": json, "Sec-Fetch-Site": "cross-site", "Origin": "https://trusted.example"}, 201, ""},
		{"cross-site read", "GET", "/api/conversations/" + conv, ``, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 200, ""},
		{"GET with a text body", "GET", "/api/conversations/" + conv, `x`, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
	}
	created := 0
	for _, c := range cases {
		status, code, body := e.send(t, c.method, c.path, c.body, c.headers)
		if status != c.want || code != c.code {
			t.Errorf("%s: %s %s = %d %s, want %d %s", c.name, c.method, c.path, status, body, c.want, c.code)
		}
		if status == 201 {
			created++
		}
	}
	if n := e.conversationCount(t); n != 1+created {
		t.Errorf("%d conversations, want %d: a refused request created one", n, 1+created)
	}
	c, err := e.db.GetConversation(context.Background(), conv)
	if err != nil || len(c.Messages) != 0 {
		t.Errorf("conversation after refused requests: %v, %d messages", err, len(c.Messages))
	}
}

// rawConn opens a connection and writes head (request line and headers).
func rawConn(t testing.TB, base, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle writes one body byte every interval until stop is closed or a
// write fails.
func trickle(c net.Conn, interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
		}
	}
}

// readUntilClosed reads the response and then waits for the server to close
// the connection, for up to limit. It returns the status line and whether the
// server closed the connection in time.
func readUntilClosed(t testing.TB, c net.Conn, limit time.Duration) (string, bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	r := bufio.NewReader(c)
	status, _ := r.ReadString('\n')
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	timedOut := errors.As(err, &ne) && ne.Timeout()
	return strings.TrimSpace(status), !timedOut
}

// A client that sends its body one byte at a time is cut off after
// BodyReadTimeout with 408, and its connection closed.
func TestSlowBodyIsCutOff(t *testing.T) {
	const bound = 300 * time.Millisecond
	e := newEnv(t, envOptions{config: func(c *server.Config) { c.BodyReadTimeout = bound }})
	for _, path := range []string{"/api/conversations", "/api/tools/lookup", "/mcp", "/healthz", "/api/nope"} {
		c := rawConn(t, e.url, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		stop := make(chan struct{})
		go trickle(c, 50*time.Millisecond, stop)
		start := time.Now()
		status, closed := readUntilClosed(t, c, bound+3*time.Second)
		close(stop)
		if !closed {
			t.Errorf("POST %s: a slow body held the connection open for %s (status %q)", path, time.Since(start).Round(time.Millisecond), status)
			continue
		}
		// Routes that read bodies answer 408; the others answer at once and
		// the server stops draining the body at the deadline.
		if strings.HasPrefix(path, "/api/conversations") || path == "/api/tools/lookup" || path == "/mcp" {
			if !strings.Contains(status, "408") {
				t.Errorf("POST %s with a slow body: %q, want 408", path, status)
			}
		}
		t.Logf("POST %s: %q, closed after %s", path, status, time.Since(start).Round(time.Millisecond))
	}
}

// A request refused for its token is answered at once and its connection
// closed: the server never reads (nor waits for) its body.
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	e := newEnv(t, envOptions{token: "s3cret-token"})
	for _, path := range []string{"/api/conversations", "/mcp", "/api/tools/lookup"} {
		c := rawConn(t, e.url, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		stop := make(chan struct{})
		go trickle(c, 50*time.Millisecond, stop)
		start := time.Now()
		// The default body deadline is 30 s: closing within 2 s shows the
		// body is not waited for.
		status, closed := readUntilClosed(t, c, 2*time.Second)
		close(stop)
		if !strings.Contains(status, "401") || !closed {
			t.Errorf("POST %s without a token: %q, closed %v after %s; want 401 and the connection closed", path, status, closed, time.Since(start).Round(time.Millisecond))
		}
	}
	// An ordinary client sending a wrong token with a large body at full
	// speed still reads its 401.
	e.token = "wrong"
	for range 5 {
		status, code, body := e.send(t, "POST", "/api/tools/lookup", `{"query":"`+strings.Repeat("a", 200_000)+`"}`,
			map[string]string{"Content-Type": "application/json"})
		if status != 401 || code != "UNAUTHORIZED" {
			t.Errorf("large body with a wrong token = %d %s", status, body)
		}
	}
}

// The body deadline is lifted once the body is in: a chat stream that runs
// much longer than BodyReadTimeout is not cut.
func TestChatStreamOutlivesBodyTimeout(t *testing.T) {
	const bound = 100 * time.Millisecond
	e := newEnv(t, envOptions{heartbeat: time.Hour, config: func(c *server.Config) { c.BodyReadTimeout = bound }, turns: []servertest.Turn{
		{Match: "slow", Events: []servertest.Event{servertest.Text("Thinking."), servertest.Pause(6 * bound), servertest.Text("Done.")}},
	}})
	conv := e.newConversation(t)
	s := e.chat(t, context.Background(), conv, "slow answer", nil)
	if end := s.first("message_end"); end == nil || end["stopReason"] != "end_turn" {
		t.Errorf("stream longer than the body timeout was cut: %s", s.raw)
	}
}

func TestMetricsNeedTheToken(t *testing.T) {
	e := newEnv(t, envOptions{token: "s3cret-token"})
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Bearer s3cret-token", 200}} {
		req, _ := http.NewRequest("GET", e.url+"/metrics", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET /metrics with %q = %d, want %d", c.auth, res.StatusCode, c.want)
		}
		if c.want == 401 && strings.Contains(string(b), "toolport_") {
			t.Errorf("metrics leaked without the token")
		}
	}
}

// With a metrics listener, /metrics moves there (open, Host-checked) and the
// main address no longer serves it.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{token: "s3cret-token", config: func(c *server.Config) { c.MetricsListener = ln }})
	if _, body := e.do(t, "GET", "/metrics", ""); strings.Contains(string(body), "toolport_") {
		t.Errorf("the main address still serves metrics: %.200s", body)
	}
	m := httptest.NewUnstartedServer(e.srv.MetricsHandler())
	m.Listener.Close()
	m.Listener = ln
	m.Start()
	defer m.Close()
	res, err := http.Get(m.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "toolport_chat_streams_open") {
		t.Errorf("GET /metrics on the metrics address = %d %.200s", res.StatusCode, b)
	}
	req, _ := http.NewRequest("GET", m.URL+"/metrics", nil)
	req.Host = "rebind.attacker.example"
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Errorf("metrics with a foreign Host = %d, want 403", res.StatusCode)
	}
	for _, p := range []string{"/api/info", "/mcp", "/"} {
		res, err := http.Get(m.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 && res.StatusCode != 405 {
			t.Errorf("GET %s on the metrics address = %d, want 404", p, res.StatusCode)
		}
	}
}

func TestNewRefusesBadAllowLists(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []server.Config{
		{AllowedHosts: []string{"*.example.org"}},
		{AllowedHosts: []string{""}},
		{AllowedHosts: []string{"http://example.org/"}},
		{AllowedOrigins: []string{"example.org"}},
		{AllowedOrigins: []string{"https://example.org/path"}},
	} {
		c.Store, c.Registry = e.db, testRegistry(t)
		parts, err := server.Wire(c, server.Wiring{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := server.New(c, parts); err == nil {
			t.Errorf("New accepted hosts %q origins %q", c.AllowedHosts, c.AllowedOrigins)
		}
	}
}
