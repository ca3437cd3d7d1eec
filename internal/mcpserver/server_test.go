package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolport/toolport/internal/mcpserver"
	"github.com/toolport/toolport/tool"
)

// waitLimit guards channel receives against a hang; it is never an assertion
// on how long anything takes.
const waitLimit = 10 * time.Second

func TestInitializeNegotiatesVersion(t *testing.T) {
	newest := mcp.SupportedProtocolVersions()[0]
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			cs := connect(t, tr, f.newServer(t, mcpserver.Options{Version: "1.2.3"}), nil)
			init := cs.InitializeResult()
			want := tr.version
			if want == "" {
				want = newest // a client asking for the newest revision gets it, on HTTP too
			}
			if init.ProtocolVersion != want {
				t.Errorf("negotiated protocol %q, want %q", init.ProtocolVersion, want)
			}
			if init.Capabilities == nil || init.Capabilities.Tools == nil {
				t.Errorf("server capabilities %+v do not announce tools", init.Capabilities)
			}
			//lint:ignore SA1019 checks that the deprecated capability is not announced
			if init.Capabilities != nil && init.Capabilities.Logging != nil {
				t.Errorf("server announces the logging capability; it never logs through the protocol")
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != "toolport" || init.ServerInfo.Version != "1.2.3" {
				t.Errorf("server info = %+v, want toolport 1.2.3", init.ServerInfo)
			}
		})
	}
}

func TestListToolsPublishesRegistryDefinitions(t *testing.T) {
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	want := map[string]hints{
		"echo":   {readOnly: true, idempotent: true},
		"search": {readOnly: true, openWorld: true},
		"slow":   {destructive: true},
		"flaky":  {readOnly: true, openWorld: true},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			cs := connect(t, tr, f.newServer(t, mcpserver.Options{}), nil)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, got := range res.Tools {
				names = append(names, got.Name)
				rt, ok := f.reg.Lookup(got.Name)
				if !ok {
					t.Errorf("listed tool %q is not in the registry", got.Name)
					continue
				}
				spec := rt.Spec()
				if got.Title != spec.Title || got.Description != spec.Description {
					t.Errorf("%s: title/description = %q/%q, want %q/%q", got.Name, got.Title, got.Description, spec.Title, spec.Description)
				}
				compile(t, got.Name+".input", got.InputSchema)
				compile(t, got.Name+".output", got.OutputSchema)
				if !sameJSON(t, got.InputSchema, rt.InputSchema()) {
					t.Errorf("%s: inputSchema differs from the registry's", got.Name)
				}
				if !sameJSON(t, got.OutputSchema, rt.OutputSchema()) {
					t.Errorf("%s: outputSchema differs from the registry's", got.Name)
				}
				a := got.Annotations
				if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
					t.Errorf("%s: annotations %+v leave hints to MCP's defaults (destructive, open world)", got.Name, a)
					continue
				}
				if h := (hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}); h != want[got.Name] {
					t.Errorf("%s: hints %+v, want %+v", got.Name, h, want[got.Name])
				}
			}
			slices.Sort(names)
			if wantNames := []string{"echo", "flaky", "search", "slow"}; !slices.Equal(names, wantNames) {
				t.Errorf("tools = %v, want %v", names, wantNames)
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string
		// success: fields of structuredContent to check; failure: the code.
		want     map[string]any
		wantCode tool.Code
		// wantText is in the first text content of a failure.
		wantText []string
	}{
		{name: "echo", tool: "echo", args: `{"text":"hello"}`,
			want: map[string]any{"success": true, "summary": "echoed 5 bytes", "text": "hello", "length": 5.0}},
		{name: "defaults applied", tool: "search", args: `{"query":"go"}`,
			want: map[string]any{"success": true, "summary": "5 results", "count": 5.0}},
		{name: "out of range", tool: "search", args: `{"query":"go","count":50}`,
			wantCode: tool.CodeValidation, wantText: []string{"VALIDATION", "count: must be <= 20, got 50"}},
		{name: "several violations", tool: "search", args: `{"query":"g","sort":"up"}`,
			wantCode: tool.CodeValidation, wantText: []string{"query", "sort"}},
		{name: "unknown field", tool: "echo", args: `{"text":"hi","bogus":1}`,
			wantCode: tool.CodeValidation, wantText: []string{"bogus"}},
		{name: "wrong type", tool: "echo", args: `{"text":5}`,
			wantCode: tool.CodeValidation, wantText: []string{"text"}},
		{name: "missing required", tool: "echo", args: `{}`,
			wantCode: tool.CodeValidation, wantText: []string{"text"}},
		{name: "upstream rate limit", tool: "flaky", args: `{}`,
			wantCode: tool.CodeRateLimit, wantText: []string{"RATE_LIMIT", "Rate limit exceeded"}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			cs := connect(t, tr, f.newServer(t, mcpserver.Options{}), nil)
			listed, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
					if err != nil {
						t.Fatalf("a tool outcome must be a result, not a protocol error: %v", err)
					}
					text := texts(res)
					if tt.wantCode != "" {
						checkFailure(t, f, tt.tool, tt.args, res, tt.wantCode, tt.wantText)
						return
					}
					if res.IsError {
						t.Fatalf("isError; content %q", text)
					}
					var schema any
					for _, lt := range listed.Tools {
						if lt.Name == tt.tool {
							schema = lt.OutputSchema
						}
					}
					got := jsonValue(t, res.StructuredContent)
					if err := compile(t, tt.tool+".output", schema).Validate(got); err != nil {
						t.Errorf("structuredContent does not fit the output schema: %v", err)
					}
					var sc map[string]any
					if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &sc); err != nil {
						t.Fatal(err)
					}
					for k, v := range tt.want {
						if !reflect.DeepEqual(sc[k], v) {
							t.Errorf("structuredContent[%q] = %v, want %v", k, sc[k], v)
						}
					}
					if len(text) != 2 || text[0] != sc["summary"] {
						t.Fatalf("text content = %q, want the summary then the JSON", text)
					}
					if !sameJSON(t, json.RawMessage(text[1]), res.StructuredContent) {
						t.Errorf("text JSON %s differs from structuredContent", text[1])
					}
				})
			}
		})
	}
}

// checkFailure checks an isError result: the registry's own message first (the
// CLI prints the same), the failure envelope as JSON text, no structuredContent.
func checkFailure(t *testing.T, f *fixture, name, args string, res *mcp.CallToolResult, code tool.Code, wantText []string) {
	t.Helper()
	text := texts(res)
	if !res.IsError {
		t.Fatalf("isError = false; content %q", text)
	}
	if res.StructuredContent != nil {
		t.Errorf("structuredContent %v on an error: strict clients validate it against the success schema", res.StructuredContent)
	}
	if len(text) != 2 {
		t.Fatalf("text content = %q, want the message then the failure JSON", text)
	}
	for _, w := range wantText {
		if !strings.Contains(text[0], w) {
			t.Errorf("message %q does not mention %q", text[0], w)
		}
	}
	if direct := f.reg.Call(context.Background(), name, json.RawMessage(args)); direct.Err == nil || direct.Err.Error() != text[0] {
		t.Errorf("message %q differs from the registry's %v", text[0], direct.Err)
	}
	var failure struct {
		Success    *bool            `json:"success"`
		Error      string           `json:"error"`
		Code       tool.Code        `json:"error_code"`
		Retryable  bool             `json:"retryable"`
		WasRetried bool             `json:"wasRetried"`
		Violations []tool.Violation `json:"violations"`
	}
	if err := json.Unmarshal([]byte(text[1]), &failure); err != nil {
		t.Fatalf("second text content is not the failure JSON: %v: %s", err, text[1])
	}
	if failure.Success == nil || *failure.Success || failure.Code != code || failure.Error == "" {
		t.Errorf("failure = %+v, want success false, error_code %s", failure, code)
	}
	switch code {
	case tool.CodeValidation:
		if len(failure.Violations) == 0 || failure.Violations[0].Rule == "" {
			t.Errorf("violations = %+v, want each field and rule", failure.Violations)
		}
	case tool.CodeRateLimit:
		if !failure.Retryable || !failure.WasRetried {
			t.Errorf("retryable %v, wasRetried %v: want a retryable failure retried once by the registry", failure.Retryable, failure.WasRetried)
		}
	}
}

func TestCallUnknownToolIsProtocolError(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, transports[0], f.newServer(t, mcpserver.Options{}), nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("err = %v, want a protocol error naming the tool (MCP: an unknown tool is not a tool result)", err)
	}
}

func TestProgressNotifications(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			got := make(chan *mcp.ProgressNotificationParams, 100)
			cs := connect(t, tr, f.newServer(t, mcpserver.Options{}), &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					got <- req.Params
				},
			})
			params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %q", err, texts(res))
			}
			// Notifications are handled apart from the response: collect until
			// the last step. Each step was reported twice; the repeat must not
			// be sent, since MCP requires progress to increase.
			var seq []float64
			for len(seq) == 0 || seq[len(seq)-1] < 3 {
				select {
				case p := <-got:
					if p.ProgressToken != "tok-1" || p.Total != 3 || p.Message == "" {
						t.Errorf("notification %+v, want token tok-1, total 3 and a message", p)
					}
					seq = append(seq, p.Progress)
				case <-time.After(waitLimit):
					t.Fatalf("progress so far %v; the last step never arrived", seq)
				}
			}
			if !slices.Equal(seq, []float64{1, 2, 3}) {
				t.Errorf("progress = %v, want [1 2 3]", seq)
			}
		})
	}
}

func TestCancellationReachesTool(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			cs := connect(t, tr, f.newServer(t, mcpserver.Options{}), nil)
			defer close(f.release)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			callErr := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 1, "hang": true}})
				callErr <- err
			}()
			select {
			case <-f.started:
			case <-time.After(waitLimit):
				t.Fatal("the tool never started")
			}
			cancel()
			select {
			case err := <-f.stopped:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the tool's context ended with %v, want context.Canceled", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the tool never saw the cancellation")
			}
			if err := <-callErr; !errors.Is(err, context.Canceled) {
				t.Errorf("client call returned %v, want context.Canceled", err)
			}
		})
	}
}

func TestSelection(t *testing.T) {
	tests := []struct {
		name    string
		opts    mcpserver.Options
		want    []string
		wantErr string
	}{
		{name: "all", want: []string{"echo", "flaky", "search", "slow"}},
		{name: "one pack", opts: mcpserver.Options{Packs: []string{"alpha"}}, want: []string{"echo", "search"}},
		{name: "named tools", opts: mcpserver.Options{Tools: []string{"flaky", "echo"}}, want: []string{"echo", "flaky"}},
		{name: "pack and tool", opts: mcpserver.Options{Packs: []string{"beta"}, Tools: []string{"slow", "echo"}}, want: []string{"slow"}},
		{name: "unknown pack", opts: mcpserver.Options{Packs: []string{"gamma"}}, wantErr: `unknown pack "gamma"`},
		{name: "unknown tool", opts: mcpserver.Options{Tools: []string{"ehco"}}, wantErr: `unknown tool "ehco"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			srv, err := mcpserver.New(f.reg, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, transports[0], srv, nil)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, lt := range res.Tools {
				names = append(names, lt.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools = %v, want %v", names, tt.want)
			}
			for _, name := range []string{"echo", "flaky", "search", "slow"} {
				if slices.Contains(tt.want, name) {
					continue
				}
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name}); err == nil {
					t.Errorf("%s is not exposed but could be called", name)
				}
			}
		})
	}
}

func TestNewRejectsInvalidToolName(t *testing.T) {
	reg := tool.NewRegistry()
	bad := tool.Must(tool.New(tool.Spec{Name: "web search", Description: "has a space"},
		func(ctx context.Context, in echoIn) (echoOut, error) { return echoOut{}, nil }))
	if err := reg.Register(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpserver.New(reg, mcpserver.Options{}); err == nil || !strings.Contains(err.Error(), "web search") {
		t.Errorf("New err = %v, want an error naming the tool", err)
	}
}

func TestTextContentIsBounded(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, transports[0], f.newServer(t, mcpserver.Options{MaxTextBytes: 64}), nil)
	long := strings.Repeat("é", 100) // 200 bytes: the cut falls inside the JSON text
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": long}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %q", err, texts(res))
	}
	text := texts(res)
	if len(text) != 2 {
		t.Fatalf("text content = %q", text)
	}
	if !strings.Contains(text[1], "truncated") || len(text[1]) > 64+200 {
		t.Errorf("text JSON is not bounded: %q", text[1])
	}
	if !utf8.ValidString(text[1]) {
		t.Errorf("the cut split a character: %q", text[1])
	}
	var sc struct{ Text string }
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &sc); err != nil || sc.Text != long {
		t.Errorf("structuredContent was cut too: %v %q", err, sc.Text)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// sameJSON reports whether a and b encode the same JSON value.
func sameJSON(t testing.TB, a, b any) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(mustJSON(t, a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(t, b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
