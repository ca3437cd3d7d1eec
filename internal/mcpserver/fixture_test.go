package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

// The test registry: two packs of small tools that stand in for the real ones.
//
//	alpha: echo (cheap), search (constrained input)
//	beta:  slow (progress, honours ctx), flaky (always RATE_LIMIT)

type echoIn struct {
	Text string `json:"text" jsonschema:"What to echo" schema:"minLength=1,maxLength=200"`
}

type echoOut struct {
	Text   string `json:"text"`
	Length int    `json:"length"`
}

func (o echoOut) Summary() string { return fmt.Sprintf("echoed %d bytes", o.Length) }

type searchIn struct {
	Query string `json:"query" jsonschema:"The search query" schema:"minLength=2"`
	Count int    `json:"count,omitempty" jsonschema:"Number of results (1-20)" schema:"minimum=1,maximum=20,default=5"`
	Sort  string `json:"sort,omitempty" schema:"enum=asc|desc,default=asc"`
}

type searchOut struct {
	Results []string `json:"results"`
	Count   int      `json:"count"`
}

func (o searchOut) Summary() string { return fmt.Sprintf("%d results", o.Count) }

type slowIn struct {
	Steps int  `json:"steps,omitempty" jsonschema:"Progress steps to report" schema:"minimum=1,maximum=100,default=3"`
	Hang  bool `json:"hang,omitempty" jsonschema:"Wait for cancellation after the steps"`
}

type slowOut struct {
	Steps int `json:"steps"`
}

func (o slowOut) Summary() string { return fmt.Sprintf("%d steps", o.Steps) }

type flakyIn struct{}

type flakyOut struct {
	OK bool `json:"ok"`
}

func (flakyOut) Summary() string { return "ok" }

// fixture is a registry of test tools plus hooks to observe the slow one.
type fixture struct {
	reg *tool.Registry
	// started receives when a hanging slow call has reported its steps;
	// stopped receives the error the slow tool saw from its context.
	started chan struct{}
	stopped chan error
	// release ends a hanging slow call that was never canceled, so that a
	// failing test does not hang its servers' shutdown.
	release chan struct{}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{started: make(chan struct{}, 1), stopped: make(chan error, 1), release: make(chan struct{})}
	f.reg = tool.NewRegistry(tool.WithRetryDelay(0))
	tools := []*tool.Tool{
		tool.Must(tool.New(tool.Spec{Name: "echo", Title: "Echo", Description: "Echoes the text back.", Pack: "alpha",
			Annotations: tool.Annotations{ReadOnly: true, Idempotent: true}},
			func(ctx context.Context, in echoIn) (echoOut, error) {
				return echoOut{Text: in.Text, Length: len(in.Text)}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "search", Title: "Search", Description: "Searches nothing in particular.", Pack: "alpha",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true}},
			func(ctx context.Context, in searchIn) (searchOut, error) {
				out := searchOut{Results: []string{}}
				for i := range in.Count {
					out.Results = append(out.Results, fmt.Sprintf("%s #%d (%s)", in.Query, i+1, in.Sort))
				}
				out.Count = len(out.Results)
				return out, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "slow", Description: "Reports progress, then optionally waits to be canceled.", Pack: "beta",
			Annotations: tool.Annotations{Destructive: true}},
			func(ctx context.Context, in slowIn) (slowOut, error) {
				for i := range in.Steps {
					p := tool.Progress{Done: float64(i + 1), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i+1)}
					tool.ReportProgress(ctx, p)
					tool.ReportProgress(ctx, p) // a report that does not advance: MCP forbids sending it
				}
				if in.Hang {
					f.started <- struct{}{}
					select {
					case <-ctx.Done():
						f.stopped <- ctx.Err()
						return slowOut{}, ctx.Err()
					case <-f.release:
						return slowOut{}, tool.Errorf(tool.CodeInternal, "released without cancellation")
					}
				}
				return slowOut{Steps: in.Steps}, nil
			})),
		tool.Must(tool.New(tool.Spec{Name: "flaky", Description: "Always hits a rate limit.", Pack: "beta",
			Annotations: tool.Annotations{ReadOnly: true, OpenWorld: true}},
			func(ctx context.Context, in flakyIn) (flakyOut, error) {
				return flakyOut{}, tool.Errorf(tool.CodeRateLimit, "Rate limit exceeded: 2 requests per second")
			})),
	}
	if err := f.reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	return f
}

// newServer builds the MCP server for the fixture.
func (f *fixture) newServer(t testing.TB, opts mcpserver.Options) *mcp.Server {
	t.Helper()
	srv, err := mcpserver.New(f.reg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return srv
}

// A transport connects a test client to a server.
type transport struct {
	name string
	// version is the protocol revision the client asks for ("" = the SDK's newest).
	version string
	dial    func(t testing.TB, srv *mcp.Server) mcp.Transport
}

var transports = []transport{
	{name: "stdio", dial: dialStdio},
	{name: "http", dial: dialHTTP},
	{name: "http-2025-11-25", version: "2025-11-25", dial: dialHTTP},
	{name: "http-2025-06-18", version: "2025-06-18", dial: dialHTTP},
}

// dialStdio runs the server with RunStdio over a pair of pipes, as a spawned
// process would, and checks when the test ends that everything the server
// wrote to "stdout" was a JSON-RPC message.
func dialStdio(t testing.TB, srv *mcp.Server) mcp.Transport {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	rec := &lineRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.RunStdio(ctx, srv, serverIn, io.MultiWriter(serverOut, rec)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunStdio: %v", err)
		}
		serverOut.Close()
		rec.check(t)
	})
	return &mcp.IOTransport{Reader: clientIn, Writer: clientOut}
}

// lineRecorder keeps what the server wrote to stdout.
type lineRecorder struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (r *lineRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *lineRecorder) check(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	out := r.buf.String()
	r.mu.Unlock()
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout carried a line that is not a JSON-RPC message: %.200q", line)
		}
	}
}

func dialHTTP(t testing.TB, srv *mcp.Server) mcp.Transport {
	t.Helper()
	hs := httptest.NewServer(mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{}))
	t.Cleanup(hs.Close)
	return &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: hs.Client(), MaxRetries: -1}
}

// connect opens a client session over tr.
func connect(t testing.TB, tr transport, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "v0"}, opts)
	cs, err := client.Connect(context.Background(), tr.dial(t, srv), &mcp.ClientSessionOptions{ProtocolVersion: tr.version})
	if err != nil {
		t.Fatalf("connect over %s: %v", tr.name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// compile compiles a schema as a JSON Schema (2020-12) with an independent
// implementation.
func compile(t testing.TB, name string, schema any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("%s: marshal schema: %v", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: schema is not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: not a valid JSON Schema: %v\n%s", name, err, raw)
	}
	return s
}

// jsonValue re-decodes v (a map, a RawMessage…) for schema validation.
func jsonValue(t testing.TB, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	val, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return val
}

// texts returns the text contents of a result.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}
