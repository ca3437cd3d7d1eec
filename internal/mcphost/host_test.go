package mcphost_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

// The tools of the Toolport server attached over HTTP.
type echoIn struct {
	Text string `json:"text" jsonschema:"What to echo"`
}
type echoOut struct {
	Echo string `json:"echo"`
}

func (o echoOut) Summary() string { return "echoed " + o.Echo }

func toolportServer(t testing.TB, token string) *httptest.Server {
	t.Helper()
	reg := tool.NewRegistry()
	echo := func(_ context.Context, in echoIn) (echoOut, error) { return echoOut{Echo: in.Text}, nil }
	if err := reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "echo", Title: "Echo", Description: "Echoes its text", Pack: "web",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: false}}, echo)),
		tool.Must(tool.New(tool.Spec{Name: "post", Description: "Posts its text somewhere", Pack: "web",
			Annotations: tool.Annotations{OpenWorld: true}}, echo)),
	); err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(reg, mcpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.RequireBearer(token, mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{})))
	t.Cleanup(ts.Close)
	return ts
}

func attach(t *testing.T, reg *tool.Registry, servers []mcphost.Server, opts mcphost.Options) *mcphost.Host {
	t.Helper()
	h, err := mcphost.Attach(t.Context(), reg, servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func TestToolportOverHTTP(t *testing.T) {
	const token = "s3cret-token-value"
	ts := toolportServer(t, token)
	reg := tool.NewRegistry(tool.WithSecrets(token))
	h := attach(t, reg, []mcphost.Server{{Name: "tp", URL: ts.URL, Token: token}}, mcphost.Options{})

	if st := h.Status(); len(st) != 1 || !st[0].Connected || strings.Join(st[0].Tools, ",") != "tp__echo,tp__post" {
		t.Fatalf("status = %+v", st)
	}
	echo, ok := reg.Lookup("tp__echo")
	if !ok {
		t.Fatal("tp__echo not registered")
	}
	if a := echo.Spec().Annotations; !a.ReadOnly || a.UserAccount || a.OpenWorld {
		t.Errorf("echo's annotations = %+v; want read-only, closed world, not acting for the user", a)
	}
	post, _ := reg.Lookup("tp__post")
	if a := post.Spec().Annotations; a.ReadOnly || !a.UserAccount || !a.OpenWorld {
		t.Errorf("post's annotations = %+v; want not read-only, so acting for the user", a)
	}
	if echo.Spec().Pack != mcphost.Pack || !strings.HasPrefix(echo.Spec().Title, "tp: ") {
		t.Errorf("spec = %+v", echo.Spec())
	}

	res := reg.Call(t.Context(), "tp__echo", json.RawMessage(`{"text":"shalom"}`))
	if !res.OK() {
		t.Fatalf("call failed: %s", res.JSON)
	}
	out := res.Value.(*mcphost.Output)
	if out.Server != "tp" || out.Structured["echo"] != "shalom" || len(out.Content) == 0 || out.Content[0].Text != "echoed shalom" {
		t.Errorf("output = %+v", out)
	}
	if res.Summary != "echoed shalom" {
		t.Errorf("summary = %q", res.Summary)
	}
	// A server that echoes the token back cannot pass it on: the host's
	// registry scrubs it like any secret.
	res = reg.Call(t.Context(), "tp__echo", json.RawMessage(`{"text":"`+token+`"}`))
	if !res.OK() || strings.Contains(string(res.JSON), token) || !strings.Contains(string(res.JSON), "[REDACTED]") {
		t.Fatalf("the token came back: %s", res.JSON)
	}
	// The published schema is checked here, before the server is called.
	res = reg.Call(t.Context(), "tp__echo", json.RawMessage(`{"text":5}`))
	if res.OK() || res.Err.Code != tool.CodeValidation || !strings.Contains(res.Err.Message, "text: expected string") {
		t.Fatalf("bad arguments: %s", res.JSON)
	}
}

func TestWrongTokenIsAClearFailureNotATool(t *testing.T) {
	ts := toolportServer(t, "the-right-token")
	reg := tool.NewRegistry()
	h := attach(t, reg, []mcphost.Server{{Name: "tp", URL: ts.URL, Token: "the-wrong-token"}}, mcphost.Options{})
	st := h.Status()
	if st[0].Connected || st[0].Error == "" || len(reg.Tools()) != 0 {
		t.Fatalf("status = %+v, tools = %d", st, len(reg.Tools()))
	}
	if strings.Contains(st[0].Error, "the-wrong-token") {
		t.Errorf("the token is in the status: %s", st[0].Error)
	}
}

// sdkServer is an MCP server of the Go SDK with tools the tests control.
type sdkServer struct {
	srv     *mcp.Server
	ts      *httptest.Server
	started chan struct{} // a call of "hang" has started
	release chan struct{}
	once    sync.Once
}

// kill cuts the connections and ends the calls running on the server, as
// a server's death does (the SDK's server keeps a handler running when
// only its connection is cut).
func (s *sdkServer) kill() {
	s.ts.CloseClientConnections()
	s.once.Do(func() { close(s.release) })
}

func newSDKServer(t *testing.T) *sdkServer {
	t.Helper()
	s := &sdkServer{started: make(chan struct{}, 4), release: make(chan struct{})}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "fake"}, nil)
	s.srv.AddTool(&mcp.Tool{Name: "ok", Description: "answers", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine\nsecond line"}},
				StructuredContent: []any{1, 2}}, nil
		})
	s.srv.AddTool(&mcp.Tool{Name: "hang", Description: "waits until released or canceled", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.started <- struct{}{}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.release:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	s.srv.AddTool(&mcp.Tool{Name: "fails", Description: "fails", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}, nil
		})
	s.ts = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil))
	t.Cleanup(func() {
		s.kill()
		s.ts.Close()
	})
	return s
}

func TestResultsAndFailuresOfAnAttachedServer(t *testing.T) {
	s := newSDKServer(t)
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	attach(t, reg, []mcphost.Server{{Name: "fake", URL: s.ts.URL, Timeout: 200 * time.Millisecond}}, mcphost.Options{})

	res := reg.Call(t.Context(), "fake__ok", nil)
	if !res.OK() || res.Summary != "fine" || !strings.Contains(string(res.JSON), `"structuredContent":{"value":[1,2]}`) {
		t.Fatalf("ok: %s", res.JSON)
	}
	res = reg.Call(t.Context(), "fake__fails", nil)
	if res.OK() || res.Err.Code != tool.CodeAPI || !strings.Contains(res.Err.Message, "disk full") || res.Err.Retryable {
		t.Fatalf("fails: %s", res.JSON)
	}
	// A slow call runs out of the server's time, and the server stays usable.
	res = reg.Call(t.Context(), "fake__hang", nil)
	if res.OK() || res.Err.Code != tool.CodeTimeout || !strings.Contains(res.Err.Message, `"fake" did not answer`) {
		t.Fatalf("hang: %s", res.JSON)
	}
	if res := reg.Call(t.Context(), "fake__ok", nil); !res.OK() {
		t.Fatalf("after a timeout: %s", res.JSON)
	}
}

func TestServerDyingMidCallFailsOnlyThatCall(t *testing.T) {
	s := newSDKServer(t)
	other := newSDKServer(t)
	reg := tool.NewRegistry(tool.WithRetryDelay(0))
	attach(t, reg, []mcphost.Server{{Name: "dies", URL: s.ts.URL}, {Name: "lives", URL: other.ts.URL}},
		mcphost.Options{MinBackoff: time.Hour})

	done := make(chan *tool.Result)
	go func() { done <- reg.Call(context.Background(), "dies__hang", nil) }()
	<-s.started
	start := time.Now()
	s.kill() // the server goes away while the call runs
	res := <-done
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the call failed %s after its server died", d)
	}
	if res.OK() || res.Err.Code != tool.CodeNetwork || res.Retried || !strings.Contains(res.Err.Message, "connection was lost") {
		t.Fatalf("the call whose server died: %s", res.JSON)
	}
	if res := reg.Call(t.Context(), "lives__ok", nil); !res.OK() {
		t.Fatalf("the other server's call: %s", res.JSON)
	}
	// The next call connects again (the server is back: only its
	// connections were cut).
	if res := reg.Call(t.Context(), "dies__ok", nil); !res.OK() {
		t.Fatalf("after reconnecting: %s", res.JSON)
	}
}

func TestDownServerIsTriedAgainAfterBackoff(t *testing.T) {
	var attempts atomic.Int32
	down := true
	s := newSDKServer(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down {
			attempts.Add(1)
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		r.URL.Host, r.URL.Scheme = strings.TrimPrefix(s.ts.URL, "http://"), "http"
		resp, err := http.DefaultTransport.RoundTrip(r.Clone(r.Context()))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() { front.CloseClientConnections(); front.Close() })

	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	reg := tool.NewRegistry()
	h := attach(t, reg, []mcphost.Server{{Name: "flaky", URL: front.URL}},
		mcphost.Options{Now: func() time.Time { return now }, MinBackoff: 10 * time.Second, MaxBackoff: 40 * time.Second})
	if st := h.Status()[0]; st.Connected || !strings.Contains(st.Error, "503") && !strings.Contains(st.Error, "Unavailable") {
		t.Fatalf("status = %+v", st)
	}
	first := attempts.Load()
	h.Refresh(t.Context())
	if attempts.Load() != first {
		t.Fatal("a server was tried again before its backoff passed")
	}
	now = now.Add(10 * time.Second)
	h.Refresh(t.Context()) // the second failure doubles the backoff
	if attempts.Load() == first {
		t.Fatal("the server was not tried again after its backoff")
	}
	now = now.Add(10 * time.Second)
	second := attempts.Load()
	h.Refresh(t.Context())
	if attempts.Load() != second {
		t.Fatal("the backoff did not double")
	}
	now = now.Add(10 * time.Second)
	down = false
	h.Refresh(t.Context())
	if st := h.Status()[0]; !st.Connected || len(st.Tools) != 3 {
		t.Fatalf("after the server came back: %+v", st)
	}
}

func TestListChangedUpdatesTheRegistry(t *testing.T) {
	s := newSDKServer(t)
	changed := make(chan string, 4)
	reg := tool.NewRegistry()
	attach(t, reg, []mcphost.Server{{Name: "fake", URL: s.ts.URL}}, mcphost.Options{OnChange: func(name string) { changed <- name }})
	<-changed // the first listing
	s.srv.AddTool(&mcp.Tool{Name: "added", Description: "new", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new tool"}}}, nil
		})
	s.srv.RemoveTools("fails")
	for {
		<-changed
		_, added := reg.Lookup("fake__added")
		_, removed := reg.Lookup("fake__fails")
		if added && !removed {
			break
		}
	}
	if res := reg.Call(t.Context(), "fake__added", nil); !res.OK() || res.Summary != "new tool" {
		t.Fatalf("the added tool: %s", res.JSON)
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct{ server, tool, want string }{
		{"fs", "read_file", "fs__read_file"},
		{"everything", "get-sum", "everything__get-sum"},
	}
	for _, tc := range tests {
		if got := mcphost.ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q; want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	valid := func(s string) bool {
		if len(s) < 1 || len(s) > 64 {
			return false
		}
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return false
			}
		}
		return true
	}
	a, b := mcphost.ToolName("s", "files.read"), mcphost.ToolName("s", "files/read")
	c, d := mcphost.ToolName("s", long+"a"), mcphost.ToolName("s", long+"b")
	for _, n := range []string{a, b, c, d, mcphost.ToolName("s", "שלום")} {
		if !valid(n) {
			t.Errorf("%q breaks ^[a-zA-Z0-9_-]{1,64}$", n)
		}
	}
	if a == b || c == d {
		t.Errorf("distinct tools got one name: %q %q %q %q", a, b, c, d)
	}
}

func TestServerValidate(t *testing.T) {
	tests := []struct {
		name string
		s    mcphost.Server
		want string
	}{
		{"stdio", mcphost.Server{Name: "fs", Command: "npx"}, ""},
		{"http", mcphost.Server{Name: "r", URL: "https://example.org/mcp", Token: "t"}, ""},
		{"bad name", mcphost.Server{Name: "a b", Command: "x"}, "name"},
		{"underscore", mcphost.Server{Name: "a_b", Command: "x"}, "name"},
		{"neither", mcphost.Server{Name: "a"}, "needs a command or a url"},
		{"both", mcphost.Server{Name: "a", Command: "x", URL: "http://h/"}, "both"},
		{"scheme", mcphost.Server{Name: "a", URL: "file:///etc/passwd"}, "http or https"},
		{"credentials in url", mcphost.Server{Name: "a", URL: "https://u:p@h/mcp"}, "credentials"},
		{"token without url", mcphost.Server{Name: "a", Command: "x", Token: "t"}, "token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v; want %q", err, tc.want)
			}
		})
	}
	if _, err := mcphost.Attach(t.Context(), tool.NewRegistry(), []mcphost.Server{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}, mcphost.Options{}); err == nil {
		t.Error("two servers of one name were accepted")
	}
}

func TestCloseUnregistersTheTools(t *testing.T) {
	s := newSDKServer(t)
	reg := tool.NewRegistry()
	h, err := mcphost.Attach(t.Context(), reg, []mcphost.Server{{Name: "fake", URL: s.ts.URL}}, mcphost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Tools()) != 3 {
		t.Fatalf("%d tools registered; want 3", len(reg.Tools()))
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Tools()); n != 0 || h.Status()[0].Connected {
		t.Fatalf("after Close: %d tools, %+v", n, h.Status())
	}
	if res := reg.Call(t.Context(), "fake__ok", nil); res.OK() || res.Err.Code != tool.CodeUnknownTool {
		t.Fatalf("a call after Close: %s", res.JSON)
	}
	h.Refresh(t.Context()) // a closed host connects nothing
	if len(reg.Tools()) != 0 {
		t.Fatal("Refresh after Close registered tools again")
	}
}

// A server down at start-up joins when it answers: KeepConnecting tries it
// at each tick (the backoff by the injected clock), and OnChange tells the
// surfaces (`toolport mcp` sends tools/list_changed).
func TestKeepConnectingJoinsALateServer(t *testing.T) {
	s := newSDKServer(t)
	var up atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		s.ts.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	// OnChange hands over the status the surfaces would read on the news:
	// it must already show the server connected.
	var host atomic.Pointer[mcphost.Host]
	changed := make(chan mcphost.Status, 4)
	reg := tool.NewRegistry()
	h := attach(t, reg, []mcphost.Server{{Name: "late", URL: front.URL}}, mcphost.Options{
		Now:        func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		MinBackoff: time.Minute, OnChange: func(string) { changed <- host.Load().Status()[0] }})
	host.Store(h)
	if st := h.Status()[0]; st.Connected {
		t.Fatalf("connected to a server that is down: %+v", st)
	}
	ticks := make(chan time.Time)
	done := make(chan struct{})
	go func() { defer close(done); h.KeepConnecting(t.Context(), ticks) }()
	up.Store(true)
	mu.Lock()
	now = now.Add(time.Minute) // its backoff has passed
	mu.Unlock()
	ticks <- now
	if st := <-changed; !st.Connected || st.Error != "" || len(st.Tools) == 0 {
		t.Fatalf("status on OnChange after the server came up: %+v", st)
	}
	h.Close()
	<-done // KeepConnecting ends with the host
}
