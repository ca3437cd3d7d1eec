package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/agent"
	"github.com/toolport/toolport/internal/llm"
	"github.com/toolport/toolport/internal/mcphost"
	"github.com/toolport/toolport/internal/server"
	"github.com/toolport/toolport/internal/server/servertest"
	"github.com/toolport/toolport/internal/store/sqlstore"
	"github.com/toolport/toolport/internal/turn"
	"github.com/toolport/toolport/tool"
)

type queryIn struct {
	Query string `json:"query" jsonschema:"what to look up"`
}

type itemsOut struct {
	Items []string `json:"items"`
}

func (o itemsOut) Summary() string { return fmt.Sprintf("%d items", len(o.Items)) }

// testRegistry has "lookup" (succeeds), "flaky" (fails transiently, always)
// and "slow" (runs until canceled).
func testRegistry(t testing.TB, opts ...tool.Option) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry(append([]tool.Option{tool.WithRetryDelay(0)}, opts...)...)
	err := reg.Register(
		tool.Must(tool.New(tool.Spec{Name: "lookup", Description: "Looks things up.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				return itemsOut{Items: []string{in.Query + " 1", in.Query + " 2"}}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "flaky", Description: "Fails transiently.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				return itemsOut{}, tool.Errorf(tool.CodeNetwork, "the upstream is unreachable")
			})),
		tool.Must(tool.New(tool.Spec{Name: "slow", Description: "Runs until canceled.", Pack: "test"},
			func(ctx context.Context, in queryIn) (itemsOut, error) {
				<-ctx.Done()
				return itemsOut{}, ctx.Err()
			})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// env is a chat server on loopback with a scripted model.
type env struct {
	srv   *server.Server
	http  *httptest.Server
	url   string
	db    *sqlstore.DB
	model *servertest.ModelServer
	token string
}

type envOptions struct {
	token     string
	heartbeat time.Duration
	maxBody   int64
	noModel   bool
	turns     []servertest.Turn
	agent     agent.Config
	reg       *tool.Registry
	dsn       string
	// db and model, when set, are shared with another env (a second
	// replica); dsn and turns are then ignored.
	db    *sqlstore.DB
	model *servertest.ModelServer
	// config, when set, adjusts the server's configuration.
	config func(*server.Config)
	// offerAll is server.Wiring.OfferUnconfigured.
	offerAll bool
	// mcpServers are server.Wiring.MCPServers.
	mcpServers []mcphost.Server
	// toolsChanged is server.Wiring.MCPHost.OnChange: called after an
	// attached server's tools were put in the registry and the model's
	// offer follows them.
	toolsChanged func(server string)
	// clock is server.Config.TurnClock (nil: the system clock).
	clock turn.Clock
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	if o.dsn == "" {
		o.dsn = filepath.Join(t.TempDir(), "toolport.db")
	}
	db := o.db
	if db == nil {
		var err error
		if db, err = sqlstore.Open(context.Background(), o.dsn); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	e := &env{db: db, token: o.token}
	e.model = o.model
	if e.model == nil {
		e.model = servertest.NewModelServer(t, o.turns...)
	}
	acfg := o.agent
	acfg.ModelRetryDelay = time.Millisecond
	if !o.noModel && acfg.Provider == nil {
		acfg.Provider = agentWithModel(t, e.model).Provider
	}
	reg := o.reg
	if reg == nil {
		reg = testRegistry(t)
	}
	cfg := server.Config{
		Store: db, Registry: reg, Token: o.token, Version: "test",
		HeartbeatInterval: o.heartbeat, MaxBodyBytes: o.maxBody,
		Web:       http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the page") }),
		TurnClock: o.clock,
	}
	if o.config != nil {
		o.config(&cfg)
	}
	parts, err := server.Wire(cfg, server.Wiring{Agent: acfg, OfferUnconfigured: o.offerAll, MCPServers: o.mcpServers,
		MCPHost: mcphost.Options{OnChange: o.toolsChanged}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv, err = server.New(cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.srv.Close)
	e.http = httptest.NewServer(e.srv.Handler())
	e.url = e.http.URL
	t.Cleanup(e.http.Close)
	return e
}

// do sends a request and returns the status and body.
func (e *env) do(t testing.TB, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (e *env) newConversation(t testing.TB) string {
	t.Helper()
	code, body := e.do(t, "POST", "/api/conversations", "")
	if code != http.StatusCreated {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	var c struct{ ID string }
	json.Unmarshal(body, &c)
	return c.ID
}

// stream is a chat stream as read off the wire.
type stream struct {
	status int
	turnID string // the Toolport-Turn-Id header
	events []map[string]any
	ids    []string // each event's SSE id
	pings  int
	raw    string
}

func (s *stream) types() []string {
	var out []string
	for _, e := range s.events {
		out = append(out, e["type"].(string))
	}
	return out
}

func (s *stream) first(typ string) map[string]any {
	for _, e := range s.events {
		if e["type"] == typ {
			return e
		}
	}
	return nil
}

// chat posts a message and reads the whole SSE stream, checking its framing.
// onEvent, if set, sees each event as it arrives; returning false stops
// reading and closes the connection (the client goes away).
func (e *env) chat(t testing.TB, ctx context.Context, convID, content string, onEvent func(map[string]any) bool) *stream {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"content": content})
	return e.streamRequest(t, ctx, "POST", "/api/conversations/"+convID+"/messages", string(body), onEvent)
}

// streamRequest sends a request answered with a chat stream (a message, a
// regenerate, an edit) and reads it as chat does.
func (e *env) streamRequest(t testing.TB, ctx context.Context, method, path, body string, onEvent func(map[string]any) bool) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, e.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return readStream(t, res, onEvent)
}

// readStream reads an SSE response, checking its framing: every event is
// an id line and a data line.
func readStream(t testing.TB, res *http.Response, onEvent func(map[string]any) bool) *stream {
	t.Helper()
	s := &stream{status: res.StatusCode, turnID: res.Header.Get("Toolport-Turn-Id")}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		s.raw = string(b)
		return s
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q", ct)
	}
	r := bufio.NewReader(res.Body)
	var raw strings.Builder
	for {
		line, err := r.ReadString('\n')
		raw.WriteString(line)
		if err != nil {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			s.ids = append(s.ids, id)
			line, err = r.ReadString('\n')
			raw.WriteString(line)
			if err != nil || !strings.HasPrefix(line, "data: ") {
				t.Errorf("id %q not followed by a data line (got %q, %v)", id, line, err)
				break
			}
			line = strings.TrimSuffix(line, "\n")
		} else if strings.HasPrefix(line, "data: ") {
			t.Errorf("event without an id: %q", line)
		}
		switch {
		case line == "":
			t.Errorf("stray blank line in the stream")
		case line == ": ping":
			s.pings++
		case strings.HasPrefix(line, "data: "):
			var ev map[string]any
			if err := json.Unmarshal([]byte(line[len("data: "):]), &ev); err != nil {
				t.Errorf("event is not JSON: %q", line)
				continue
			}
			s.events = append(s.events, ev)
		default:
			t.Errorf("unexpected line %q", line)
			continue
		}
		// Every event and comment is followed by exactly one blank line.
		if blank, err := r.ReadString('\n'); err != nil || blank != "\n" {
			t.Errorf("frame %q not followed by a blank line (got %q, %v)", line, blank, err)
		}
		raw.WriteString("\n")
		if onEvent != nil && strings.HasPrefix(line, "data: ") && !onEvent(s.events[len(s.events)-1]) {
			break
		}
	}
	s.raw = raw.String()
	return s
}

// waitForProcess asks cond until it holds, failing the test after a
// generous bound (a deadlock guard, not a timing assertion). It is for
// state outside this process, seen only by asking: a replica running as
// another process, the server's sockets in /proc, the PostgreSQL server
// taking a LISTEN session. Waits on this process's own work use its events
// instead (the server's WaitTurns and WaitStreams, a turntest.Clock's
// Advance, the MCP host's OnChange).
func waitForProcess(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !poll(20*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// poll asks cond every few milliseconds until it holds or bound has
// passed, and reports whether it held; see waitForProcess for what it may
// wait on.
func poll(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // another process: nothing to wait on but asking again
	}
	return true
}

// waitTurns waits until no turn runs on e: each one's end and answer are
// in the store.
func (e *env) waitTurns(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if !e.srv.WaitTurns(ctx) {
		t.Fatal("timed out waiting for the server's turns to end")
	}
}

// waitDemoLoad waits until the demo load under way on e has ended.
func (e *env) waitDemoLoad(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if !e.srv.WaitDemoLoad(ctx) {
		t.Fatal("timed out waiting for the demo load to end")
	}
}

var _ sync.Locker

// agentWithModel is an agent configuration with the Anthropic SDK provider
// talking to ms.
func agentWithModel(t testing.TB, ms *servertest.ModelServer) agent.Config {
	t.Helper()
	p, err := llm.NewAnthropic(servertest.ModelName, llm.Options{APIKey: servertest.APIKey, BaseURL: ms.URL})
	if err != nil {
		t.Fatal(err)
	}
	return agent.Config{Provider: p, ModelRetryDelay: time.Millisecond}
}
