package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolport/toolport/internal/testexec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// upstreams starts local servers that replay recorded CKAN and Brave
// responses and serve a small article, and returns the environment that
// points toolport at them.
func upstreams(t *testing.T) map[string]string {
	t.Helper()
	search, err := os.ReadFile("../../ckan/testdata/demo.ckan.org/package_search_rows3_facets.json")
	if err != nil {
		t.Fatal(err)
	}
	brave, err := os.ReadFile("../../brave/testdata/web_search_what_is_semantic_kernel.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/3/action/package_search":
			w.Header().Set("Content-Type", "application/json")
			w.Write(search)
		case r.URL.Path == "/api/3/action/package_show":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<html>Internal Server Error</html>`)
		case r.URL.Path == "/res/v1/web/search":
			w.Header().Set("Content-Type", "application/json")
			w.Write(brave)
		case r.URL.Path == "/article":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Rivers</title></head><body><article><h1>Rivers</h1><p>Rivers carry water from the mountains to the sea, shaping valleys as they go.</p><p>Every river has a source, a course and a mouth, and most have tributaries.</p></article></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return map[string]string{
		"CKAN_BASE_URL": srv.URL, "BRAVE_API_KEY": "test-key", "BRAVE_API_BASE_URL": srv.URL,
		"TOOLPORT_FETCH_ALLOW_PRIVATE": "1", "ARTICLE_URL": srv.URL + "/article",
		// Every Brave tool, so that the MCP clients list them all (issue 19).
		"TOOLPORT_BRAVE_TOOLS": "all",
	}
}

func mcpCommand(t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(toolport(t), append([]string{"mcp"}, args...)...)
	cmd.Env = testexec.Env(t, env)
	return cmd
}

func TestMCPOverStdioWithTheGoSDK(t *testing.T) {
	env := upstreams(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport-e2e", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: mcpCommand(t, env, "--packs", "web,ckan")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkTools(ctx, t, cs, env)
}

// checkTools lists the tools a session offers and calls some of each pack
// against the local upstreams.
func checkTools(ctx context.Context, t *testing.T, cs *mcp.ClientSession, env map[string]string) {
	t.Helper()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range listed.Tools {
		names[tl.Name] = true
		for what, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
			raw, _ := json.Marshal(s)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			c.AddResource("s.json", doc)
			if _, err := c.Compile("s.json"); err != nil {
				t.Errorf("%s %s schema invalid: %v", tl.Name, what, err)
			}
		}
		// The playlist tools write (a stored playlist, the user's TIDAL
		// account); every other tool only reads.
		writes := tl.Name == "suggestPlaylist" || tl.Name == "savePlaylistToTidal"
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint == writes {
			t.Errorf("%s: readOnlyHint %v, want %v", tl.Name, tl.Annotations != nil && tl.Annotations.ReadOnlyHint, !writes)
		}
	}
	for _, want := range []string{"web_fetch", "web_search_brave", "web_search_google", "searchDatasets", "listTags",
		"local_search_brave", "llm_context_brave", "answer_brave"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}

	tests := []struct {
		tool    string
		args    map[string]any
		isError bool
		want    string // in the text content
	}{
		{tool: "searchDatasets", args: map[string]any{"query": "תחבורה", "rows": 3}, want: `"success":true`},
		{tool: "web_search_brave", args: map[string]any{"query": "semantic kernel", "count": 2}, want: `2 results for "semantic kernel"`},
		{tool: "web_fetch", args: map[string]any{"url": env["ARTICLE_URL"]}, want: "Rivers carry water"},
		{tool: "searchDatasets", args: map[string]any{"query": "x", "rows": 5000}, isError: true, want: "rows: must be <= 1000, got 5000"},
		{tool: "getDatasetDetails", args: map[string]any{"id": "some-dataset"}, isError: true, want: `"error_code":"HTTP_ERROR"`},
	}
	for _, tt := range tests {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s: %v", tt.tool, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if res.IsError != tt.isError || !strings.Contains(text.String(), tt.want) {
			t.Errorf("%s: isError=%v, text lacks %q:\n%s", tt.tool, res.IsError, tt.want, text.String())
		}
		if !tt.isError && res.StructuredContent == nil {
			t.Errorf("%s: no structuredContent", tt.tool)
		}
	}
}

// connectHTTP opens an MCP session over streamable HTTP with a bearer token.
func connectHTTP(ctx context.Context, t *testing.T, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolport-e2e", Version: "v0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func latestProtocolVersion() string { return mcp.SupportedProtocolVersions()[0] }

// TestMCPInspectorCLI checks interoperability with a client nobody here wrote:
// the official MCP Inspector in CLI mode (installed by scripts/test).
func TestMCPInspectorCLI(t *testing.T) {
	npm := testexec.NPMTools(t)
	env := upstreams(t)
	bin := toolport(t)
	run := func(args ...string) (map[string]any, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		full := append([]string{"--cli"}, args...)
		for k, v := range env {
			full = append(full, "-e", k+"="+v)
		}
		full = append(full, "--", bin, "mcp", "--packs", "web,ckan")
		out, _ := npm.Inspector(ctx, t, full...).Output() // a tool error exits non-zero; the JSON says what happened
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("inspector %v printed no JSON: %v\n%s", args, err, out)
		}
		return v, string(out)
	}

	listed, raw := run("--method", "tools/list")
	tools, _ := listed["tools"].([]any)
	if len(tools) < 9 || !strings.Contains(raw, `"name": "web_fetch"`) || !strings.Contains(raw, `"name": "answer_brave"`) ||
		!strings.Contains(raw, `"name": "local_search_brave"`) || !strings.Contains(raw, `"name": "llm_context_brave"`) {
		t.Errorf("tools/list via the Inspector: %d tools\n%.500s", len(tools), raw)
	}

	called, raw := run("--method", "tools/call", "--tool-name", "searchDatasets", "--tool-arg", "query=transport")
	if called["isError"] == true || !strings.Contains(raw, `\"success\":true`) {
		t.Errorf("tools/call via the Inspector:\n%.800s", raw)
	}

	failed, raw := run("--method", "tools/call", "--tool-name", "web_fetch", "--tool-arg", "url=ftp://example.com/")
	if failed["isError"] != true || !strings.Contains(raw, "INVALID_URL") {
		t.Errorf("failing call via the Inspector:\n%.800s", raw)
	}
}
